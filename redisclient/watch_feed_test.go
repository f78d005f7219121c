package redisclient_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// waitTimeout bounds every wait for a watcher: generous, since a wait ends
// as soon as its condition holds.
const waitTimeout = 10 * time.Second

// watcher is Poll or Watch with its options bound: it sends to out until
// ctx is done.
type watcher func(ctx context.Context, out chan<- model.Batch) error

func pollWith(c *redisclient.Client, o redisclient.PollOptions) watcher {
	return func(ctx context.Context, out chan<- model.Batch) error { return c.Poll(ctx, o, out) }
}

func watchWith(c *redisclient.Client, o redisclient.WatchOptions) watcher {
	return func(ctx context.Context, out chan<- model.Batch) error { return c.Watch(ctx, o, out) }
}

// run starts w sending to out and returns stop, which cancels it and fails
// the test unless w then returns nil, even with nobody reading out.
func run(t *testing.T, name string, w watcher, out chan<- model.Batch) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w(ctx, out) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s returned %v after cancel, want nil", name, err)
			}
		case <-time.After(waitTimeout):
			t.Errorf("%s did not return after its context was cancelled", name)
		}
	}
}

// feed runs a watcher until the test ends and applies what it sends to a
// model.Store, as the dashboard does.
type feed struct {
	t       *testing.T
	ch      chan model.Batch
	store   *model.Store
	onBatch func(model.Batch) // when set, sees each batch before it is applied
	state   model.FeedState   // the last one received
	health  model.Health      // the last one received
	modes   []feedMode        // every Mode and Phase received, in order, repeats left out
	passes  int               // states received that said a full pass had begun
	reads   map[string]int    // key -> how many times it was read in this pass
	seen    []int64           // the Seen of each state received while scanning, in this pass
}

// feedMode is a state's Mode and Phase.
type feedMode struct {
	mode  model.WatchMode
	phase model.FeedPhase
}

func (m feedMode) String() string { return m.mode.String() + " " + m.phase.String() }

// sawPhase reports whether a state received was in phase.
func (f *feed) sawPhase(phase model.FeedPhase) bool {
	return slices.ContainsFunc(f.modes, func(m feedMode) bool { return m.phase == phase })
}

// sawWatching reports whether a state received said the feed watched in
// mode.
func (f *feed) sawWatching(mode model.WatchMode) bool {
	return slices.Contains(f.modes, feedMode{mode, model.FeedWatching})
}

// watchingIn reports whether st says that the feed watches in mode, its
// subscriptions up.
func watchingIn(st model.FeedState, mode model.WatchMode) bool {
	return st.Mode == mode && st.Phase == model.FeedWatching
}

// pushModes are the modes in which the servers tell each change: the
// scenarios of one run in every one.
func pushModes() []model.WatchMode {
	var modes []model.WatchMode
	for m := range model.NumWatchModes {
		if m.Spec().Push {
			modes = append(modes, m)
		}
	}
	return modes
}

// startPoll runs Poll until the test ends, and checks that it then returns
// nil.
func startPoll(t *testing.T, c *redisclient.Client, o redisclient.PollOptions) *feed {
	t.Helper()
	return startFeed(t, "Poll", pollWith(c, o))
}

// startWatch runs Watch until the test ends, and checks that it then
// returns nil.
func startWatch(t *testing.T, c *redisclient.Client, o redisclient.WatchOptions) *feed {
	t.Helper()
	return startFeed(t, "Watch", watchWith(c, o))
}

func startFeed(t *testing.T, name string, w watcher) *feed {
	f := &feed{t: t, ch: make(chan model.Batch), store: model.NewStore(&model.Rules{}), reads: map[string]int{}}
	t.Cleanup(run(t, name, w, f.ch))
	return f
}

// until applies batches until check returns "", and fails the test with
// what check last said when that takes too long. check runs after each
// batch, and every few milliseconds for what batches do not tell.
func (f *feed) until(what string, check func() string) {
	f.t.Helper()
	f.untilWithin(waitTimeout, what, check)
}

// untilWithin is until, giving up after timeout.
func (f *feed) untilWithin(timeout time.Duration, what string, check func() string) {
	f.t.Helper()
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		problem := check()
		if problem == "" {
			return
		}
		select {
		case b := <-f.ch:
			f.apply(b)
		case <-tick.C:
		case <-deadline:
			f.t.Fatalf("gave up waiting for %s: %s (state %+v)", what, problem, f.state)
		}
	}
}

func (f *feed) apply(b model.Batch) {
	if f.onBatch != nil {
		f.onBatch(b)
	}
	if b.State != nil && b.State.Scanning && !f.state.Scanning {
		f.passes++
		clear(f.reads)
		f.seen = f.seen[:0]
	}
	for _, o := range b.Observed {
		if o.PTTL == model.PTTLMissing || o.Type == "none" {
			f.t.Errorf("%q was sent as read although it is gone; want it in Removed", o.Key)
		}
		f.reads[o.Key]++
	}
	if b.Health != nil {
		f.health = *b.Health
	}
	f.store.Apply(b)
	if b.State == nil {
		return
	}
	if m := (feedMode{b.State.Mode, b.State.Phase}); len(f.modes) == 0 || f.modes[len(f.modes)-1] != m {
		f.modes = append(f.modes, m)
	}
	f.state = *b.State
	if f.state.Scanning {
		f.seen = append(f.seen, f.state.Seen)
	}
}

// waitFor applies batches until cond holds.
func (f *feed) waitFor(what string, cond func() bool) {
	f.t.Helper()
	f.until(what, func() string {
		if cond() {
			return ""
		}
		return "not yet"
	})
}

// noneRemoved fails the test if any batch from now on reports a key
// removed: when says when none may be (while a master is down).
func (f *feed) noneRemoved(when string) {
	f.onBatch = func(b model.Batch) {
		for _, k := range b.Removed {
			f.t.Errorf("%s was reported removed %s", k, when)
		}
	}
}

// waitValue waits until the store holds key with the stored string want.
func (f *feed) waitValue(key, want string) model.Counter {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("%q = %q", key, want), func() bool {
		c, ok := f.store.Get(key)
		return ok && c.Raw == want
	})
	c, _ := f.store.Get(key)
	return c
}

// waitGone waits until the store no longer holds key.
func (f *feed) waitGone(key string) {
	f.t.Helper()
	f.waitFor(fmt.Sprintf("%q removed", key), func() bool { _, ok := f.store.Get(key); return !ok })
}
