package redisclient_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// waitTimeout bounds every wait for the poller: generous, since a wait ends
// as soon as its condition holds.
const waitTimeout = 10 * time.Second

// feed runs Poll and applies what it sends, as the dashboard would.
type feed struct {
	t      *testing.T
	ch     chan model.Batch
	values map[string]string // key -> Raw, for the keys that exist
	reads  map[string]int    // key -> how many times it was read in this pass
	state  model.FeedState   // the last one received
	passes int               // states received that said a scan had begun
	seen   []int64           // the Seen of each state received while scanning, in this pass
}

func startPoll(t *testing.T, c *redisclient.Client, o redisclient.PollOptions) *feed {
	t.Helper()
	f := &feed{t: t, ch: make(chan model.Batch), values: map[string]string{}, reads: map[string]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Poll(ctx, o, f.ch) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Poll returned %v after cancel, want nil", err)
			}
		case <-time.After(waitTimeout):
			t.Error("Poll did not return after its context was cancelled")
		}
	})
	return f
}

// waitFor applies batches until cond holds.
func (f *feed) waitFor(what string, cond func() bool) {
	f.t.Helper()
	deadline := time.After(waitTimeout)
	for !cond() {
		select {
		case b := <-f.ch:
			if b.State != nil && b.State.Scanning && !f.state.Scanning {
				f.passes++
				clear(f.reads)
				f.seen = f.seen[:0]
			}
			for _, o := range b.Observed {
				f.values[o.Key] = o.Raw
				f.reads[o.Key]++
			}
			for _, k := range b.Removed {
				delete(f.values, k)
			}
			if b.State != nil {
				f.state = *b.State
				if f.state.Scanning {
					f.seen = append(f.seen, f.state.Seen)
				}
			}
		case <-deadline:
			f.t.Fatalf("gave up waiting for %s; values %q, state %+v", what, f.values, f.state)
		}
	}
}

func (f *feed) waitValue(key, want string) {
	f.t.Helper()
	f.waitFor(key+" = "+want, func() bool { v, ok := f.values[key]; return ok && v == want })
}

func (f *feed) waitGone(key string) {
	f.t.Helper()
	f.waitFor(key+" removed", func() bool { _, ok := f.values[key]; return !ok })
}

func TestPollFollowsChanges(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	s.Do(t, "SET", "other", "1")
	c := connect(t, s)
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})

	f.waitValue("rl:1", "1")
	f.waitFor("the feed's state", func() bool {
		return f.state.Mode == "polling" && f.state.Connected && !f.state.Scanning &&
			f.state.Addr == c.Addr() && f.state.Interval == 50*time.Millisecond && f.state.Matched == 1
	})
	if f.passes == 0 {
		t.Error("no state said a scan was running")
	}
	s.Do(t, "SET", "rl:2", "10")
	f.waitValue("rl:2", "10")
	s.Do(t, "INCR", "rl:1")
	f.waitValue("rl:1", "2")
	s.Do(t, "DEL", "rl:1")
	f.waitGone("rl:1")
	if _, ok := f.values["other"]; ok {
		t.Error("a key that matches no pattern was sent")
	}
}

func TestPollRefreshesFasterThanItDiscovers(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	c := connect(t, s)
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond, DiscoverEvery: time.Hour})
	f.waitValue("rl:1", "1")

	s.Do(t, "SET", "rl:new", "1")
	s.Do(t, "INCR", "rl:1")
	f.waitValue("rl:1", "2")
	// The read that saw rl:1 = 2 came after rl:new existed: a discovery
	// pass then would have found it.
	if _, ok := f.values["rl:new"]; ok {
		t.Error("a new key was discovered by a refresh; want discovery to wait for DiscoverEvery")
	}
}

// TestPollSpreadsAPassOverCycles makes discovery take one SCAN of a few
// keys per cycle, as a million keys would with the real budget, and checks
// that the known keys keep their refresh while a pass goes on, and that
// discovery still finds new keys and the header's progress is right.
func TestPollSpreadsAPassOverCycles(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	const matching, others = 160, 40 // about 50 SCANs of COUNT 4 a pass
	mset := []any{"MSET"}
	for i := range matching {
		mset = append(mset, fmt.Sprintf("rl:%03d", i), 1)
	}
	for i := range others {
		mset = append(mset, fmt.Sprintf("other:%03d", i), 1)
	}
	s.Do(t, mset...)
	c := connect(t, s)
	o := redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 10 * time.Millisecond, ScanCount: 4}
	o.SetScanBudget(time.Nanosecond) // one SCAN a cycle
	f := startPoll(t, c, o)

	// At start-up nothing is known: the first pass runs to its end at once.
	f.waitFor("the first pass to end", func() bool { return f.passes == 1 && !f.state.Scanning })
	if len(f.values) != matching || f.state.Seen != matching+others || f.state.Matched != matching {
		t.Errorf("after the first pass: %d keys, %d seen, %d matched; want %d, %d (DBSIZE), %d",
			len(f.values), f.state.Seen, f.state.Matched, matching, matching+others, matching)
	}

	// The second pass is spread over many cycles.
	f.waitFor("a second pass", func() bool { return f.passes == 2 })
	s.Do(t, "INCR", "rl:000")
	s.Do(t, "DEL", "rl:001")
	s.Do(t, "SET", "rl:new", "7")
	f.waitValue("rl:000", "2")
	f.waitGone("rl:001")
	f.waitFor("rl:000 read three times in one pass", func() bool { return f.reads["rl:000"] >= 3 })
	if f.passes != 2 || !f.state.Scanning {
		t.Errorf("the known keys were read again only after the pass: passes %d, state %+v", f.passes, f.state)
	}
	if mid := f.seen[len(f.seen)-1]; mid <= 0 || mid >= matching+others {
		t.Errorf("midway through a pass the header says %d keys seen; want between 0 and %d", mid, matching+others)
	}
	if !slices.IsSorted(f.seen) {
		t.Errorf("the keys seen went down during a pass: %v", f.seen)
	}

	// A key made during a pass is found by the end of the next at the latest.
	f.waitValue("rl:new", "7")
	if f.passes > 3 {
		t.Errorf("a key made during pass 2 was found in pass %d", f.passes)
	}
}

func TestPollSurvivesRestart(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:before", "1")
	c := connect(t, s)
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
	f.waitValue("rl:before", "1")

	s.Stop()
	f.waitFor("a disconnected state", func() bool { return !f.state.Connected })
	if f.state.Mode != "reconnecting" || !strings.Contains(f.state.LastError, s.Addr) || !strings.Contains(f.state.LastError, " — ") {
		t.Errorf("while Redis is down the state is %+v; want reconnecting, with an explained error", f.state)
	}

	s.Restart(t) // starts empty: nothing is persisted
	s.Do(t, "SET", "rl:after", "2")
	f.waitValue("rl:after", "2")
	f.waitGone("rl:before")
	f.waitFor("a healthy state", func() bool { return f.state.Connected && f.state.LastError == "" && f.state.Mode == "polling" })
}

func TestPollStopsWhileNobodyReads(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	c := connect(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	out := make(chan model.Batch)
	done := make(chan error, 1)
	go func() {
		done <- c.Poll(ctx, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: time.Millisecond}, out)
	}()
	<-out // from now on, Poll has batches to send and nobody reads them
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Poll returned %v, want nil", err)
		}
	case <-time.After(waitTimeout):
		t.Fatal("Poll blocked on a channel nobody reads after its context was cancelled")
	}
}

func TestPollNeedsAPattern(t *testing.T) {
	t.Parallel()
	c := connect(t, redistest.Start(t))
	err := c.Poll(context.Background(), redisclient.PollOptions{}, make(chan model.Batch))
	checkSentence(t, err, "there is no key pattern to watch", "")
}
