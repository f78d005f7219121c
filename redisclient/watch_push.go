package redisclient

import (
	"cmp"
	"context"
	"errors"
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
	// statusBuffer is how much news from subscribers can wait for a
	// reader that is busy with a full pass.
	statusBuffer = 16
	// defaultFollowEvery is how often, in a cluster or behind Sentinel,
	// the reader asks which servers are masters: a failover that broke no
	// connection (the old master runs on as a replica) moves the
	// subscription within seconds.
	defaultFollowEvery = 5 * time.Second
)

// pushMode is a watch mode in which the servers tell of each change as it
// happens: keyspace notifications (watch_events.go) or client tracking
// (watch_tracking.go). A pushWatcher does everything else the same way for
// every push mode; a mode does these five things its own way. A new push
// mode is one more implementation of it, with its pushKind (what Watch
// needs to start it) in pushKinds.
type pushMode interface {
	// open subscribes on node, and returns once every change from then on
	// will be told.
	open(ctx context.Context, node *redis.Client) (*subscription, error)
	// reopen subscribes on node again, after a subscription was lost. An
	// error that says the mode can no longer be used there is a
	// noEvents.error() (errNoEvents): the watcher then stops.
	reopen(ctx context.Context, node *redis.Client) (*subscription, error)
	// refused says why the mode cannot be used when subscribing was
	// refused with err.
	refused(err error) *noEvents
	// message reads the rest of a message of kind ("message" or
	// "pmessage"), size replies in all with kind, from c, and puts the
	// keys it names in the changed set; one that says that a master's keys
	// were flushed has a full pass made (sawFlush). It returns how many
	// keys it named beyond the message itself, for the count of what was
	// heard. A message not of the mode's is read and dropped.
	message(c *subConn, kind []byte, size int64) (keys uint64, err error)
	// check looks at what the mode needs of the masters: before each pass
	// (nodes, the masters as they are now) and every recheckIntervals
	// intervals (nodes nil: it asks which they are). Its error is a
	// noEvents.error() when a master no longer gives it; whole says that
	// a pass re-reading every key is now due.
	check(ctx context.Context, nodes []*redis.Client) (whole bool, err error)
}

// pushKind is a push mode as Watch starts it, and what sentences call its
// parts.
type pushKind struct {
	mode model.WatchMode // the feed's Mode while every master is followed
	// follows is what a subscription follows, in the sentence on one
	// lost ("keyspace notifications"); message one of its messages, in
	// the sentence on a connection Redis closed ("notification"); lost
	// one lost, in the Note ("an event").
	follows, message, lost string
	// evictions: its messages tell the keys Redis evicted (evicted
	// events); where not, INFO's count of every key evicted stands in.
	evictions bool
	// start finds the masters and whether the mode can be used on them,
	// no being nil when it can, with a note on what start did or on why
	// it is used, to go first in the feed's Note. prior says why the modes
	// before it in auto's order cannot be used (nil when none was tried).
	// While Redis cannot be reached, it says so in the feed's state and
	// tries again; its error is ctx's.
	start func(ctx context.Context, r *reader, o WatchOptions, prior *noEvents) (nodes []*redis.Client, no *noEvents, note string, err error)
	// look looks once, changing nothing, whether the mode can be used
	// now: nil when it can. A mode that needs no setting, and so is never
	// kept from being used by one alone (noEvents.settable), has none.
	look func(ctx context.Context, c *Client) (*noEvents, error)
	// newMode returns what the mode does its own way for w, which
	// watches o.Patterns.
	newMode func(w *pushWatcher, o WatchOptions) pushMode
}

// watcher returns a watcher of o.Patterns in mode k that reads through r.
func (k pushKind) watcher(r *reader, o WatchOptions) *pushWatcher {
	w := newPushWatcher(r, o, k)
	w.push = k.newMode(w, o)
	return w
}

// pushWatcher follows changes in a push mode: the keys that the servers
// name, whatever the mode calls its messages, and everything else is the
// same.
//
// A subscriber per master (a single Redis has one, a cluster one per
// master: each server sends notifications only for its own keys) puts the
// keys that messages name into a changeSet and never waits for the reader.
// One reader (the read loop) re-reads those keys in coalesced pipelines,
// whatever the message was: a read is the truth about a key (a del, an
// expiry or an eviction reads as gone; a del and a new SET in one window
// read as the new key), and costs little. Messages are fire and forget, so
// the reader also makes a full pass (SCAN, then read) once the first
// subscriptions are made and after every subscription made later, and
// every ResyncEvery a pass that reads only the keys made or gone (a full
// one in fullEvery). Between them it reads again what no message tells
// (see rereads): the keys of a type whose class a master's setting lacks,
// and logs whose hits leave their window.
//
// The reader also keeps the subscribers in step with the masters: it asks
// which servers are masters before each full pass, whenever a subscription
// is lost, and (in a cluster or behind Sentinel) every followEvery, since a
// failover can leave the old master running as a replica without breaking
// any connection. It subscribes to new masters and drops the servers that
// are masters no longer.
//
// A mode can only be followed while every master gives what it needs. The
// reader has the mode check the masters (pushMode.check) every
// recheckIntervals poll intervals and at each full pass, and a subscriber
// subscribing again is refused when one no longer does; the watcher then
// stops, and Watch does what auto does (see Watch): events need a
// setting, tracking none, and its watcher stops when a subscriber
// subscribing again is refused.
type pushWatcher struct {
	*reader
	kind        pushKind // the mode's facts
	push        pushMode // what the mode does its own way
	resyncEvery time.Duration
	healthEvery time.Duration
	followEvery time.Duration
	// back, when set, looks whether a mode that auto prefers to this one,
	// and that only a setting kept from being used, can be used now: the
	// reader asks every recheckIntervals, and stops once it can, so that
	// Watch follows that mode.
	back      func(ctx context.Context) bool
	changed   *changeSet
	flushSeen chan struct{} // signalled when a master says its keys were flushed (see sawFlush)
	status    chan subStatus
	subs      map[string]*subscriber // the masters followed, by address
	down      map[string]string      // master -> why its subscription is down
	flushes   map[string]flushCount  // master -> its FLUSHDB, FLUSHALL and SWAPDB counts when last asked
	settling  int                    // followMasters calls left that read the topology again, after the masters changed
	wg        sync.WaitGroup         // the subscribers
	// note is the feed's Note: baseNote, as run began, after polledNote,
	// which names the types read every interval (events: see pollTypes);
	// overflow, when not "", the sentence on the last subscription Redis
	// closed for its output buffer, goes before it.
	note, overflow       string
	baseNote, polledNote string
	// noInfo holds the masters (by address) that refused INFO: they are
	// not asked again, so as not to fill their ACL LOG.
	noInfo sync.Map
}

// newPushWatcher returns the part of a watcher in mode k that every push
// mode shares; its push is the caller's to set (see pushKind.watcher).
func newPushWatcher(r *reader, o WatchOptions, k pushKind) *pushWatcher {
	return &pushWatcher{
		reader:      r,
		kind:        k,
		resyncEvery: o.ResyncEvery,
		healthEvery: cmp.Or(o.healthEvery, defaultHealthEvery),
		followEvery: cmp.Or(o.followEvery, defaultFollowEvery),
		changed:     newChangeSet(),
		flushSeen:   make(chan struct{}, 1),
		status:      make(chan subStatus, statusBuffer),
		subs:        make(map[string]*subscriber),
		down:        make(map[string]string),
		flushes:     make(map[string]flushCount),
	}
}

// run watches until ctx is done, and returns false; or until a master no
// longer gives what the mode needs (the notifications' setting, or
// tracking refused), or a mode auto prefers can be used again (back), and
// returns true once its subscribers have stopped, so that Watch can do
// something else in its place. nodes are the masters and opened the
// subscriptions already made to them, by address; note, when not "", goes
// first in the feed's Note.
func (w *pushWatcher) run(ctx context.Context, nodes []*redis.Client, opened map[string]*subscription, note string) (off bool) {
	w.baseNote = joinNotes(note, fmt.Sprintf("re-scan every %s (a full one every %s), in case %s was lost",
		model.FormatDuration(w.resyncEvery), model.FormatDuration(fullEvery*w.resyncEvery), w.kind.lost))
	w.setNote()
	w.rereads = newRereads(w.o.Interval, w.c.ruleFor)
	defer func() { w.rereads = nil }() // polling schedules nothing
	w.lag.follow(w.changed)
	defer w.lag.follow(nil)
	if w.kind.evictions { // else INFO counts them (see evictionMeter)
		w.evictions.following(true)
		defer w.evictions.following(false)
	}
	ctx, stop := context.WithCancel(ctx) // stops the subscribers when the reader stops
	defer stop()
	w.follow(ctx, nodes, opened)
	off = w.read(ctx) != nil
	stop()
	w.wg.Wait()
	return off
}

// read runs the reader's loop. It makes the first full pass, then re-reads
// the keys events named, makes a pass when one is due, and follows the
// masters, until ctx is done; then it returns nil. A pass is walked a slice
// at a time, with the keys events named read between the slices, so that
// a change is on screen while a pass of a million keys goes on. After a
// failure it waits with backoff, then makes a full pass: what it failed to
// read may have changed since. It returns an errNoEvents error as soon as
// a master is found not to give what the mode needs, and errPreferred
// once back says to.
func (w *pushWatcher) read(ctx context.Context) error {
	resync := time.NewTimer(w.resyncEvery)
	defer resync.Stop()
	settings := time.NewTicker(recheckIntervals * w.o.Interval) // the mode's check, and back
	defer settings.Stop()
	flushCheck := time.NewTicker(w.o.Interval)
	defer flushCheck.Stop()
	var check <-chan time.Time // a single server's master never changes
	if w.c.kind != standalone {
		t := time.NewTicker(w.followEvery)
		defer t.Stop()
		check = t.C
	}
	reread := time.NewTimer(time.Hour) // when the first key rereads holds is due
	reread.Stop()
	defer reread.Stop()
	var rereadAt time.Time // what reread is set to; zero when stopped or fired
	var (
		due     = true // a pass is due
		full    = true // it re-reads the keys known already, not only finds those made or gone
		resyncs int    // periodic passes since the last full one
		walk    *discovery
		retry   <-chan time.Time // set while waiting after a failure
		backoff time.Duration
	)
	for {
		var err error
		if due && walk == nil && retry == nil {
			if walk, err = w.startPass(ctx, full); err == nil {
				due, full = false, false
			}
		}
		walking := neverReady // readyNow while a pass is under way
		if walk != nil && err == nil {
			var ended bool
			if ended, err = w.advance(ctx, walk, passSlice); ended || err != nil {
				walk = nil
			}
			if ended && err == nil {
				backoff = 0
				resync.Reset(w.resyncEvery)
			}
			if walk != nil {
				walking = readyNow
			}
		}
		if at, ok := w.rereads.next(); ok && (rereadAt.IsZero() || at.Before(rereadAt)) {
			reread.Reset(time.Until(at))
			rereadAt = at
		}
		if err == nil {
			var again, whole bool // a pass is now due; it re-reads every key
			select {
			case <-ctx.Done():
				return nil
			case s := <-w.status:
				again, err = w.subscription(ctx, s)
				whole = again
			case <-check:
				err = w.followMasters(ctx)
			case <-settings.C:
				// A pass that reads every key schedules those of a type
				// read every interval from now on (see rereads).
				whole, err = w.push.check(ctx, nil)
				again = whole
				if err == nil && w.back != nil && w.back(ctx) {
					err = errPreferred
				}
			case <-flushCheck.C:
				again = !due && retry == nil && w.flushed(ctx)
				whole = again
			case <-w.flushSeen:
				again, whole = true, true
			case <-w.changed.ready:
				err = w.readChanged(ctx)
			case <-reread.C:
				rereadAt = time.Time{}
				err = w.readDue(ctx)
			case <-resync.C:
				resyncs++
				again, whole = true, resyncs%fullEvery == 0
			case <-retry:
				retry = nil
			case <-walking:
			}
			if whole && walk != nil && !walk.reread {
				walk = nil // a pass that re-reads every key begins again, in its place
			}
			due, full = due || again, full || whole
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, errNoEvents), err == errPreferred:
				return err
			}
			due, full, walk = true, true, nil
			backoff = nextBackoff(backoff)
			retry = time.After(backoff)
			w.failed(err)
			w.rereadTopology(ctx)
			if w.emit(ctx, model.Batch{}) != nil {
				return nil
			}
		}
	}
}

// passSlice is how long the reader walks a pass before it reads the keys
// events named meanwhile: a change waits for no more than a slice (and
// the SCAN and reads under way when it ends).
const passSlice = 20 * time.Millisecond

// fullEvery is how many periodic passes go by between two that re-read
// every key known; the others only find the keys made or gone since, and
// cost a SCAN of the keyspace, not a read of every key.
const fullEvery = 10

// neverReady is never ready; readyNow always is (it is closed).
var (
	neverReady <-chan struct{}
	readyNow   = func() <-chan struct{} { c := make(chan struct{}); close(c); return c }()
)

// startPass follows the masters as they are now, has the mode check that
// they still give what it needs, then begins a pass: full, it re-reads
// every key it finds; else only those made since.
func (w *pushWatcher) startPass(ctx context.Context, full bool) (*discovery, error) {
	nodes, err := w.c.masters(ctx)
	if err != nil {
		return nil, err
	}
	if w.follow(ctx, nodes, nil) {
		w.settling = 3 // see followMasters
	}
	whole, err := w.push.check(ctx, nodes)
	if err != nil {
		return nil, err
	}
	w.flushed(ctx) // the pass reads what a flush did: only the counts matter here
	return w.startDiscovery(ctx, full || whole)
}

// readChanged re-reads the keys events named, after letting more gather
// for coalesceWindow unless a pipeline's worth is already waiting.
func (w *pushWatcher) readChanged(ctx context.Context) error {
	if w.changed.len() < w.o.BatchSize {
		t := time.NewTimer(coalesceWindow)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	_, err := w.fetch(ctx, w.changed.take(), true)
	w.changed.read()
	return err
}

// sawFlush tells the reader that a master's keys were flushed: a full pass
// finds which are left. It never waits: one signal pending is enough.
func (w *pushWatcher) sawFlush() {
	select {
	case w.flushSeen <- struct{}{}:
	default:
	}
}

// joinNotes returns the parts of a Note that are not "", in order.
func joinNotes(parts ...string) string {
	return strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), "; ")
}

// changeSet holds the keys that events said changed and that were not read
// again yet. Subscribers add to it without ever waiting for the reader, so
// a slow read or a busy dashboard cannot back events up into Redis's output
// buffer; a key that changes many times before the read is read once.
type changeSet struct {
	mu    sync.Mutex
	keys  map[string]struct{}
	since time.Time     // when the first key of those held came
	ready chan struct{} // signalled when keys stops being empty
	// reading is since when the keys taken last (see take) waited, until
	// the reader says they were read (see read); Unix nanoseconds, 0 when
	// none are being read.
	reading atomic.Int64
}

// newChangeSet returns an empty changeSet.
func newChangeSet() *changeSet {
	return &changeSet{keys: make(map[string]struct{}), ready: make(chan struct{}, 1)}
}

// add puts key in the set, and signals ready when the set was empty.
func (s *changeSet) add(key string) {
	s.mu.Lock()
	first := len(s.keys) == 0
	if first {
		s.since = time.Now()
	}
	s.keys[key] = struct{}{}
	s.mu.Unlock()
	if first {
		s.signal()
	}
}

// addBytes is add for a key that the caller's buffer holds: a key already
// in the set costs no allocation.
func (s *changeSet) addBytes(key []byte) {
	s.mu.Lock()
	if _, dup := s.keys[string(key)]; dup {
		s.mu.Unlock()
		return
	}
	first := len(s.keys) == 0
	if first {
		s.since = time.Now()
	}
	s.keys[string(key)] = struct{}{}
	s.mu.Unlock()
	if first {
		s.signal()
	}
}

// signal tells the reader that the set stopped being empty.
func (s *changeSet) signal() {
	select {
	case s.ready <- struct{}{}:
	default: // already signalled
	}
}

// len returns how many keys the set holds.
func (s *changeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// take empties the set and returns what it held; until read is called,
// they count as waiting since the first of them came.
func (s *changeSet) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Collect(maps.Keys(s.keys))
	if len(keys) > 0 {
		s.reading.Store(s.since.UnixNano())
	}
	clear(s.keys)
	return keys
}

// read says that the keys taken last were read.
func (s *changeSet) read() { s.reading.Store(0) }

// waited returns how long the oldest key not read yet has waited, as of
// now: in the set, or taken and being read; 0 when there is none.
func (s *changeSet) waited(now time.Time) time.Duration {
	var oldest time.Time
	if r := s.reading.Load(); r != 0 {
		oldest = time.Unix(0, r)
	}
	s.mu.Lock()
	if len(s.keys) > 0 && (oldest.IsZero() || s.since.Before(oldest)) {
		oldest = s.since
	}
	s.mu.Unlock()
	if oldest.IsZero() {
		return 0
	}
	return max(0, now.Sub(oldest))
}
