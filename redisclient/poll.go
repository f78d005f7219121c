package redisclient

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// Backoff between attempts while Redis cannot be reached: quick to notice it
// is back, gentle on a server that is struggling.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// PollOptions says what Poll watches and how often.
type PollOptions struct {
	Patterns []string      // globs to SCAN for
	Interval time.Duration // how often every known key is read again (default 1s)
	// DiscoverEvery is how often a SCAN pass looks for new and deleted keys
	// (0: every Interval). At millions of keys, discovery can run far slower
	// than the refresh of the keys already known.
	DiscoverEvery time.Duration
	ScanCount     int64 // SCAN's COUNT hint (default 1000)
	BatchSize     int   // keys per pipeline (default 500)
}

func (o PollOptions) withDefaults() PollOptions {
	if o.Interval <= 0 {
		o.Interval = time.Second
	}
	if o.DiscoverEvery <= 0 {
		o.DiscoverEvery = o.Interval
	}
	if o.ScanCount <= 0 {
		o.ScanCount = defaultScanCount
	}
	if o.BatchSize <= 0 {
		o.BatchSize = defaultBatchSize
	}
	return o
}

// Poll watches the keys matching o.Patterns and sends what it reads to out
// until ctx is done, then returns nil. Each Interval it reads every known
// key again; when discovery is due it SCANs instead, sending each page's
// keys as soon as they are read, then reads the known keys the pass did not
// find, so that deleted keys are sent as Removed. The feed's state goes
// along with a batch whenever it changed. When Redis cannot be reached, Poll
// says so in the state and retries with backoff, resuming with a full
// discovery pass.
func (c *Client) Poll(ctx context.Context, o PollOptions, out chan<- model.Batch) error {
	if len(o.Patterns) == 0 {
		return explained("there is no key pattern to watch — pass --pattern or add a [[rule]] to the config", nil)
	}
	p := &poller{
		c:     c,
		o:     o.withDefaults(),
		out:   out,
		known: make(map[string]struct{}),
	}
	p.state = model.FeedState{
		Mode:      "polling",
		Interval:  p.o.Interval,
		Addr:      c.addr,
		Topology:  c.topology,
		Connected: true,
	}
	p.run(ctx)
	return nil
}

type poller struct {
	c     *Client
	o     PollOptions
	out   chan<- model.Batch
	known map[string]struct{} // keys that existed when last read
	state model.FeedState     // as it is now
	sent  model.FeedState     // as the dashboard last received it
}

// run cycles until ctx is done.
func (p *poller) run(ctx context.Context) {
	var nextDiscovery time.Time // zero: due now
	var backoff time.Duration
	for {
		start := time.Now()
		var err error
		if start.Before(nextDiscovery) {
			err = p.fetch(ctx, slices.Collect(maps.Keys(p.known)))
		} else if err = p.discover(ctx); err == nil {
			nextDiscovery = start.Add(p.o.DiscoverEvery)
		}
		if ctx.Err() != nil {
			return
		}

		wait := p.o.Interval - time.Since(start)
		if err == nil {
			backoff = 0
		} else {
			backoff = min(max(2*backoff, minBackoff), maxBackoff)
			wait = backoff
			nextDiscovery = time.Time{} // keys may have changed while we could not look
			p.failed(err)
			if p.emit(ctx, model.Batch{}) != nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// discover runs one SCAN pass, reading and sending the keys of each page,
// then reads the known keys the pass did not find.
func (p *poller) discover(ctx context.Context) error {
	p.state.Scanning, p.state.Seen, p.state.Matched = true, 0, 0
	if err := p.emit(ctx, model.Batch{}); err != nil {
		return err
	}
	pass := newScanPass()
	err := p.c.scan(ctx, p.c.rdb, p.o.Patterns, p.o.ScanCount, pass, func(keys []string) error {
		p.state.Seen, p.state.Matched = pass.returned, int64(len(pass.found))
		return p.fetch(ctx, keys)
	})
	if err != nil {
		return err
	}
	p.state.Seen, p.state.Matched = pass.returned, int64(len(pass.found))
	p.state.Scanning = false
	p.healthy()

	// SCAN returns every key that existed for the whole pass, so a known key
	// it missed was deleted, or replaced during the pass: reading it tells.
	var missed []string
	for k := range p.known {
		if _, ok := pass.found[k]; !ok {
			missed = append(missed, k)
		}
	}
	if err := p.fetch(ctx, missed); err != nil {
		return err
	}
	return p.emit(ctx, model.Batch{})
}

// fetch reads keys in pipelined chunks and sends each chunk as a Batch:
// keys that exist as Observed, keys that are gone as Removed.
func (p *poller) fetch(ctx context.Context, keys []string) error {
	return p.c.fetch(ctx, keys, p.o.BatchSize, func(obs []model.Observation) error {
		b := model.Batch{Observed: obs[:0]} // obs is ours: partition it in place
		for _, o := range obs {
			if o.PTTL == model.PTTLMissing {
				b.Removed = append(b.Removed, o.Key)
				delete(p.known, o.Key)
			} else {
				b.Observed = append(b.Observed, o)
				p.known[o.Key] = struct{}{}
			}
		}
		p.healthy()
		return p.emit(ctx, b)
	})
}

// healthy records that Redis just answered.
func (p *poller) healthy() {
	p.state.Mode = "polling"
	p.state.Connected = true
	p.state.LastError = ""
	p.state.UpdatedAt = time.Now()
}

// failed records err, already explained. An error reply means Redis is
// there but refused (NOPERM, LOADING, ...); anything else means it could
// not be reached.
func (p *poller) failed(err error) {
	var reply redis.Error
	p.state.Connected = errors.As(err, &reply)
	if !p.state.Connected {
		p.state.Mode = "reconnecting"
	}
	p.state.LastError = err.Error()
	p.state.Scanning = false
}

// emit sends b, with the feed's state when it changed since last sent;
// nothing when there is nothing to say. It gives up when ctx is done.
func (p *poller) emit(ctx context.Context, b model.Batch) error {
	if p.state != p.sent {
		s := p.state
		b.State = &s
		p.sent = s
	}
	if len(b.Observed) == 0 && len(b.Removed) == 0 && b.State == nil {
		return nil
	}
	select {
	case p.out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
