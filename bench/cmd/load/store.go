package main

import (
	"context"
	"fmt"
	"time"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/bench/seed"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// storeFigures is how long INCRs took to reach the store.
type storeFigures struct {
	lat      measure.Latencies
	changes  string
	firstRun time.Duration // the watcher's first pass, before the changes
}

// settleTimeout bounds the waits for the store: the first pass at the
// budget, and catching up once the changes stop.
const settleTimeout = 2 * time.Minute

// storeLatency watches the pattern in mode with redisclient's watcher in
// this process, as the dashboard does (the same budget, every other
// option at its default), applying each batch to a model.Store, while
// cfg.rate INCRs a second hit the counters for cfg.duration: for each, the
// delay from its reply to the store first holding that value or a later
// one. addr is the Redis's, for the generator.
func storeLatency(ctx context.Context, cfg config, addr string, mode model.WatchMode) (storeFigures, error) {
	var f storeFigures
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: cfg.url, MaxCommands: cfg.budget})
	if err != nil {
		return f, err
	}
	defer c.Close()
	ctx, cancel := context.WithCancel(ctx)
	feed := make(chan model.Batch, 64) // as the dashboard makes it
	watched := make(chan error, 1)
	start := time.Now()
	go func() {
		watched <- c.Watch(ctx, redisclient.WatchOptions{Mode: mode, ResyncEvery: cfg.resyncEvery, PollOptions: redisclient.PollOptions{Patterns: []string{seed.Pattern}}}, feed)
	}()
	s := measure.NewFollower()
	applied := make(chan struct{})
	go func() { s.Follow(feed); close(applied) }()
	defer func() {
		cancel()
		<-watched
		close(feed)
		<-applied
	}()
	if !s.WaitFor(settleTimeout, func(st *model.Store) bool { return st.Len() >= cfg.matching }) {
		return f, fmt.Errorf("the store never held the %d counters", cfg.matching)
	}
	f.firstRun = time.Since(start)
	g, err := startGenerator(addr, int(cfg.duration.Seconds()*float64(cfg.rate)), cfg.matching, cfg.hashEvery, cfg.rate, true)
	if err != nil {
		return f, err
	}
	incrs, err := g.incrs()
	if err != nil {
		return f, err
	}
	if !s.WaitFor(settleTimeout, measure.HoldsAll(incrs)) {
		return f, fmt.Errorf("the store never caught up with the increments")
	}
	f.lat = s.Latencies(incrs)
	f.changes = fmt.Sprintf("%d INCRs", len(incrs))
	return f, nil
}

func (f storeFigures) String() string {
	return fmt.Sprintf("%s (%s; the first pass took %.1f s)", f.lat, f.changes, f.firstRun.Seconds())
}
