package main

import (
	"context"
	"fmt"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// passReport is what the dashboard sees of its first discovery pass over
// a large keyspace: when the first rows arrive, how the header's progress
// moves, and when the pass ends.
type passReport struct {
	firstRows time.Duration // the first batch with keys in it
	progress  []progress    // every scanning state the header was sent
	done      time.Duration // the state that says the pass is over
	keys      int           // keys in the Store then
}

type progress struct {
	at            time.Duration
	seen, matched int64
}

// firstPass polls patterns the way the dashboard does, applying every batch
// to a Store, until the first discovery pass is over. The poller is left
// waiting for its next cycle (an hour away) until stop is called, so that
// what it holds can be measured.
func firstPass(ctx context.Context, client *redisclient.Client, patterns []string) (r passReport, store *model.Store, stop func(), err error) {
	ctx, cancel := context.WithCancel(ctx)
	feed := make(chan model.Batch, 64) // as the dashboard's
	polled := make(chan error, 1)
	go func() {
		polled <- client.Poll(ctx, redisclient.PollOptions{Patterns: patterns, Interval: time.Hour}, feed)
	}()
	stop = func() { cancel(); <-polled }

	rules := model.Rules{Fallback: model.Rule{ExpectTTL: true}}
	store = model.NewStore(&rules)
	start := time.Now()
	scanning := false
	for {
		var b model.Batch
		select {
		case b = <-feed:
		case err := <-polled:
			cancel()
			return r, nil, nil, fmt.Errorf("the poller stopped: %v", err)
		}
		store.Apply(b)
		if r.firstRows == 0 && len(b.Observed) > 0 {
			r.firstRows = time.Since(start)
		}
		if b.State == nil {
			continue
		}
		if b.State.LastError != "" {
			stop()
			return r, nil, nil, fmt.Errorf("the poller could not read: %s", b.State.LastError)
		}
		if b.State.Scanning {
			scanning = true
			r.progress = append(r.progress, progress{time.Since(start), b.State.Seen, b.State.Matched})
		} else if scanning {
			r.done, r.keys = time.Since(start), store.Len()
			return r, store, stop, nil
		}
	}
}
