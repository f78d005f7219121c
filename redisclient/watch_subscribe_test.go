package redisclient_test

import (
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

func TestEventsSurviveRestart(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:before", "1")
	rdb := s.Client(t)
	w := startLive(t, connect(t, s), model.WatchEvents, "rl:*")
	w.waitValue("rl:before", "1")

	s.Stop()
	w.waitFor("the lost subscription in the state", func() bool {
		return w.state.Phase == model.FeedReconnecting && strings.HasPrefix(w.state.LastError, "the keyspace notifications subscription to "+s.Addr+" was lost")
	})
	w.waitFor("the refused connection in the state", func() bool {
		return w.state.Phase == model.FeedReconnecting && strings.HasPrefix(w.state.LastError, "could not connect to "+s.Addr+": connection refused — it answered before, so it is restarting or was stopped")
	})

	s.Restart(t) // starts empty: nothing is persisted
	s.Do(t, "SET", "rl:after", "2")
	w.waitValue("rl:after", "2")
	w.waitGone("rl:before")
	w.waitFor("a healthy state", func() bool {
		return watchingIn(w.state, model.WatchEvents) && w.state.Connected && w.state.LastError == ""
	})
	s.Do(t, "INCR", "rl:after")
	w.waitValue("rl:after", "3")
	assertStoreMatchesRedis(t, w.store, "rl:*", rdb)
}

func TestEventsReplaceASilentSubscription(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	o := redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
		Mode:        model.WatchEvents,
		ResyncEvery: time.Hour,
	}
	o.SetHealthEvery(50 * time.Millisecond)
	w := startWatch(t, connect(t, s), o)
	w.waitSynced()

	// A paused server answers nothing, as a dead connection would not.
	s.Do(t, "CLIENT", "PAUSE", "500", "ALL")
	w.waitFor("the silent subscription given up", func() bool { return w.state.Phase == model.FeedReconnecting })
	w.waitSynced()
	if w.passes < 2 {
		t.Errorf("%d full passes; want another after subscribing again", w.passes)
	}
	s.Do(t, "SET", "rl:x", "1")
	w.waitValue("rl:x", "1")
}
