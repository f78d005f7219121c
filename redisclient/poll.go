package redisclient

import (
	"context"
	"maps"
	"slices"
	"time"

	"github.com/countertop/countertop/model"
)

// Backoff between attempts while Redis cannot be reached: quick to notice it
// is back, gentle on a server that is struggling.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// nextBackoff is the wait after another failure in a row, given the last
// wait (0 after a success).
func nextBackoff(last time.Duration) time.Duration {
	return min(max(2*last, minBackoff), maxBackoff)
}

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
		return errNoPatterns
	}
	c.newReader(o.withDefaults(), out).poll(ctx)
	return nil
}

// poll cycles until ctx is done.
func (r *reader) poll(ctx context.Context) {
	r.mode = "polling"
	r.state.Mode, r.state.Interval, r.state.Connected = r.mode, r.o.Interval, true
	var nextDiscovery time.Time // zero: due now
	var backoff time.Duration
	for {
		start := time.Now()
		var err error
		if start.Before(nextDiscovery) {
			err = r.fetch(ctx, slices.Collect(maps.Keys(r.known)))
		} else if err = r.discover(ctx); err == nil {
			nextDiscovery = start.Add(r.o.DiscoverEvery)
		}
		if ctx.Err() != nil {
			return
		}

		wait := r.o.Interval - time.Since(start)
		if err == nil {
			backoff = 0
		} else {
			backoff = nextBackoff(backoff)
			wait = backoff
			nextDiscovery = time.Time{} // keys may have changed while we could not look
			r.failed(err)
			if r.emit(ctx, model.Batch{}) != nil {
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
