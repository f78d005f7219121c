package redisclient

import (
	"cmp"
	"context"
	"time"

	"github.com/countertop/countertop/model"
)

// Backoff between attempts while Redis cannot be reached: quick to notice it
// is back, gentle on a server that is struggling.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 5 * time.Second
)

// nextBackoff returns the wait after another failure in a row, given the last
// wait (0 after a success).
func nextBackoff(last time.Duration) time.Duration {
	return min(max(2*last, minBackoff), maxBackoff)
}

// PollOptions says what Poll watches and how often.
type PollOptions struct {
	Patterns []string      // globs to SCAN for
	Interval time.Duration // how often every known key is read again (default 1s)
	// DiscoverEvery is how often a discovery pass (SCAN) begins, to find new
	// and deleted keys (0: every Interval). A pass gets a quarter of each
	// Interval: at millions of keys it takes many intervals, and the next
	// begins when it ends or DiscoverEvery after it began, whichever is later.
	DiscoverEvery time.Duration
	ScanCount     int64 // SCAN's COUNT hint (default 1000)
	BatchSize     int   // keys per pipeline (default 500)
	// Shown, when not nil, brings the keys on screen whenever they change:
	// under the budget (Options.MaxCommands) they are read first every
	// interval, and the others in turn. The sender never waits (see
	// OfferShown).
	Shown <-chan []string

	scanBudget time.Duration // overrides Interval/4, for tests
}

// withDefaults returns o with every unset field at its default.
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
	if o.scanBudget <= 0 {
		o.scanBudget = o.Interval / 4
	}
	return o
}

// Poll watches the keys matching o.Patterns and sends what it reads to out
// until ctx is done, then returns nil. Every Interval it reads each known
// key again, then takes discovery on, SCAN after SCAN, for up to a quarter
// of the interval, reading and sending each new key SCAN finds. So the
// refresh keeps its pace however long a pass takes, and Redis spends at
// most about a quarter of its time on countertop's SCANs. Once a pass ends,
// Poll reads the known keys it did not find, so that deleted keys are sent
// as Removed. Until a key is known (at start-up), a pass goes on to its
// end, sending each page's keys as soon as they are read. The feed's state
// goes along with a batch whenever it changed. When Redis cannot be
// reached, Poll says so in the state and retries with backoff, beginning a
// new pass.
func (c *Client) Poll(ctx context.Context, o PollOptions, out chan<- model.Batch) error {
	if len(o.Patterns) == 0 {
		return errNoPatterns
	}
	c.newReader(o.withDefaults(), out).poll(ctx)
	return nil
}

// poll cycles until ctx is done, or until r.recheck says to stop. It may
// take over from an event watcher that found the notifications off: what
// that watcher said was wrong (a subscription down) is not polling's
// concern, and is no longer so.
func (r *reader) poll(ctx context.Context) {
	r.mode, r.phase, r.outage = model.WatchPoll, model.FeedWatching, ""
	r.showMode()
	r.state.Interval, r.state.Connected, r.state.LastError = r.o.Interval, true, ""
	var p pacer
	var backoff time.Duration
	var reread time.Time // when a failure last had the topology read again
	rechecked := time.Now()
	for {
		start := time.Now()
		round := r.turns.len() // the keys found from now on were just read
		shown := r.onScreen()
		read, err := r.fetch(ctx, shown, false)
		// In a cluster, a master down leaves the others' keys read: their
		// new keys are looked for too, in a pass that will not take the
		// known keys it misses for deleted (see discovery.failed).
		partial := err != nil && read && r.c.kind == cluster
		if err == nil || partial {
			derr := r.discoverSome(ctx, &p, start, err)
			// A pass that left a master out leaves the others' keys to read.
			if derr == nil || r.c.kind == cluster {
				more, rerr := r.readInTurn(ctx, round, shown, start.Add(r.o.Interval))
				read, derr = read || more, cmp.Or(derr, rerr)
			}
			err = cmp.Or(err, derr)
			partial = err != nil && read && r.c.kind == cluster
		}
		if ctx.Err() != nil {
			return
		}
		if r.recheck != nil && err == nil && time.Since(rechecked) >= recheckIntervals*r.o.Interval {
			rechecked = time.Now()
			if r.recheck(ctx) {
				return
			}
		}

		wait := r.o.Interval - time.Since(start)
		if err == nil {
			backoff = 0
			// A cycle that read all it set out to ends an outage, unless the
			// pass under way left a master out.
			if r.state.LastError != r.outage && (p.pass == nil || p.pass.failed == nil) {
				r.healthy()
				if r.emit(ctx, model.Batch{}) != nil {
					return
				}
			}
		} else {
			if partial {
				// Some masters answered: their rows stay live, a cycle
				// every interval, while the others are tried again each
				// time (see Client.onMaster for one that hangs). A cycle
				// that overran the interval still waits a little.
				backoff = 0
				wait = max(wait, min(r.o.Interval, minBackoff))
			} else {
				backoff = nextBackoff(backoff)
				wait = backoff
				p = pacer{passed: p.passed} // keys may have changed while we could not look: a new pass, at once
			}
			r.failed(err)
			if !partial || time.Since(reread) >= partialTopologyEvery {
				r.rereadTopology(ctx)
				reread = time.Now()
			}
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

// partialTopologyEvery is how often the topology is read again while some
// masters of a cluster answer and others do not: the cycles come every
// interval then, and a read of the topology can wait on a node that hangs
// (see outageTopologyTimeout).
const partialTopologyEvery = 5 * time.Second

// pacer is where polling's discovery stands: the pass under way, and when
// the next may begin.
type pacer struct {
	pass   *discovery // under way; nil between passes
	next   time.Time  // when the next pass may begin; zero: at once
	passed bool       // a pass has ended, since polling began or Redis last failed
}

// discoverSome takes a poll cycle's share of discovery, in the cycle that
// began at now: it begins a pass when one is due, and takes the pass under
// way on for the budget, or to its end while no key is known. missed is
// why the cycle could not read some known keys (nil when it read them
// all): the pass then counts as one that left a master out.
func (r *reader) discoverSome(ctx context.Context, p *pacer, now time.Time, missed error) error {
	if p.pass == nil {
		if now.Before(p.next) {
			return missed
		}
		d, err := r.startDiscovery(ctx, false)
		if err != nil {
			return err
		}
		p.pass, p.next = d, now.Add(r.o.DiscoverEvery)
	}
	if missed != nil {
		p.pass.failed = cmp.Or(p.pass.failed, missed)
	}
	budget := r.o.scanBudget
	switch {
	case r.c.budget.limited() && !p.passed:
		// Under a budget of commands a first pass of many keys takes many
		// intervals: it has all of each but the rows on screen, which are
		// read first.
		budget = r.o.Interval
	case len(r.known) == 0:
		budget = 0
	}
	ended, err := r.advance(ctx, p.pass, budget)
	if ended {
		p.pass, p.passed = nil, err == nil
	}
	return err
}

// inTurnChunk is how many pipelines' worth of keys readInTurn reads at a
// time: enough for fetch to keep its pipelines in flight.
const inTurnChunk = fetchAhead

// readInTurn reads the known keys least recently read, up to round of them
// (one of each, when round is as many as turns held when the cycle began),
// and puts them back at the end of the queue; it leaves out the keys in
// shown, read already. Under a budget it stops once until has passed, and
// the next cycle goes on where it stopped. It reports whether any key was
// read, as fetch does.
func (r *reader) readInTurn(ctx context.Context, round int, shown []string, until time.Time) (read bool, err error) {
	limited := r.c.budget.limited()
	size := inTurnChunk * r.o.BatchSize
	if !limited {
		size *= 8 // fewer calls; fetch pipelines them the same
	}
	skip := make(map[string]bool, len(shown))
	for _, k := range shown {
		skip[k] = true
	}
	var later []string // shown keys taken from the queue, to go back unread
	defer func() {
		for _, k := range later {
			if r.isKnown(k) {
				r.known[k] = r.turns.push(k)
			}
		}
	}()
	for round > 0 && (!limited || time.Now().Before(until)) {
		chunk := make([]string, 0, min(size, round))
		for len(chunk) < size && round > 0 {
			k, took, ok := r.turns.pop(r.known)
			round -= took
			switch {
			case !ok:
				round = 0
			case skip[k]:
				later = append(later, k)
			default:
				chunk = append(chunk, k)
			}
		}
		some, ferr := r.fetch(ctx, chunk, false)
		read, err = read || some, cmp.Or(err, ferr)
		for _, k := range chunk {
			if r.isKnown(k) {
				r.known[k] = r.turns.push(k)
			}
		}
		// In a cluster, the keys of the masters that answer are read on
		// while one does not (see poll).
		if ferr != nil && !(some && r.c.kind == cluster) {
			break
		}
	}
	return read, err
}

// OfferShown sends keys, the keys on screen, on shown (see
// PollOptions.Shown) without waiting: a set the watcher has not taken yet
// is replaced. shown must have room for one, and one goroutine send on it.
func OfferShown(shown chan []string, keys []string) {
	for {
		select {
		case shown <- keys:
			return
		default:
		}
		select {
		case <-shown: // the watcher has not taken the last: it is out of date
		default:
		}
	}
}
