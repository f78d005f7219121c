package redisclient_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

// offNote is the feed's Note while countertop polls because the single
// server it watches sends no keyspace notifications.
const offNote = `polling: keyspace notifications are off on the server (notify-keyspace-events=""); ` +
	`run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`

// liveOptions watches rl:* in mode with a short interval, so that a
// change of the server's setting is noticed within a second, and no
// periodic re-scan within the test's time: a change that reaches the store
// without an event was read by polling.
func liveOptions(mode string) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 100 * time.Millisecond},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
}

// waitPolling waits until the feed polls, healthy, with the Note that says
// the notifications are off.
func (f *feed) waitPolling() {
	f.t.Helper()
	f.until("polling, saying the notifications are off", func() string {
		if st := f.state; st.Mode != "polling" || st.Note != offNote || st.LastError != "" || !st.Connected {
			return fmt.Sprintf("mode %q, note %q, last error %q", st.Mode, st.Note, st.LastError)
		}
		return ""
	})
}

// waitLive waits until the feed follows events again, healthy, with the
// Note of events mode, and a full pass has ended.
func (f *feed) waitLive() {
	f.t.Helper()
	f.until("events again", func() string {
		if st := f.state; st.Mode != "events" || st.Scanning || st.LastError != "" || st.Note != "full re-scan every 1h00m, in case an event was lost" {
			return fmt.Sprintf("mode %q, scanning %v, note %q, last error %q", st.Mode, st.Scanning, st.Note, st.LastError)
		}
		return ""
	})
}

// waitSubscriptions waits until s has n subscribed clients (each watcher
// of rl:* has one). PUBSUB NUMPAT would not do: it counts patterns, and a
// second watcher of the same pattern adds none.
func (f *feed) waitSubscriptions(s *redistest.Server, n int) {
	f.t.Helper()
	f.until(fmt.Sprintf("%d subscribed clients", n), func() string {
		list, _ := s.Do(f.t, "CLIENT", "LIST", "TYPE", "pubsub").(string)
		if got := strings.Count(list, "\n"); got != n {
			return fmt.Sprintf("%d subscribed clients:\n%s", got, list)
		}
		return ""
	})
}

// Notifications turned off while countertop watches live: it polls, and
// says so, within a few intervals instead of showing stale values under
// "events"; once they are back on, it goes live again. In events mode as
// in auto: the mode was chosen for live updates, and polling is the
// nearest thing to them.
func TestWatchFallsBackToPollingWhenNotificationsGoOff(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"events", "auto"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			s.Do(t, "SET", "rl:a", "1")
			w := startWatch(t, connect(t, s), liveOptions(mode))
			w.waitLive()
			w.waitValue("rl:a", "1")

			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
			w.waitPolling()
			w.waitSubscriptions(s, 0) // the event watcher stopped, its subscriber too
			s.Do(t, "INCR", "rl:a")   // no event: only polling can see it
			w.waitValue("rl:a", "2")
			if flags := notifyFlags(t, s); flags != "" {
				t.Errorf("notify-keyspace-events = %q; want it left off without --enable-events", flags)
			}

			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
			w.waitLive()
			w.waitSubscriptions(s, 1) // one watcher, not one more
			s.Do(t, "INCR", "rl:a")   // polling has stopped: an event brings it
			w.waitValue("rl:a", "3")
			if slices.Contains(w.modes, "reconnecting") {
				t.Errorf("modes %q; want no reconnecting: Redis answered all along", w.modes)
			}
		})
	}
}

// A server that restarts without the notifications (they had been turned
// on with CONFIG SET, which a restart forgets) is up and answering: the
// header must say polling and why, not reconnecting forever.
func TestWatchFallsBackToPollingWhenARestartTurnsNotificationsOff(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	w := startWatch(t, connect(t, s), liveOptions("events"))
	w.waitLive()

	s.Stop()
	w.waitFor("the lost subscription in the state", func() bool { return w.state.Mode == "reconnecting" })
	s.Restart(t)
	w.waitPolling()
	s.Do(t, "SET", "rl:after", "1")
	w.waitValue("rl:after", "1")

	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	w.waitLive()
	s.Do(t, "INCR", "rl:after")
	w.waitValue("rl:after", "2")
}

// With --enable-events, notifications that someone turned off are turned
// on again, as at start-up, and the Note says so.
func TestWatchEnableEventsTurnsNotificationsOnAgain(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	o := liveOptions("events")
	o.EnableEvents = true
	w := startWatch(t, connect(t, s), o)
	w.waitLive()

	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
	want := `turned keyspace notifications on (notify-keyspace-events was "", now "K$gxe"); full re-scan every 1h00m, in case an event was lost`
	w.until("the notifications turned on again, and the pass after them over", func() string {
		if flags := notifyFlags(t, s); !strings.Contains(flags, "K") || w.state.Note != want || w.state.Mode != "events" || w.state.Scanning {
			return fmt.Sprintf("notify-keyspace-events = %q, mode %q, note %q, scanning %v", flags, w.state.Mode, w.state.Note, w.state.Scanning)
		}
		return ""
	})
	s.Do(t, "SET", "rl:x", "1") // an event brings it: no pass is under way, the next is an hour away
	w.waitValue("rl:x", "1")
}

// A subscriber that may no longer read the setting when it subscribes
// again (the user lost CONFIG GET) cannot follow events: countertop polls,
// healthy, and says why, rather than show the subscription down for good
// while reads work.
func TestWatchResubscribeRefusedPolls(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c := connectAs(t, s, "+@all", "&*")
	w := startWatch(t, c, liveOptions("events"))
	w.waitLive()

	s.Do(t, "ACL", "SETUSER", "watcher", "-config|get")
	s.Do(t, "CLIENT", "KILL", "TYPE", "pubsub")
	w.waitFor("polling, saying CONFIG GET is not allowed", func() bool {
		return w.state.Mode == "polling" && w.state.Connected && strings.Contains(w.state.Note, "does not allow CONFIG GET (NOPERM")
	})
	s.Do(t, "SET", "rl:after", "1") // no subscription: only polling can see it
	w.waitValue("rl:after", "1")
}

// A server busy with a script answers BUSY to CONFIG GET for a while: that
// says nothing of the notifications, and countertop goes live once the
// script is over, rather than polling for good.
func TestWatchAutoWaitsOutABusyServer(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA", "--busy-reply-threshold", "10")
	c := connect(t, s)
	script := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: -1}) // it answers when the script ends
	t.Cleanup(func() { script.Close() })
	busy := make(chan error, 1)
	go func() {
		// Busy for 3 s by the server's clock, in milliseconds.
		busy <- script.Eval(context.Background(), `local function ms() local t = redis.call('TIME') return t[1] * 1000 + math.floor(t[2] / 1000) end
			local start = ms() while ms() - start < 3000 do end return 1`, nil).Err()
	}()
	probe := s.Client(t)
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if err := probe.Ping(context.Background()).Err(); err != nil && strings.HasPrefix(err.Error(), "BUSY") {
			break // the script runs
		}
		if time.Now().After(deadline) {
			t.Fatal("the script did not make the server busy")
		}
	}
	w := startWatch(t, c, liveOptions("auto"))
	w.waitFor("the server's BUSY in the state", func() bool { return strings.Contains(w.state.LastError, "BUSY") })
	w.waitLive()
	if err := <-busy; err != nil {
		t.Fatalf("the script: %v", err)
	}
	if slices.Contains(w.modes, "polling") {
		t.Errorf("modes %q: a busy server made auto mode poll", w.modes)
	}
}
