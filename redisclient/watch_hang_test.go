package redisclient_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// hangInterval is the poll interval of the hang tests: long enough that
// three of them leave a slow CI machine room (a hang shows within about
// two: the next command, then an interval unanswered), short enough that
// the test takes seconds.
const hangInterval = time.Second

// TestHangIsShownWithinThreeIntervals: in each mode, a server that stops
// answering (DEBUG SLEEP) is named silent in the feed's Health within
// three intervals of the sleep's start, subscriptions included (events and
// tracking send no read while nothing changes), and is healthy again once
// the sleep ends. A user who may not run INFO (which events and tracking
// send each interval to look for flushes) is no exception.
func TestHangIsShownWithinThreeIntervals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mode   model.WatchMode
		noInfo bool
	}{
		{"poll", model.WatchPoll, false},
		{"events", model.WatchEvents, false},
		{"tracking", model.WatchTracking, false},
		{"events without INFO", model.WatchEvents, true},
		{"tracking without INFO", model.WatchTracking, true},
	} {
		mode := tc.mode
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, c := startConnected(t, "--enable-debug-command", "local", "--notify-keyspace-events", "KEA")
			if tc.noInfo {
				s.Do(t, "ACL", "SETUSER", "noinfo", "reset", "on", ">pw", "~*", "&*", "+@all", "-info")
				c = connectURL(t, redisclient.Options{URL: s.URL(), Username: "noinfo", Password: "pw"})
			}
			msetNumbered(t, s, 50, "rl:%d")
			w := startWatch(t, c, redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: hangInterval},
				Mode:        mode,
				ResyncEvery: time.Hour,
			})
			w.until("a healthy feed", func() string {
				if st, h := w.state, w.health; !watchingIn(st, mode) || st.Scanning || st.LastError != "" || h.At.IsZero() || h.Silent != "" {
					return fmt.Sprintf("mode %q, scanning %v, error %q, health %+v", st.Mode, st.Scanning, st.LastError, h)
				}
				return ""
			})

			slept := make(chan error, 1)
			sleeper := redis.NewClient(&redis.Options{Addr: s.Addr, ReadTimeout: time.Minute})
			t.Cleanup(func() { sleeper.Close() })
			if err := sleeper.Ping(context.Background()).Err(); err != nil { // connected before the clock starts
				t.Fatal(err)
			}
			start := time.Now()
			go func() { slept <- sleeper.Do(context.Background(), "DEBUG", "SLEEP", "5").Err() }()
			w.until("the hang to show", func() string {
				if w.health.Silent == "" {
					return fmt.Sprintf("health %+v", w.health)
				}
				return ""
			})
			took := w.health.At.Sub(start)
			t.Logf("the hang showed after %v", took)
			if took > 3*hangInterval {
				t.Errorf("the hang showed %v after it began, want within three intervals (%v)", took, 3*hangInterval)
			}
			if w.health.Silent != s.Addr {
				t.Errorf("the silent server is %q, want %q", w.health.Silent, s.Addr)
			}
			if err := <-slept; err != nil {
				t.Fatal(err)
			}
			w.until("the feed healthy again", func() string {
				if st, h := w.state, w.health; h.Silent != "" || st.LastError != "" || !watchingIn(st, mode) {
					return fmt.Sprintf("mode %q, error %q, health %+v", st.Mode, st.LastError, h)
				}
				return ""
			})
		})
	}
}
