package redisclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// flood runs n INCRs, spread over keys rl:flood:<i>, in one EVAL: Redis
// queues all their messages at once, faster than any client could send
// the writes.
func flood(t *testing.T, rdb *redis.Client, n, keys int) {
	t.Helper()
	script := `for i = 1, tonumber(ARGV[1]) do redis.call('INCR', 'rl:flood:' .. (i % tonumber(ARGV[2]))) end`
	if err := rdb.Eval(context.Background(), script, nil, n, keys).Err(); err != nil && err != redis.Nil {
		t.Fatal(err)
	}
}

// A flood of changes that countertop takes in slower than they come (here,
// because the budget lets it re-read only so many keys a second) shows in
// the feed's Health as how far behind it is; once it has read them all, it
// is behind no more, and the rows are right.
func TestFallingBehindIsMeasured(t *testing.T) {
	for _, mode := range pushModes() {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			rdb := s.Client(t)
			c := connectURL(t, redisclient.Options{URL: s.URL(), MaxCommands: 1000}) // 500 keys a second
			w := startWatch(t, c, redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 30 * time.Second},
				Mode:        mode,
				ResyncEvery: time.Hour,
			})
			w.until("the first pass", func() string {
				if !watchingIn(w.state, mode) || w.state.Scanning || w.health.At.IsZero() {
					return fmt.Sprintf("mode %q, scanning %v, health %+v", w.state.Mode, w.state.Scanning, w.health)
				}
				return ""
			})
			flood(t, rdb, 3000, 3000)
			w.until("the feed to say it is behind", func() string {
				if w.health.Behind < time.Second {
					return fmt.Sprintf("health %+v", w.health)
				}
				return ""
			})
			t.Logf("behind by %v", w.health.Behind)
			w.untilWithin(2*time.Minute, "the feed to catch up", func() string {
				if w.health.Behind != 0 {
					return fmt.Sprintf("health %+v", w.health)
				}
				return storeDiff(t, w.store, "rl:*", []*redis.Client{rdb})
			})
		})
	}
}

// A flood past client-output-buffer-limit pubsub makes Redis close the
// subscription: the feed says so in one sentence, which names the setting
// to change, and keeps saying it once subscribed again; a full pass then
// leaves every row right.
func TestOutputBufferCloseIsSaid(t *testing.T) {
	for _, mode := range pushModes() {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			s.Do(t, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 64kb 32kb 1")
			rdb := s.Client(t)
			w := startWatch(t, connect(t, s), redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 30 * time.Second},
				Mode:        mode,
				ResyncEvery: time.Hour,
			})
			w.waitPassIn(mode, 0)
			passes := w.passes
			flood(t, rdb, 20000, 5000) // over a megabyte of messages at once
			said := func(st model.FeedState) bool {
				text := st.LastError + " " + st.Note
				return strings.Contains(text, "Redis closed the") && strings.Contains(text, "client-output-buffer-limit pubsub") &&
					strings.Contains(text, `CONFIG SET client-output-buffer-limit "pubsub 64mb 16mb 60"`)
			}
			w.until("the close said", func() string {
				if !said(w.state) {
					return fmt.Sprintf("error %q, note %q", w.state.LastError, w.state.Note)
				}
				return ""
			})
			t.Logf("said: %s", w.state.LastError)
			w.waitPassIn(mode, passes)
			w.until("the feed healthy, the sentence still in its note", func() string {
				if !watchingIn(w.state, mode) || w.state.LastError != "" || !said(w.state) {
					return fmt.Sprintf("mode %q, error %q, note %q", w.state.Mode, w.state.LastError, w.state.Note)
				}
				return storeDiff(t, w.store, "rl:*", []*redis.Client{rdb})
			})
			s.Do(t, "INCR", "rl:flood:1") // followed again
			w.waitMatches("rl:*", rdb)
		})
	}
}
