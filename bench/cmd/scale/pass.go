package main

import (
	"context"
	"fmt"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// poller is the dashboard's feed: Poll, with every batch applied to a
// Store as the ui does.
type poller struct {
	feed   chan model.Batch
	polled chan error
	cancel context.CancelFunc
	store  *model.Store
	start  time.Time
}

func startPoller(ctx context.Context, client *redisclient.Client, o redisclient.PollOptions) *poller {
	ctx, cancel := context.WithCancel(ctx)
	rules := model.Rules{Fallback: model.Rule{ExpectTTL: true}}
	p := &poller{
		feed:   make(chan model.Batch, 64), // as the dashboard's
		polled: make(chan error, 1),
		cancel: cancel,
		store:  model.NewStore(&rules),
		start:  time.Now(),
	}
	go func() { p.polled <- client.Poll(ctx, o, p.feed) }()
	return p
}

// stop stops the poller and waits for it to return.
func (p *poller) stop() { p.cancel(); <-p.polled }

// next applies the next batch to the store and returns it. Its error says
// the poller stopped or could not read; the poller is stopped then.
func (p *poller) next() (model.Batch, error) {
	var b model.Batch
	select {
	case b = <-p.feed:
	case err := <-p.polled:
		p.cancel()
		return b, fmt.Errorf("the poller stopped: %v", err)
	}
	p.store.Apply(b)
	if b.State != nil && b.State.LastError != "" {
		p.stop()
		return b, fmt.Errorf("the poller could not read: %s", b.State.LastError)
	}
	return b, nil
}

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

// firstPass follows p until its first discovery pass is over.
func (p *poller) firstPass() (r passReport, err error) {
	scanning := false
	for {
		b, err := p.next()
		if err != nil {
			return r, err
		}
		if r.firstRows == 0 && len(b.Observed) > 0 {
			r.firstRows = time.Since(p.start)
		}
		if b.State == nil {
			continue
		}
		if b.State.Scanning {
			scanning = true
			r.progress = append(r.progress, progress{time.Since(p.start), b.State.Seen, b.State.Matched})
		} else if scanning {
			r.done, r.keys = time.Since(p.start), p.store.Len()
			return r, nil
		}
	}
}

// firstPass polls patterns the way the dashboard does until the first
// discovery pass is over. The poller is left waiting for its next cycle
// (an hour away) until stop is called, so that what it holds can be
// measured.
func firstPass(ctx context.Context, client *redisclient.Client, patterns []string) (r passReport, store *model.Store, stop func(), err error) {
	p := startPoller(ctx, client, redisclient.PollOptions{Patterns: patterns, Interval: time.Hour})
	if r, err = p.firstPass(); err != nil {
		return r, nil, nil, err
	}
	return r, p.store, p.stop, nil
}
