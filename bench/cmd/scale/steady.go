package main

import (
	"context"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/redisclient"
)

// steadyReport is the dashboard's poller at its default 1 s interval once
// its first pass is over: how often it reads a known key again while
// discovery passes go on, and what the passes cost Redis.
type steadyReport struct {
	window   time.Duration
	periods  latencies     // between two reads of the same key
	passes   int           // passes that ended in the window
	scanning time.Duration // how long, of the window, a pass was under way
	server   serverStats   // what Redis did in the window
	ping     latencies     // another client's PING meanwhile
}

// steadyKeys is how many keys' reads are timed: a sample, evenly spread.
const steadyKeys = 1000

// steadyPoll polls pattern as the dashboard does by default and, once the
// first pass is over, watches it for window.
func steadyPoll(ctx context.Context, rdb *redis.Client, opt *redis.Options, client *redisclient.Client, pattern string, window time.Duration) (s steadyReport, err error) {
	p := startPoller(ctx, client, redisclient.PollOptions{Patterns: []string{pattern}})
	defer p.stop()
	if _, err := p.firstPass(); err != nil {
		return s, err
	}
	last := map[string]time.Time{}
	for _, c := range sample(p.store.Rows(0, p.store.Len()), steadyKeys) {
		last[c.Key] = time.Time{}
	}
	before, err := readStats(ctx, rdb)
	if err != nil {
		return s, err
	}
	probe, err := startProbe(ctx, opt)
	if err != nil {
		return s, err
	}
	start := time.Now()
	scanning, since := false, start
	for time.Since(start) < window {
		b, err := p.next()
		if err != nil {
			probe.End()
			return s, err
		}
		for _, o := range b.Observed {
			if at, ok := last[o.Key]; ok {
				if !at.IsZero() {
					s.periods = append(s.periods, o.At.Sub(at))
				}
				last[o.Key] = o.At
			}
		}
		if b.State != nil && b.State.Scanning != scanning {
			if scanning {
				s.passes++
				s.scanning += time.Since(since)
			}
			scanning, since = b.State.Scanning, time.Now()
		}
	}
	s.window = time.Since(start)
	if scanning {
		s.scanning += time.Since(since)
	}
	s.ping = probe.End()
	after, err := readStats(ctx, rdb)
	if err != nil {
		return s, err
	}
	s.server = after.since(before)
	slices.Sort(s.periods)
	return s, nil
}
