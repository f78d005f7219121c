package redisclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// firstState runs Watch with o until it sends a state that says how it
// follows changes (events, tracking or polling), and returns that state.
func firstState(t *testing.T, c *redisclient.Client, o redisclient.WatchOptions) model.FeedState {
	t.Helper()
	w := startWatch(t, c, o)
	w.waitFor("a mode", func() bool { return w.state.Phase == model.FeedWatching })
	return w.state
}

// watchOptions watches rl:* in mode, with every other option at its default.
func watchOptions(mode model.WatchMode) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
		Mode:        mode,
	}
}

func TestWatchEventsModeNeedsNotifications(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	out := make(chan model.Batch, 8)
	err := c.Watch(context.Background(), watchOptions(model.WatchEvents), out)
	want := `keyspace notifications are off on the server (notify-keyspace-events="") — run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxehzl', or use --mode tracking or --mode poll`
	checkSentence(t, err, want, "")
	select {
	case b := <-out:
		if b.State == nil || b.State.LastError != err.Error() || b.State.Phase != model.FeedStopped {
			t.Errorf("state sent: %+v; want stopped, with the error", b.State)
		}
	default:
		t.Error("the error was not sent to the dashboard")
	}
	if flags := notifyFlags(t, s); flags != "" {
		t.Errorf("notify-keyspace-events = %q; want it left alone", flags)
	}
}

func TestWatchOptionErrors(t *testing.T) {
	t.Parallel()
	c := connect(t, redistest.Start(t))
	out := make(chan model.Batch, 8)
	err := c.Watch(context.Background(), redisclient.WatchOptions{Mode: model.WatchEvents}, out)
	checkSentence(t, err, "there is no key pattern to watch", "")
	err = c.Watch(context.Background(), watchOptions(model.NumWatchModes), out)
	checkSentence(t, err, "WatchMode(4) is not a watch mode: use auto, events, tracking, poll", "")
}

func TestWatchPollsWhenAsked(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	o := watchOptions(model.WatchPoll)
	o.Interval = 20 * time.Millisecond
	w := startWatch(t, connect(t, s), o)
	w.waitValue("rl:a", "1")
	s.Do(t, "INCR", "rl:a")
	w.waitValue("rl:a", "2")
	if !watchingIn(w.state, model.WatchPoll) || w.state.Interval != o.Interval {
		t.Errorf("state %+v; want polling every %v", w.state, o.Interval)
	}
}

// Auto mode polls while the server sends no keyspace notifications (and
// the user may not track), and goes live once someone turns them on: it
// looks again every few intervals.
func TestWatchAutoGoesLiveWhenNotificationsAreTurnedOn(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:a", "1")
	w := startWatch(t, connectAs(t, s, noTracking...), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond},
		Mode:        model.WatchAuto,
	})
	w.waitFor("polling", func() bool { return watchingIn(w.state, model.WatchPoll) })
	s.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	w.waitFor("events mode", func() bool { return watchingIn(w.state, model.WatchEvents) })
	if w.state.Note != "re-scan every 30s (a full one every 5m00s), in case an event was lost" {
		t.Errorf("note %q, want the events mode's", w.state.Note)
	}
	s.Do(t, "INCR", "rl:a")
	w.waitValue("rl:a", "2")
}
