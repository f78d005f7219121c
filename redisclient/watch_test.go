package redisclient_test

import (
	"cmp"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// firstState runs Watch with o until it sends a state that says how it
// follows changes (events or polling), and returns that state.
func firstState(t *testing.T, c *redisclient.Client, o redisclient.WatchOptions) model.FeedState {
	t.Helper()
	w := startWatch(t, c, o)
	w.waitFor("a mode", func() bool { return w.state.Mode == "events" || w.state.Mode == "polling" })
	return w.state
}

func watchOptions(mode string) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
		Mode:        mode,
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

func TestWatchAutoFollowsTheServersSetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		flags, mode, note string
	}{
		{"KEA", "events", "full re-scan every 30s, in case an event was lost"},
		{"AK", "events", "full re-scan every 30s, in case an event was lost"},
		{"K$gxe", "events", "full re-scan every 30s, in case an event was lost"},
		{"Kg$lshzxetd", "events", "full re-scan every 30s, in case an event was lost"},
		{"", "polling", `polling: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`},
		{"EA", "polling", `polling: the server sends keyevent notifications but not the keyspace ones countertop follows (notify-keyspace-events="AE" lacks K); run with --enable-events or CONFIG SET notify-keyspace-events 'AEK' to get live updates`},
		{"Elh", "polling", `polling: the server sends keyevent notifications but not the keyspace ones countertop follows (notify-keyspace-events="lhE" lacks K$gxe); run with --enable-events or CONFIG SET notify-keyspace-events 'lhEK$gxe' to get live updates`},
		{"E", "polling", `polling: keyspace notifications are off on the server (notify-keyspace-events="E"); run with --enable-events or CONFIG SET notify-keyspace-events 'EK$gxe' to get live updates`},
		{"Kgxe", "polling", `polling: the server's keyspace notifications leave out events countertop needs (notify-keyspace-events="gxeK" lacks $); run with --enable-events or CONFIG SET notify-keyspace-events 'gxeK$' to get live updates`},
	} {
		t.Run(cmp.Or(tc.flags, "empty"), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", tc.flags)
			before := notifyFlags(t, s)
			st := firstState(t, connect(t, s), watchOptions("auto"))
			if st.Mode != tc.mode || st.Note != tc.note {
				t.Errorf("notify-keyspace-events=%q: mode %q, note %q\nwant mode %q, note %q", before, st.Mode, st.Note, tc.mode, tc.note)
			}
			if after := notifyFlags(t, s); after != before {
				t.Errorf("notify-keyspace-events changed from %q to %q without --enable-events", before, after)
			}
		})
	}
}

func TestWatchEventsModeNeedsNotifications(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	out := make(chan model.Batch, 8)
	err := c.Watch(context.Background(), watchOptions("events"), out)
	want := `keyspace notifications are off on the server (notify-keyspace-events="") — run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe', or use --mode poll`
	checkSentence(t, err, want, "")
	select {
	case b := <-out:
		if b.State == nil || b.State.LastError != err.Error() || b.State.Mode != "stopped" {
			t.Errorf("state sent: %+v; want stopped, with the error", b.State)
		}
	default:
		t.Error("the error was not sent to the dashboard")
	}
	if flags := notifyFlags(t, s); flags != "" {
		t.Errorf("notify-keyspace-events = %q; want it left alone", flags)
	}
}

func TestWatchEnableEventsAddsFlagsAndRemovesNone(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"auto", "events"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "Elh")
			o := watchOptions(mode)
			o.EnableEvents = true
			st := firstState(t, connect(t, s), o)
			want := `turned keyspace notifications on (notify-keyspace-events was "lhE", now "lhEK$gxe"); full re-scan every 30s, in case an event was lost`
			if st.Mode != "events" || st.Note != want {
				t.Errorf("mode %q, note %q\nwant events, %q", st.Mode, st.Note, want)
			}
			flags := notifyFlags(t, s)
			for _, f := range "ElhK$gxe" {
				if !strings.ContainsRune(flags, f) {
					t.Errorf("notify-keyspace-events = %q: %c is missing", flags, f)
				}
			}
		})
	}
	t.Run("already on", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t, "--notify-keyspace-events", "KEA")
		o := watchOptions("auto")
		o.EnableEvents = true
		if st := firstState(t, connect(t, s), o); st.Mode != "events" || st.Note != "full re-scan every 30s, in case an event was lost" {
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
		o := watchOptions("auto")
		o.EnableEvents = true
		want := "polling: countertop is read-only (--read-only): CONFIG SET notify-keyspace-events 'K$gxe' was not sent; set notify-keyspace-events to 'K$gxe' in the server's config to get live updates"
		if st := firstState(t, c, o); st.Mode != "polling" || st.Note != want {
			t.Errorf("mode %q, note %q\nwant polling, %q", st.Mode, st.Note, want)
		}
		if flags := notifyFlags(t, s); flags != "" {
			t.Errorf("notify-keyspace-events = %q; --read-only must change nothing", flags)
		}
	})
	t.Run("polling", func(t *testing.T) {
		t.Parallel()
		s := redistest.Start(t)
		o := watchOptions("poll")
		o.EnableEvents = true
		if st := firstState(t, connect(t, s), o); st.Mode != "polling" || st.Note != "" {
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
// what events mode needs: auto polls and says why, events fails.
func TestWatchWhereServerRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		flags     string
		enable    bool
		rules     []any // an ACL user's; nil: the default user
		args      []string
		why, more string // what the note and the error both say
	}{
		{
			name: "no CONFIG", flags: "KEA", rules: []any{"&*", "+@all", "-config"},
			why:  "the server does not allow CONFIG GET (NOPERM",
			more: "grant the user CONFIG GET with ACL SETUSER <user> +config|get",
		},
		{
			// As managed services do.
			name: "CONFIG disabled", flags: "KEA", args: []string{"--rename-command", "CONFIG", ""},
			why:  "the server does not allow CONFIG GET (ERR unknown command",
			more: "so countertop cannot tell whether keyspace notifications are on",
		},
		{
			name: "no CONFIG SET", flags: "", enable: true, rules: []any{"&*", "+@all", "-config|set"},
			why:  "countertop could not turn keyspace notifications on (NOPERM",
			more: "set notify-keyspace-events to 'K$gxe' in the server's config",
		},
		{
			name: "no channels", flags: "KEA", rules: []any{"resetchannels", "+@all"},
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

			o := watchOptions("auto")
			o.EnableEvents = tc.enable
			st := firstState(t, c, o)
			if st.Mode != "polling" || !strings.HasPrefix(st.Note, "polling: "+tc.why) || !strings.Contains(st.Note, tc.more) {
				t.Errorf("auto: mode %q, note %q\nwant polling, and a note that says %q ... %q", st.Mode, st.Note, tc.why, tc.more)
			}

			o.Mode = "events"
			err := c.Watch(context.Background(), o, make(chan model.Batch, 8))
			checkSentence(t, err, tc.why, "pw")
			checkSentence(t, err, tc.more, "pw")
		})
	}
}

func TestWatchOptionErrors(t *testing.T) {
	t.Parallel()
	c := connect(t, redistest.Start(t))
	out := make(chan model.Batch, 8)
	err := c.Watch(context.Background(), redisclient.WatchOptions{Mode: "events"}, out)
	checkSentence(t, err, "there is no key pattern to watch", "")
	err = c.Watch(context.Background(), watchOptions("push"), out)
	checkSentence(t, err, `"push" is not a watch mode: use auto, events or poll`, "")
}

func TestWatchPollsWhenAsked(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	o := watchOptions("poll")
	o.Interval = 20 * time.Millisecond
	w := startWatch(t, connect(t, s), o)
	w.waitValue("rl:a", "1")
	s.Do(t, "INCR", "rl:a")
	w.waitValue("rl:a", "2")
	if w.state.Mode != "polling" || w.state.Interval != o.Interval {
		t.Errorf("state %+v; want polling every %v", w.state, o.Interval)
	}
}

// Auto mode polls while the server sends no keyspace notifications, and
// goes live once someone turns them on: it looks again every few intervals.
func TestWatchAutoGoesLiveWhenNotificationsAreTurnedOn(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:a", "1")
	w := startWatch(t, connect(t, s), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond},
		Mode:        "auto",
	})
	w.waitFor("polling", func() bool { return w.state.Mode == "polling" })
	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	w.waitFor("events mode", func() bool { return w.state.Mode == "events" })
	if w.state.Note != "full re-scan every 30s, in case an event was lost" {
		t.Errorf("note %q, want the events mode's", w.state.Note)
	}
	s.Do(t, "INCR", "rl:a")
	w.waitValue("rl:a", "2")
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
		Mode:        "auto",
	})
	w.waitFor("polling, with the refusal said", func() bool {
		return w.state.Mode == "polling" && strings.Contains(w.state.Note, "does not allow CONFIG GET")
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
