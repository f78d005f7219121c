package redisclient_test

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// offNote is the feed's Note while countertop polls because the single
// server it watches sends no keyspace notifications, and the user (see
// noTracking) may not use client tracking.
const offNote = `polling: keyspace notifications are off on the server (notify-keyspace-events=""); ` +
	`the Redis user may not use client tracking; ` +
	`run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxehzl', ` +
	`or grant the user +client|tracking +client|id +subscribe &__redis__:invalidate to get live updates`

// noTracking are the ACL rules (see connectAs) of a user who may do all
// but client tracking: where notifications are off, auto mode polls.
var noTracking = []any{"+@all", "&*", "-client|tracking"}

// liveOptions watches rl:* in mode with a short interval, so that a
// change of the server's setting is noticed within a second, and no
// periodic re-scan within the test's time: a change that reaches the store
// without an event was read by polling.
func liveOptions(mode model.WatchMode) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 100 * time.Millisecond},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
}

// waitPolling waits until the feed polls, healthy, with note, which says
// why.
func (f *feed) waitPolling(note string) {
	f.t.Helper()
	f.until("polling, saying why", func() string {
		if st := f.state; !watchingIn(st, model.WatchPoll) || st.Note != note || st.LastError != "" || !st.Connected {
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
		if st := f.state; !watchingIn(st, model.WatchEvents) || st.Scanning || st.LastError != "" || st.Note != "re-scan every 1h00m (a full one every 10h00m), in case an event was lost" {
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

// Notifications turned off while countertop watches live, for a user who
// may not track: it polls, and says so, within a few intervals instead of
// showing stale values under "events"; once they are back on, it goes
// live again. In events mode as in auto: the mode was chosen for live
// updates, and polling is the nearest thing to them.
func TestWatchFallsBackToPollingWhenNotificationsGoOff(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchAuto} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			s.Do(t, "SET", "rl:a", "1")
			w := startWatch(t, connectAs(t, s, noTracking...), liveOptions(mode))
			w.waitLive()
			w.waitValue("rl:a", "1")

			s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
			w.waitPolling(offNote)
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
			if w.sawPhase(model.FeedReconnecting) {
				t.Errorf("modes %q; want no reconnecting: Redis answered all along", w.modes)
			}
		})
	}
}

// A server that restarts without the notifications (they had been turned
// on with CONFIG SET, which a restart forgets) is up and answering: the
// header must say polling and why, not reconnecting forever. (This one
// has no CLIENT command, so tracking cannot take over.)
func TestWatchFallsBackToPollingWhenARestartTurnsNotificationsOff(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--rename-command", "CLIENT", "")
	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	w := startWatch(t, connect(t, s), liveOptions(model.WatchEvents))
	w.waitLive()

	s.Stop()
	w.waitFor("the lost subscription in the state", func() bool { return w.state.Phase == model.FeedReconnecting })
	s.Restart(t)
	w.waitPolling(`polling: keyspace notifications are off on the server (notify-keyspace-events=""); ` +
		`the server does not offer client tracking, which needs Redis 6 or later; ` +
		`run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxehzl' to get live updates`)
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
	o := liveOptions(model.WatchEvents)
	o.EnableEvents = true
	w := startWatch(t, connect(t, s), o)
	w.waitLive()

	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
	want := `turned keyspace notifications on (notify-keyspace-events was "", now "K$gxehzl"); re-scan every 1h00m (a full one every 10h00m), in case an event was lost`
	w.until("the notifications turned on again, and the pass after them over", func() string {
		if flags := notifyFlags(t, s); !strings.Contains(flags, "K") || w.state.Note != want || !watchingIn(w.state, model.WatchEvents) || w.state.Scanning {
			return fmt.Sprintf("notify-keyspace-events = %q, mode %q, note %q, scanning %v", flags, w.state.Mode, w.state.Note, w.state.Scanning)
		}
		return ""
	})
	s.Do(t, "SET", "rl:x", "1") // an event brings it: no pass is under way, the next is an hour away
	w.waitValue("rl:x", "1")
}

// A master whose setting loses the classes of hashes (or sorted sets, or
// lists) while countertop follows events stays followed: the keys of those
// types are read every interval, the Note says so, and once the classes are
// back, events alone tell their changes again.
func TestWatchPollsTypesWhoseClassesGoOff(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "K$gxehzl")
	s.Do(t, "HSET", "rl:h", "hits", "1")
	w := startWatch(t, connect(t, s), liveOptions(model.WatchEvents))
	w.waitLive()
	hits := func(want int64) {
		t.Helper()
		w.waitFor(fmt.Sprintf("rl:h = %d", want), func() bool { c, _ := w.store.Get("rl:h"); return c.Value.Int == want })
	}
	hits(1)

	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "K$gxe")
	const polled = "hashes, sorted sets and lists re-read every 0.1s: notify-keyspace-events lacks hzl; re-scan every 1h00m (a full one every 10h00m), in case an event was lost"
	w.waitFor("the Note to say hashes are polled", func() bool { return w.state.Note == polled && watchingIn(w.state, model.WatchEvents) })
	s.Do(t, "HINCRBY", "rl:h", "hits", "10") // no event: only a read on the poll schedule can see it
	hits(11)
	if c, _ := w.store.Get("rl:h"); c.KnownUntil.IsZero() {
		t.Error("a polled hash is vouched for as if events told its changes")
	}

	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "K$gxehzl")
	w.waitLive()
	s.Do(t, "HINCRBY", "rl:h", "hits", "10") // an event brings it
	hits(21)
	w.waitFor("rl:h vouched for by events again", func() bool { c, _ := w.store.Get("rl:h"); return c.KnownUntil.IsZero() })
	if flags := notifyFlags(t, s); missing(flags, "K$gxehzl") {
		t.Errorf("notify-keyspace-events = %q", flags)
	}
}

// A subscriber that may no longer read the setting when it subscribes
// again (the user lost CONFIG GET) cannot follow events: countertop polls
// (the user may not track either), healthy, and says why, rather than show
// the subscription down for good while reads work.
func TestWatchResubscribeRefusedPolls(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c := connectAs(t, s, noTracking...)
	w := startWatch(t, c, liveOptions(model.WatchEvents))
	w.waitLive()

	s.Do(t, "ACL", "SETUSER", "watcher", "-config|get")
	s.Do(t, "CLIENT", "KILL", "TYPE", "pubsub")
	w.waitFor("polling, saying CONFIG GET is not allowed", func() bool {
		return watchingIn(w.state, model.WatchPoll) && w.state.Connected && strings.Contains(w.state.Note, "does not allow CONFIG GET (NOPERM")
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
	w := startWatch(t, c, liveOptions(model.WatchAuto))
	w.waitFor("the server's BUSY in the state", func() bool { return strings.Contains(w.state.LastError, "BUSY") })
	w.waitLive()
	if err := <-busy; err != nil {
		t.Fatalf("the script: %v", err)
	}
	if w.sawWatching(model.WatchPoll) {
		t.Errorf("modes %q: a busy server made auto mode poll", w.modes)
	}
}

// notifyFlags is the server's notify-keyspace-events.
func notifyFlags(t *testing.T, s *redistest.Server) string {
	t.Helper()
	reply := s.Do(t, "CONFIG", "GET", "notify-keyspace-events")
	switch r := reply.(type) {
	case map[any]any:
		return r["notify-keyspace-events"].(string)
	case []any:
		return r[1].(string)
	}
	t.Fatalf("CONFIG GET replied %#v", reply)
	return ""
}

// Auto mode follows events when the server sends the ones needed, and
// tracks otherwise, saying why.
func TestWatchAutoFollowsTheServersSetting(t *testing.T) {
	t.Parallel()
	const eventsNote = "re-scan every 30s (a full one every 5m00s), in case an event was lost"
	tracking := func(why string) string {
		return "tracking: " + why + "; CLIENT TRACKING needs no server config; re-scan every 30s (a full one every 5m00s), in case an invalidation was lost"
	}
	for _, tc := range []struct {
		flags string
		mode  model.WatchMode
		note  string
	}{
		{"KEA", model.WatchEvents, eventsNote},
		{"AK", model.WatchEvents, eventsNote},
		{"K$gxehzl", model.WatchEvents, eventsNote},
		// Without the classes of hashes, sorted sets and lists, their keys
		// are polled.
		{"K$gxe", model.WatchEvents, "hashes, sorted sets and lists re-read every 1.0s: notify-keyspace-events lacks hzl; " + eventsNote},
		{"K$gxeh", model.WatchEvents, "sorted sets and lists re-read every 1.0s: notify-keyspace-events lacks zl; " + eventsNote},
		{"Kg$lshzxetd", model.WatchEvents, eventsNote},
		{"", model.WatchTracking, tracking(`keyspace notifications are off on the server (notify-keyspace-events="")`)},
		{"EA", model.WatchTracking, tracking(`the server sends keyevent notifications but not the keyspace ones countertop follows (notify-keyspace-events="AE" lacks K)`)},
		{"Elh", model.WatchTracking, tracking(`the server sends keyevent notifications but not the keyspace ones countertop follows (notify-keyspace-events="lhE" lacks K$gxe)`)},
		{"E", model.WatchTracking, tracking(`keyspace notifications are off on the server (notify-keyspace-events="E")`)},
		{"Kgxe", model.WatchTracking, tracking(`the server's keyspace notifications leave out events countertop needs (notify-keyspace-events="gxeK" lacks $)`)},
	} {
		t.Run(cmp.Or(tc.flags, "empty"), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", tc.flags)
			before := notifyFlags(t, s)
			st := firstState(t, connect(t, s), watchOptions(model.WatchAuto))
			if !watchingIn(st, tc.mode) || st.Note != tc.note {
				t.Errorf("notify-keyspace-events=%q: mode %v %v, note %q\nwant mode %v, note %q", before, st.Mode, st.Phase, st.Note, tc.mode, tc.note)
			}
			if after := notifyFlags(t, s); after != before {
				t.Errorf("notify-keyspace-events changed from %q to %q without --enable-events", before, after)
			}
		})
	}
	// A user who may not track polls, and the note says how to get live
	// updates either way.
	s := redistest.Start(t)
	st := firstState(t, connectAs(t, s, noTracking...), watchOptions(model.WatchAuto))
	if !watchingIn(st, model.WatchPoll) || st.Note != offNote {
		t.Errorf("without client tracking: mode %q, note %q\nwant polling, %q", st.Mode, st.Note, offNote)
	}
}

func TestWatchEnableEventsAddsFlagsAndRemovesNone(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchAuto, model.WatchEvents} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "Elh")
			o := watchOptions(mode)
			o.EnableEvents = true
			st := firstState(t, connect(t, s), o)
			want := `turned keyspace notifications on (notify-keyspace-events was "lhE", now "lhEK$gxez"); re-scan every 30s (a full one every 5m00s), in case an event was lost`
			if !watchingIn(st, model.WatchEvents) || st.Note != want {
				t.Errorf("mode %q, note %q\nwant events, %q", st.Mode, st.Note, want)
			}
			flags := notifyFlags(t, s)
			for _, f := range "ElhK$gxez" {
				if !strings.ContainsRune(flags, f) {
					t.Errorf("notify-keyspace-events = %q: %c is missing", flags, f)
				}
			}
		})
	}
	t.Run("already on", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t, "--notify-keyspace-events", "KEA")
		o := watchOptions(model.WatchAuto)
		o.EnableEvents = true
		if st := firstState(t, connect(t, s), o); !watchingIn(st, model.WatchEvents) || st.Note != "re-scan every 30s (a full one every 5m00s), in case an event was lost" {
			t.Errorf("mode %q, note %q; want events, and nothing turned on", st.Mode, st.Note)
		}
		if flags := notifyFlags(t, s); flags != "AKE" {
			t.Errorf("notify-keyspace-events = %q; want it left as it was (AKE)", flags)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		o := watchOptions(model.WatchAuto)
		o.EnableEvents = true
		// Client tracking is no write: it follows changes all the same.
		want := "tracking: countertop is read-only (--read-only): CONFIG SET notify-keyspace-events 'K$gxehzl' was not sent; CLIENT TRACKING needs no server config; re-scan every 30s (a full one every 5m00s), in case an invalidation was lost"
		if st := firstState(t, c, o); !watchingIn(st, model.WatchTracking) || st.Note != want {
			t.Errorf("mode %q, note %q\nwant tracking, %q", st.Mode, st.Note, want)
		}
		if flags := notifyFlags(t, s); flags != "" {
			t.Errorf("notify-keyspace-events = %q; --read-only must change nothing", flags)
		}
	})
	t.Run("polling", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		o := watchOptions(model.WatchPoll)
		o.EnableEvents = true
		if st := firstState(t, connect(t, s), o); !watchingIn(st, model.WatchPoll) || st.Note != "" {
			t.Errorf("mode %q, note %q; want polling, without a note", st.Mode, st.Note)
		}
		if flags := notifyFlags(t, s); flags != "" {
			t.Errorf("notify-keyspace-events = %q; polling needs no notifications, want it left alone", flags)
		}
	})
}

// connectAs connects to s as an ACL user that the rules make.
func connectAs(t *testing.T, s *redistest.Server, rules ...any) *redisclient.Client {
	t.Helper()
	s.Do(t, append([]any{"ACL", "SETUSER", "watcher", "on", ">pw", "~*"}, rules...)...)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), Username: "watcher", Password: "pw"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestWatchWhereServerRefuses covers users and services that may not do
// what events mode needs: auto tracks instead (or, when tracking is
// refused too, polls) and says why, events fails.
func TestWatchWhereServerRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		flags     string
		enable    bool
		rules     []any // an ACL user's; nil: the default user
		args      []string
		auto      model.WatchMode // auto's mode
		why, more string          // what the note and the error both say; the note says more when it polls
	}{
		{
			name: "no CONFIG", flags: "KEA", rules: []any{"&*", "+@all", "-config"}, auto: model.WatchTracking,
			why:  "the server does not allow CONFIG GET (NOPERM",
			more: "grant the user CONFIG GET with ACL SETUSER <user> +config|get",
		},
		{
			// As managed services do.
			name: "CONFIG disabled", flags: "KEA", args: []string{"--rename-command", "CONFIG", ""}, auto: model.WatchTracking,
			why:  "the server does not allow CONFIG GET (ERR unknown command",
			more: "so countertop cannot tell whether keyspace notifications are on",
		},
		{
			name: "no CONFIG SET", flags: "", enable: true, rules: []any{"&*", "+@all", "-config|set"}, auto: model.WatchTracking,
			why:  "countertop could not turn keyspace notifications on (NOPERM",
			more: "set notify-keyspace-events to 'K$gxehzl' in the server's config",
		},
		{
			// No channel at all: neither the keyspace ones nor __redis__:invalidate.
			name: "no channels", flags: "KEA", rules: []any{"resetchannels", "+@all"}, auto: model.WatchPoll,
			why:  "the Redis user may not subscribe to keyspace notifications (NOPERM",
			more: "ACL SETUSER <user> &__keyspace@0__:rl:*",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := startConnected(t, append([]string{"--notify-keyspace-events", tc.flags}, tc.args...)...)
			if tc.rules != nil {
				c = connectAs(t, s, tc.rules...)
			}

			o := watchOptions(model.WatchAuto)
			o.EnableEvents = tc.enable
			st := firstState(t, c, o)
			polls := tc.auto == model.WatchPoll
			if !watchingIn(st, tc.auto) || !strings.HasPrefix(st.Note, tc.auto.Spec().Word+": "+tc.why) || polls && !strings.Contains(st.Note, tc.more) {
				t.Errorf("auto: mode %v %v, note %q\nwant %v, and a note that says %q ... %q", st.Mode, st.Phase, st.Note, tc.auto, tc.why, tc.more)
			}
			if polls && !strings.Contains(st.Note, "the Redis user may not use client tracking") {
				t.Errorf("auto: note %q; want it to say why it does not track either", st.Note)
			}

			o.Mode = model.WatchEvents
			err := c.Watch(context.Background(), o, make(chan model.Batch, 8))
			checkSentence(t, err, tc.why, "pw")
			checkSentence(t, err, tc.more, "pw")
		})
	}
}

// Auto mode looks at the notifications again only when a setting is
// missing: a user refused CONFIG GET would be refused again every time,
// and Redis's ACL LOG would fill with the refusals.
func TestWatchAutoDoesNotAskAgainWhatWasRefused(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c := connectAs(t, s, "+@all", "-config")
	w := startWatch(t, c, redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 20 * time.Millisecond},
		Mode:        model.WatchAuto,
	})
	w.waitFor("polling, with the refusal said", func() bool {
		return watchingIn(w.state, model.WatchPoll) && strings.Contains(w.state.Note, "does not allow CONFIG GET")
	})
	w.waitFor("twenty passes: four times the wait between looks", func() bool { return w.passes >= 20 })
	refusals := int64(0)
	for _, e := range s.Do(t, "ACL", "LOG").([]any) {
		entry := e.(map[any]any) // RESP3, as the test client speaks
		if entry["object"] == "config|get" {
			refusals += entry["count"].(int64)
		}
	}
	if refusals != 1 {
		t.Errorf("CONFIG GET was refused %d times; want once, at start", refusals)
	}
}
