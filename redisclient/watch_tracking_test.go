package redisclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// slowPoll is an interval that no test waits out: a change that reaches the
// store came from an invalidation (or a full pass), not from polling, nor
// from the flush check that runs every interval.
const slowPoll = 30 * time.Second

// trackingOptions watches patterns in mode with a 30 s interval and no
// periodic re-scan within the test's time.
func trackingOptions(mode model.WatchMode, patterns ...string) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: patterns, Interval: slowPoll},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
}

// waitPassIn waits until a full pass after the first passes has ended
// with the feed healthy in mode.
func (f *feed) waitPassIn(mode model.WatchMode, passes int) {
	f.t.Helper()
	f.until("a full pass in "+mode.String()+" mode", func() string {
		if st := f.state; f.passes <= passes || st.Scanning || !watchingIn(st, mode) || st.LastError != "" {
			return fmt.Sprintf("%d passes, mode %v %v, scanning %v, error %q", f.passes, st.Mode, st.Phase, st.Scanning, st.LastError)
		}
		return ""
	})
}

// Redis names every key under the prefix ("rl:" for rl:*:hits): those the
// pattern does not match are never read.
func TestTrackingReadsOnlyKeysThePatternsMatch(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	w := startLive(t, connect(t, s), model.WatchTracking, "rl:*:hits", "rl:api:*:hits")
	before := s.CommandCalls(t)["pttl"]
	for i := range 100 {
		s.Do(t, "INCR", fmt.Sprintf("rl:%d:other", i))
	}
	s.Do(t, "INCR", "rl:x:hits")
	w.waitValue("rl:x:hits", "1")
	if n := s.CommandCalls(t)["pttl"] - before; n != 1 {
		t.Errorf("%d keys read; want only rl:x:hits", n)
	}
	if w.store.Len() != 1 {
		t.Errorf("%d keys held; want only rl:x:hits", w.store.Len())
	}
}

// A pattern with no literal prefix has Redis name every key written, and
// the header says so.
func TestTrackingEveryKey(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	w := startLive(t, connect(t, s), model.WatchTracking, "rl:*", "*:hits")
	want := `tracking every key: the pattern "*:hits" has no literal prefix; re-scan every 1h00m (a full one every 10h00m), in case an invalidation was lost`
	if w.state.Note != want {
		t.Errorf("Note = %q\nwant %q", w.state.Note, want)
	}
	s.Do(t, "INCR", "api:hits")
	s.Do(t, "INCR", "rl:a")
	w.waitValue("api:hits", "1")
	w.waitValue("rl:a", "1")
}

// Auto mode tracks when the server sends no keyspace notifications, and
// says why.
func TestWatchAutoTracksWhenNotificationsAreOff(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	w := startWatch(t, connect(t, s), trackingOptions(model.WatchAuto, "rl:*"))
	w.waitPassIn(model.WatchTracking, 0)
	want := `tracking: keyspace notifications are off on the server (notify-keyspace-events=""); CLIENT TRACKING needs no server config; re-scan every 1h00m (a full one every 10h00m), in case an invalidation was lost`
	if w.state.Note != want {
		t.Errorf("Note = %q\nwant %q", w.state.Note, want)
	}
	s.Do(t, "INCR", "rl:a")
	w.waitValue("rl:a", "1")
}

// A user who may not use CLIENT TRACKING: auto polls, and says why
// neither events nor tracking can be used; tracking mode fails at start.
func TestWatchWithoutClientTracking(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := connectAs(t, s, "+@all", "&*", "-client|tracking")
	w := startWatch(t, c, trackingOptions(model.WatchAuto, "rl:*"))
	w.waitFor("polling", func() bool { return watchingIn(w.state, model.WatchPoll) })
	want := `polling: keyspace notifications are off on the server (notify-keyspace-events=""); ` +
		`the Redis user may not use client tracking; ` +
		`run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxehzl', or grant the user +client|tracking +client|id +subscribe &__redis__:invalidate to get live updates`
	if w.state.Note != want {
		t.Errorf("Note = %q\nwant %q", w.state.Note, want)
	}

	err := c.Watch(context.Background(), trackingOptions(model.WatchTracking, "rl:*"), make(chan model.Batch, 8))
	checkSentence(t, err, "the Redis user may not use client tracking — grant the user +client|tracking +client|id +subscribe &__redis__:invalidate, or use --mode poll", "pw")
}

// Notifications turned off while countertop follows them: it tracks
// instead, in events mode as in auto, and says why.
func TestWatchFallsBackToTrackingWhenNotificationsGoOff(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchAuto} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			s.Do(t, "SET", "rl:a", "1")
			w := startWatch(t, connect(t, s), liveOptions(mode))
			w.waitLive()

			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
			w.waitPassIn(model.WatchTracking, w.passes)
			want := `tracking: keyspace notifications are off on the server (notify-keyspace-events=""); CLIENT TRACKING needs no server config; re-scan every 1h00m (a full one every 10h00m), in case an invalidation was lost`
			if w.state.Note != want {
				t.Errorf("Note = %q\nwant %q", w.state.Note, want)
			}
			w.waitSubscriptions(s, 1) // the events' subscriber stopped; tracking's took over
			passes := w.passes
			s.Do(t, "INCR", "rl:a")
			w.waitValue("rl:a", "2")
			w.noExtraPass(passes)
			if w.sawPhase(model.FeedReconnecting) || w.sawWatching(model.WatchPoll) {
				t.Errorf("modes %q; want events, then tracking", w.modes)
			}

			// Back on: events again within a few intervals, with one
			// subscription, and no tracking left on the server.
			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
			w.waitLive()
			w.waitSubscriptions(s, 1)
			if list := s.Do(t, "CLIENT", "LIST").(string); strings.Contains(list, "flags=t") {
				t.Errorf("a connection still tracks after going back to events:\n%s", list)
			}
			s.Do(t, "INCR", "rl:a")
			w.waitValue("rl:a", "3")
		})
	}
}

// Auto mode that started on tracking because the notifications were off
// follows events once someone turns them on; tracking mode asked for
// stays on tracking.
func TestWatchAutoTracksUntilNotificationsAreOn(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchAuto, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t)
			w := startWatch(t, connect(t, s), liveOptions(mode))
			w.waitPassIn(model.WatchTracking, 0)
			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
			if mode == model.WatchAuto {
				w.waitLive()
				s.Do(t, "INCR", "rl:a")
				w.waitValue("rl:a", "1")
				return
			}
			start := time.Now()
			w.waitFor("three rechecks' worth", func() bool { return time.Since(start) > 3*5*100*time.Millisecond })
			if !watchingIn(w.state, model.WatchTracking) || w.sawWatching(model.WatchEvents) {
				t.Errorf("modes %q, now %q; want tracking, as asked", w.modes, w.state.Mode)
			}
		})
	}
}

// The tracking connection killed: Redis would send nothing more, so the
// watchdog's ping notices, tracking starts over, and a full pass finds
// what changed meanwhile.
func TestTrackingReplacesALostTrackingConnection(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	o := trackingOptions(model.WatchTracking, "rl:*")
	o.SetHealthEvery(50 * time.Millisecond)
	w := startWatch(t, connect(t, s), o)
	w.waitPassIn(model.WatchTracking, 0)

	passes := w.passes
	for line := range strings.Lines(s.Do(t, "CLIENT", "LIST").(string)) {
		if strings.Contains(line, " redir=") && !strings.Contains(line, " redir=-1 ") {
			id, _, _ := strings.Cut(strings.TrimPrefix(line, "id="), " ")
			s.Do(t, "CLIENT", "KILL", "ID", id)
		}
	}
	s.Do(t, "SET", "rl:x", "1") // no one tracks: only the pass after can find it
	w.waitFor("the lost tracking said", func() bool {
		return w.state.Phase == model.FeedReconnecting && strings.Contains(w.state.LastError, "its tracking connection failed")
	})
	w.waitPassIn(model.WatchTracking, passes)
	w.waitValue("rl:x", "1")
	s.Do(t, "INCR", "rl:x")
	w.waitValue("rl:x", "2")
}
