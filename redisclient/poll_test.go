package redisclient_test

import (
	"context"
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
	state  model.FeedState   // the last one received
	passes int               // states received that said a scan had begun
}

func startPoll(t *testing.T, c *redisclient.Client, o redisclient.PollOptions) *feed {
	t.Helper()
	f := &feed{t: t, ch: make(chan model.Batch), values: map[string]string{}}
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
			for _, o := range b.Observed {
				f.values[o.Key] = o.Raw
			}
			for _, k := range b.Removed {
				delete(f.values, k)
			}
			if b.State != nil {
				if b.State.Scanning && !f.state.Scanning {
					f.passes++
				}
				f.state = *b.State
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
