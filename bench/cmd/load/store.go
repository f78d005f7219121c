package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
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
func storeLatency(ctx context.Context, cfg config, addr, mode string) (storeFigures, error) {
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
	s := newFollower()
	applied := make(chan struct{})
	go func() { s.follow(feed); close(applied) }()
	defer func() {
		cancel()
		<-watched
		close(feed)
		<-applied
	}()
	if !s.waitFor(func() bool { return s.store.Len() >= cfg.matching }) {
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
	if !s.waitFor(func() bool { return s.holdsAll(incrs) }) {
		return f, fmt.Errorf("the store never caught up with the increments")
	}
	f.lat = s.latencies(incrs)
	f.changes = fmt.Sprintf("%d INCRs", len(incrs))
	return f, nil
}

func (f storeFigures) String() string {
	return fmt.Sprintf("%s (%s; the first pass took %.1f s)", f.lat, f.changes, f.firstRun.Seconds())
}

// follower applies the feed to a model.Store as the ui does, and notes
// when each key first held each value.
type follower struct {
	mu      sync.Mutex
	changed *sync.Cond
	store   *model.Store
	arrived map[string][]arrival // per key, in the order they came
}

type arrival struct {
	value int64
	at    int64 // Unix nanoseconds
}

func newFollower() *follower {
	s := &follower{store: model.NewStore(&model.Rules{}), arrived: make(map[string][]arrival)}
	s.changed = sync.NewCond(&s.mu)
	return s
}

// follow applies batches until feed is closed.
func (s *follower) follow(feed <-chan model.Batch) {
	for b := range feed {
		s.mu.Lock()
		s.store.Apply(b)
		now := time.Now().UnixNano()
		for _, o := range b.Observed {
			v, err := strconv.ParseInt(o.Raw, 10, 64)
			if err != nil {
				continue // a hash: no counter
			}
			if a := s.arrived[o.Key]; len(a) == 0 || a[len(a)-1].value != v {
				s.arrived[o.Key] = append(a, arrival{v, now})
			}
		}
		s.changed.Broadcast()
		s.mu.Unlock()
	}
}

// holdsAll reports whether the store holds every value incrs returned or
// a later one. s must be locked.
func (s *follower) holdsAll(incrs []incr) bool {
	for _, in := range incrs {
		c, _ := s.store.Get(in.key)
		if v, ok := c.Value.Number(); !ok || int64(v) < in.value {
			return false
		}
	}
	return true
}

// latencies is, for each of incrs, how long after its reply the store
// first held its value or a later one; 0 when it had it before the reply
// reached the generator.
func (s *follower) latencies(incrs []incr) measure.Latencies {
	s.mu.Lock()
	defer s.mu.Unlock()
	lat := make(measure.Latencies, len(incrs))
	for i, in := range incrs {
		a := s.arrived[in.key]
		j := slices.IndexFunc(a, func(a arrival) bool { return a.value >= in.value })
		lat[i] = time.Duration(max(0, a[j].at-in.at))
	}
	slices.Sort(lat)
	return lat
}

// waitFor waits until cond holds, called with s locked; false when that
// takes longer than settleTimeout.
func (s *follower) waitFor(cond func() bool) bool {
	var timedOut bool
	timer := time.AfterFunc(settleTimeout, func() {
		s.mu.Lock()
		timedOut = true
		s.changed.Broadcast()
		s.mu.Unlock()
	})
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for !cond() {
		if timedOut {
			return false
		}
		s.changed.Wait()
	}
	return true
}
