package redisclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// FLUSHDB, FLUSHALL and SWAPDB send no keyspace event for the keys they
// delete or replace, and SWAPDB no invalidation: in every mode the rows of
// a flushed database leave the dashboard within an interval and a pass, not
// at the next re-scan (an hour away here), and the feed stays healthy. The
// database swapped in holds more keys than the one watched, one of them
// under a watched key's name with another value: DBSIZE does not fall.
func TestFlushesLeaveNoStaleRow(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll} {
		for _, flush := range [][]any{{"FLUSHDB"}, {"FLUSHALL"}, {"SWAPDB", "0", "9"}} {
			t.Run(mode.String()+"/"+flush[0].(string), func(t *testing.T) {
				t.Parallel()
				s := redistest.Start(t, "--notify-keyspace-events", "KEA")
				s.Do(t, "MSET", "rl:a", "1", "rl:b", "100", "session:x", "1")
				db9 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 9})
				t.Cleanup(func() { db9.Close() })
				if err := db9.MSet(context.Background(), "rl:a", "swapped", "rl:z1", "1", "rl:z2", "2", "rl:z3", "3", "other", "1").Err(); err != nil {
					t.Fatal(err)
				}
				rdb := s.Client(t)
				o := liveOptions(mode)
				w := startWatch(t, connect(t, s), o)
				w.waitFor("the first rows", func() bool { return watchingIn(w.state, mode) && w.store.Len() == 2 })
				s.Do(t, flush...)
				s.Do(t, "SET", "rl:c", "1") // written after: an event, and a key
				w.waitMatches("rl:*", rdb)
				if v, ok := w.store.Get("rl:a"); ok && flush[0] != "SWAPDB" || ok && v.Raw != "swapped" {
					t.Errorf("after %s the store holds rl:a = %q", flush, v.Raw)
				}
				if !watchingIn(w.state, mode) || w.state.LastError != "" {
					t.Errorf("after %s: mode %v %v, error %q; want %v, healthy", flush, w.state.Mode, w.state.Phase, w.state.LastError, mode)
				}
			})
		}
	}
}

// INFO cannot say which database a FLUSHDB or SWAPDB was for: one on
// another database, or a SWAPDB that failed, starts no full pass (at a
// million keys, a flush of a scratch database every few seconds would
// otherwise keep countertop scanning), and the rows stay.
func TestEventsIgnoreFlushesOfOtherDatabases(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	s.Do(t, "SET", "rl:b", "2")
	w := eventsEvery(t, connect(t, s), 20*time.Millisecond)
	w.waitSynced()
	db3 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3})
	t.Cleanup(func() { db3.Close() })
	ctx := context.Background()
	for range 5 {
		if err := db3.FlushDB(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		if err := db3.Do(ctx, "SWAPDB", 0, 99).Err(); err == nil {
			t.Fatal("SWAPDB 0 99 succeeded; the test wants one that fails")
		}
		start := time.Now()
		w.waitFor("three intervals", func() bool { return time.Since(start) > 60*time.Millisecond })
	}
	if w.passes != 1 || w.store.Len() != 2 {
		t.Errorf("%d full passes, %d keys held; want the first pass only, and both keys", w.passes, w.store.Len())
	}
}

// A user that may not run INFO is asked once whether the master flushed,
// not every interval: its ACL LOG keeps one entry, and the feed follows
// events as before (flushes then show at the next re-scan).
func TestEventsDoNotAskAgainForARefusedInfo(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	c := connectAs(t, s, "+@all", "-info", "&*")
	before := refusedInfo(t, s) // connecting asks INFO cluster
	w := eventsEvery(t, c, 20*time.Millisecond)
	w.waitSynced()
	start := time.Now()
	w.waitFor("twenty intervals", func() bool { return time.Since(start) > 20*20*time.Millisecond })
	s.Do(t, "SET", "rl:a", "2")
	w.waitValue("rl:a", "2")
	if refusals := refusedInfo(t, s) - before; refusals != 1 {
		t.Errorf("the watcher was refused INFO %d times; want once", refusals)
	}
	if !watchingIn(w.state, model.WatchEvents) || w.state.LastError != "" {
		t.Errorf("mode %q, error %q; want events, healthy", w.state.Mode, w.state.LastError)
	}
}

// refusedInfo is how many times s's ACL LOG says INFO was refused.
func refusedInfo(t *testing.T, s *redistest.Server) int64 {
	t.Helper()
	n := int64(0)
	for _, e := range s.Do(t, "ACL", "LOG").([]any) {
		if entry := e.(map[any]any); entry["object"] == "info" {
			n += entry["count"].(int64)
		}
	}
	return n
}
