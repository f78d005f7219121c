package redisclient

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

const (
	// coalesceWindow is how long changed keys may gather before they are
	// read again in one pipeline: far below what a person can see, and
	// long enough that a burst of events costs a few round trips instead of
	// one per event.
	coalesceWindow = 5 * time.Millisecond
	// defaultHealthEvery is how long a subscription may stay silent before
	// it is pinged, and how long the ping may then go unanswered before the
	// connection is taken for dead.
	defaultHealthEvery = 5 * time.Second
	// subscribeTimeout bounds the wait for PSUBSCRIBE's confirmations.
	subscribeTimeout = 10 * time.Second
	// statusBuffer is how much news from a subscriber can wait for a
	// reader that is busy with a full pass.
	statusBuffer = 16
)

// eventWatcher follows changes through keyspace notifications.
//
// A subscriber per node (a single Redis has one; a cluster will have one
// per master) puts the keys that events name into a changeSet and never
// waits for the reader. One reader (the read loop) re-reads those keys in
// coalesced pipelines, whatever the event was: a read is the truth about a
// key (a del, an expiry or an eviction reads as gone; a del and a new SET in
// one window read as the new key), and costs little. Notifications are fire
// and forget, so the reader also makes a full pass (SCAN, then read) after
// every subscription, including the first, and every ResyncEvery.
type eventWatcher struct {
	*reader
	resyncEvery time.Duration
	healthEvery time.Duration
	prefix      string   // "__keyspace@<db>__:", which precedes the key in a channel's name
	channels    []string // the patterns' channels, each once
	changed     *changeSet
	status      chan subStatus
	down        map[string]string // node -> why its subscription is down
}

// subStatus is news from a subscriber: its subscription to node was made
// (err == nil) or lost.
type subStatus struct {
	node string
	err  error
}

func newEventWatcher(r *reader, o WatchOptions) *eventWatcher {
	prefix := fmt.Sprintf("__keyspace@%d__:", r.c.db())
	channels := make([]string, len(o.Patterns))
	for i, p := range o.Patterns {
		channels[i] = prefix + p // the channel glob's * and ? apply to the key
	}
	slices.Sort(channels)
	return &eventWatcher{
		reader:      r,
		resyncEvery: o.ResyncEvery,
		healthEvery: cmp.Or(o.healthEvery, defaultHealthEvery),
		prefix:      prefix,
		channels:    slices.Compact(channels),
		changed:     newChangeSet(),
		status:      make(chan subStatus, statusBuffer),
		down:        make(map[string]string),
	}
}

// db is the number of the database the client reads: keyspace channels
// are named after it.
func (c *Client) db() int {
	if rc, ok := c.rdb.(*redis.Client); ok {
		return rc.Options().DB
	}
	return 0 // a cluster has database 0 only
}

// run watches until ctx is done. first, when not nil, is a subscription
// already open; note, when not "", goes first in the feed's Note.
func (w *eventWatcher) run(ctx context.Context, first *redis.PubSub, note string) {
	w.state.Note = "re-scan every " + w.resyncEvery.String()
	if note != "" {
		w.state.Note = note + "; " + w.state.Note
	}
	var wg sync.WaitGroup
	wg.Go(func() { w.subscribe(ctx, w.c.hostPort, w.c.rdb, first) })
	w.read(ctx)
	wg.Wait()
}

// read is the reader's loop. It re-reads the keys events named, and makes
// a full pass when one is due, until ctx is done. After a failure it waits
// with backoff, then makes a full pass: what it failed to read may have
// changed since.
func (w *eventWatcher) read(ctx context.Context) {
	resync := time.NewTimer(w.resyncEvery)
	defer resync.Stop()
	var (
		due     bool             // a full pass is due
		retry   <-chan time.Time // set while waiting after a failure
		backoff time.Duration
	)
	for {
		var err error
		select {
		case <-ctx.Done():
			return
		case s := <-w.status:
			var subscribed bool
			subscribed, err = w.subscription(ctx, s)
			due = due || subscribed
		case <-w.changed.ready:
			err = w.readChanged(ctx)
		case <-resync.C:
			due = true
		case <-retry:
			retry = nil
		}
		if err == nil && due && retry == nil {
			if err = w.discover(ctx); err == nil {
				due, backoff = false, 0
				resync.Reset(w.resyncEvery)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			due = true
			backoff = nextBackoff(backoff)
			retry = time.After(backoff)
			w.failed(err)
			if w.emit(ctx, model.Batch{}) != nil {
				return
			}
		}
	}
}

// subscription records a subscriber's news in the feed's state and reports
// whether a full pass is now due (a subscription was made).
func (w *eventWatcher) subscription(ctx context.Context, s subStatus) (subscribed bool, err error) {
	if s.err == nil {
		delete(w.down, s.node)
	} else {
		w.down[s.node] = s.err.Error()
	}
	w.mode, w.outage = "events", ""
	for _, why := range w.down {
		w.mode, w.outage = "reconnecting", why
		break
	}
	if s.err == nil {
		w.state.Mode, w.state.Connected = w.mode, true
		return true, nil // the full pass sends the new state
	}
	w.failed(s.err)
	w.state.Mode = w.mode
	return false, w.emit(ctx, model.Batch{})
}

// readChanged re-reads the keys events named, after letting more gather
// for coalesceWindow unless a pipeline's worth is already waiting.
func (w *eventWatcher) readChanged(ctx context.Context) error {
	if w.changed.len() < w.o.BatchSize {
		t := time.NewTimer(coalesceWindow)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	return w.fetch(ctx, w.changed.take())
}

// subscribe keeps a subscription to node until ctx is done, telling the
// reader each time it is made and each time it is lost. ps, when not nil,
// is one already open. A subscription that was lost is made again at once;
// one that cannot be made is tried again with backoff.
func (w *eventWatcher) subscribe(ctx context.Context, name string, node redis.UniversalClient, ps *redis.PubSub) {
	var backoff time.Duration
	for {
		var err error
		if ps == nil {
			ps, err = w.open(ctx, node)
		}
		if err == nil {
			backoff = 0
			err = w.receive(ctx, name, ps)
			ps = nil
		} else {
			backoff = nextBackoff(backoff)
		}
		if ctx.Err() != nil || !w.report(ctx, subStatus{node: name, err: w.c.explain(err)}) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// open subscribes to the patterns' channels on node and waits until Redis
// has confirmed them all: from then on, every event is delivered.
func (w *eventWatcher) open(ctx context.Context, node redis.UniversalClient) (*redis.PubSub, error) {
	ps := node.PSubscribe(ctx) // no channels: nothing is sent yet
	ctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // Receive only heeds ctx's deadline
	defer stop()
	err := ps.PSubscribe(ctx, w.channels...)
	for err == nil {
		var msg any
		if msg, err = ps.Receive(ctx); err == nil && w.handle(msg) {
			return ps, nil
		}
	}
	ps.Close()
	return nil, err
}

// receive tells the reader that ps is subscribed, then passes it the keys
// that ps's events name until the connection fails or ctx is done. It
// closes ps.
func (w *eventWatcher) receive(ctx context.Context, name string, ps *redis.PubSub) error {
	defer ps.Close()
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // Receive does not heed ctx
	defer stop()
	var heard atomic.Uint64
	var silent atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go w.watchdog(ps, &heard, &silent, done)

	if !w.report(ctx, subStatus{node: name}) {
		return ctx.Err()
	}
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			why := reason(err)
			if silent.Load() {
				why = fmt.Sprintf("no answer to a ping within %v", w.healthEvery)
			}
			return explained(fmt.Sprintf("the keyspace notifications subscription to %s was lost (%s) — subscribing again", name, why), err)
		}
		heard.Add(1)
		// Confirmations that come again mean go-redis lost the connection
		// and subscribed again by itself: what happened between is unknown.
		if w.handle(msg) && !w.report(ctx, subStatus{node: name}) {
			return ctx.Err()
		}
	}
}

// handle adds the key an event names to the changed set, and reports
// whether msg confirms the last of the subscription's channels.
func (w *eventWatcher) handle(msg any) (subscribed bool) {
	switch m := msg.(type) {
	case *redis.Message:
		// Everything after the prefix is the key, whatever bytes it holds
		// (':' and newlines included).
		if key, ok := strings.CutPrefix(m.Channel, w.prefix); ok {
			w.changed.add(key)
		}
	case *redis.Subscription:
		return m.Kind == "psubscribe" && m.Count == len(w.channels)
	}
	return false
}

// report passes s to the reader; false when ctx ended first.
func (w *eventWatcher) report(ctx context.Context, s subStatus) bool {
	select {
	case w.status <- s:
		return true
	case <-ctx.Done():
		return false
	}
}

// watchdog pings ps when it has been silent for healthEvery, and closes it,
// setting silent, when the ping has gone unanswered for as long again: a
// connection that died without a word (a host gone, a network cut) would
// otherwise keep Receive waiting forever. heard counts what ps received. It
// returns when done is closed.
func (w *eventWatcher) watchdog(ps *redis.PubSub, heard *atomic.Uint64, silent *atomic.Bool, done <-chan struct{}) {
	tick := time.NewTicker(w.healthEvery)
	defer tick.Stop()
	last, pinged := heard.Load(), false
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		switch n := heard.Load(); {
		case n != last:
			last, pinged = n, false
		case pinged:
			silent.Store(true)
			ps.Close()
			return
		default:
			pinged = true
			ctx, cancel := context.WithTimeout(context.Background(), w.healthEvery)
			_ = ps.Ping(ctx) // a ping that cannot be sent is not answered either
			cancel()
		}
	}
}

// changeSet holds the keys that events said changed and that were not read
// again yet. Subscribers add to it without ever waiting for the reader, so
// a slow read or a busy dashboard cannot back events up into Redis's output
// buffer; a key that changes many times before the read is read once.
type changeSet struct {
	mu    sync.Mutex
	keys  map[string]struct{}
	ready chan struct{} // signalled when keys stops being empty
}

func newChangeSet() *changeSet {
	return &changeSet{keys: make(map[string]struct{}), ready: make(chan struct{}, 1)}
}

func (s *changeSet) add(key string) {
	s.mu.Lock()
	_, dup := s.keys[key]
	s.keys[key] = struct{}{}
	first := !dup && len(s.keys) == 1
	s.mu.Unlock()
	if first {
		select {
		case s.ready <- struct{}{}:
		default: // already signalled
		}
	}
}

func (s *changeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// take empties the set and returns what it held.
func (s *changeSet) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Collect(maps.Keys(s.keys))
	clear(s.keys)
	return keys
}
