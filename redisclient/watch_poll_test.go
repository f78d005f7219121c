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

func TestPollFollowsChanges(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	s.Do(t, "SET", "other", "1")
	c := connect(t, s)
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})

	f.waitValue("rl:1", "1")
	f.waitFor("the feed's state", func() bool {
		return watchingIn(f.state, model.WatchPoll) && f.state.Connected && !f.state.Scanning &&
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
	if _, ok := f.store.Get("other"); ok {
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
	if _, ok := f.store.Get("rl:new"); ok {
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
	if f.store.Len() != matching || f.state.Seen != matching+others || f.state.Matched != matching {
		t.Errorf("after the first pass: %d keys, %d seen, %d matched; want %d, %d (DBSIZE), %d",
			f.store.Len(), f.state.Seen, f.state.Matched, matching, matching+others, matching)
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
	if f.state.Phase != model.FeedReconnecting || !strings.Contains(f.state.LastError, s.Addr) || !strings.Contains(f.state.LastError, " — ") {
		t.Errorf("while Redis is down the state is %+v; want reconnecting, with an explained error", f.state)
	}

	s.Restart(t) // starts empty: nothing is persisted
	s.Do(t, "SET", "rl:after", "2")
	f.waitValue("rl:after", "2")
	f.waitGone("rl:before")
	f.waitFor("a healthy state", func() bool {
		return f.state.Connected && f.state.LastError == "" && watchingIn(f.state, model.WatchPoll)
	})
}

func TestPollStopsWhileNobodyReads(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	c := connect(t, s)
	o := redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: time.Millisecond}
	out := make(chan model.Batch)
	stop := run(t, "Poll", pollWith(c, o), out)
	<-out // from now on, Poll has batches to send and nobody reads them
	stop()
}

func TestPollNeedsAPattern(t *testing.T) {
	t.Parallel()
	c := connect(t, redistest.Start(t))
	err := c.Poll(context.Background(), redisclient.PollOptions{}, make(chan model.Batch))
	checkSentence(t, err, "there is no key pattern to watch", "")
}

// A server that stops answering without closing its connections still
// accepts new ones, and go-redis tries a read that timed out again on one:
// without a bound, a pipeline waited out the read timeout many times. It
// fails after twice the read timeout, a retry included.
func TestReadsOfAFrozenServerFailInTwiceTheReadTimeout(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	const readTimeout = 200 * time.Millisecond
	c := connectURL(t, redisclient.Options{URL: s.URL() + "?read_timeout=200ms&write_timeout=200ms"})
	s.Freeze(t)
	defer s.Thaw(t)
	for name, read := range map[string]func() error{
		"Fetch": func() error { _, err := c.Fetch(context.Background(), []string{"rl:1"}); return err },
		"Scan": func() error {
			return c.Scan(context.Background(), []string{"rl:*"}, 10, func([]string) error { return nil })
		},
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			err := read()
			if took := time.Since(start); err == nil || took > 5*readTimeout {
				t.Errorf("%s of a frozen server: %v after %v; want an error within about %v", name, err, took, 2*readTimeout)
			}
		})
	}
}

// With no key to read (a pattern nothing matches), a cycle of the poller
// asks Redis nothing before its pass: that must not say Redis answers
// again while it does not.
func TestPollWithNoKeysDoesNotSayRedisIsBackWhileItIsNot(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := connectURL(t, redisclient.Options{URL: s.URL() + "?read_timeout=100ms&write_timeout=100ms"})
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
	f.waitFor("the first pass", func() bool { return f.passes > 0 && !f.state.Scanning })
	s.Freeze(t)
	defer s.Thaw(t)
	f.waitFor("the state to say Redis stopped answering", func() bool { return f.state.LastError != "" })
	f.onBatch = func(b model.Batch) {
		if b.State != nil && b.State.LastError == "" {
			t.Errorf("while Redis is frozen the feed said all is well: %+v", *b.State)
		}
	}
	deadline := time.Now().Add(time.Second) // a few backoffs of 250 ms and up
	f.waitFor("a second", func() bool { return time.Now().After(deadline) })
}

// A server that answered and then stops answering (a slow command, a save
// forking a huge heap, a paused VM) is not a wrong address: the header says
// it stopped answering, and is healthy again once it answers.
func TestPollSaysWhenRedisStopsAnswering(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	c := connectURL(t, redisclient.Options{URL: s.URL() + "?read_timeout=300ms&write_timeout=300ms"})
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 100 * time.Millisecond})
	f.waitValue("rl:1", "1")

	s.Freeze(t)
	want := s.Addr + " stopped answering: it may be busy with a slow command or a save, or frozen — countertop keeps trying, and the values shown are as last read"
	f.waitFor("the state to say Redis stopped answering", func() bool { return f.state.LastError == want })
	s.Thaw(t)
	f.waitFor("the state to be healthy again", func() bool { return f.state.LastError == "" && f.state.Connected })
	s.Do(t, "INCR", "rl:1")
	f.waitValue("rl:1", "2")
}

// A server that answered and then refuses the reads (its password changed
// under countertop) leaves the rows as stale as an outage does: the
// sentence says why, and that the values shown are as last read.
func TestPollSaysTheValuesAreStaleWhenRedisRefuses(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "1")
	c := connectURL(t, redisclient.Options{URL: s.URL()})
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 100 * time.Millisecond})
	f.waitValue("rl:1", "1")

	s.Do(t, "CONFIG", "SET", "requirepass", "changed")
	s.Do(t, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	f.until("the sentence to say the values are stale", func() string {
		if e := f.state.LastError; !strings.Contains(e, "password") || !strings.HasSuffix(e, "; countertop keeps trying, and the values shown are as last read") {
			return fmt.Sprintf("error %q", e)
		}
		return ""
	})
	s.Do(t, "CONFIG", "SET", "requirepass", "")
	f.waitFor("the state to be healthy again", func() bool { return f.state.LastError == "" })
}
