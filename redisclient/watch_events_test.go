package redisclient_test

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// eventsEvery watches rl:* in events mode, checking the masters every
// interval, with no periodic re-scan within the test's time: only events,
// (re)subscriptions and what the watcher checks each interval can change
// the store.
func eventsEvery(t *testing.T, c *redisclient.Client, interval time.Duration) *feed {
	t.Helper()
	return startWatch(t, c, redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: interval},
		Mode:        model.WatchEvents,
		ResyncEvery: time.Hour,
	})
}

// waitSynced waits until a full pass has ended with the feed healthy in
// events mode.
func (f *feed) waitSynced() {
	f.t.Helper()
	f.waitPassAfter(0)
}

// waitPassAfter waits until a full pass after the first passes has ended
// with the feed healthy in events mode.
func (f *feed) waitPassAfter(passes int) {
	f.t.Helper()
	f.waitFor("a full pass in events mode", func() bool {
		return f.passes > passes && !f.state.Scanning && watchingIn(f.state, model.WatchEvents) && f.state.LastError == ""
	})
}

// waitMatches waits until the store holds exactly what nodes (one server,
// or every master of a cluster) hold under pattern (see storeDiff).
func (f *feed) waitMatches(pattern string, nodes ...*redis.Client) {
	f.t.Helper()
	f.until("the store to match Redis", func() string { return storeDiff(f.t, f.store, pattern, nodes) })
}

// assertStoreMatchesRedis fails the test unless the store holds exactly
// what nodes hold under pattern.
func assertStoreMatchesRedis(t *testing.T, store *model.Store, pattern string, nodes ...*redis.Client) {
	t.Helper()
	if diff := storeDiff(t, store, pattern, nodes); diff != "" {
		t.Fatalf("the store does not match Redis: %s", diff)
	}
}

// storeDiff compares the store with the keys matching pattern on nodes:
// the same keys, each with the same type and stored string, and with a TTL
// in both or in neither. It returns "" when they agree, else what differs.
//
// It reads each node in one pipeline, not a round trip per key: the feed
// waits while the test compares, and a slow comparison after each batch of
// thousands of keys would hold the feed back for longer than waitTimeout.
func storeDiff(t *testing.T, store *model.Store, pattern string, nodes []*redis.Client) string {
	t.Helper()
	ctx := context.Background()
	var diffs []string
	inRedis := map[string]bool{}
	for _, rdb := range nodes {
		var keys []string
		iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Fatal(err)
		}
		if len(keys) == 0 {
			continue
		}
		types := make([]*redis.StatusCmd, len(keys))
		values := make([]*redis.StringCmd, len(keys))
		pttls := make([]*redis.DurationCmd, len(keys))
		pipe := rdb.Pipeline()
		for i, key := range keys {
			types[i] = pipe.Type(ctx, key)
			values[i] = pipe.Get(ctx, key) // WRONGTYPE for the other types, unread
			pttls[i] = pipe.PTTL(ctx, key)
		}
		_, _ = pipe.Exec(ctx) // GET's errors are answers; TYPE's and PTTL's are checked below
		for i, key := range keys {
			if err := cmp.Or(types[i].Err(), pttls[i].Err()); err != nil {
				t.Fatal(err)
			}
			inRedis[key] = true
			typ := types[i].Val()
			raw := ""
			if typ == "string" {
				raw = values[i].Val()
			}
			pttl := pttls[i].Val()
			c, ok := store.Get(key)
			switch {
			case typ == "none":
				// gone since SCAN
			case !ok:
				diffs = append(diffs, fmt.Sprintf("%q is missing", key))
			case c.Type != typ || c.Raw != raw:
				diffs = append(diffs, fmt.Sprintf("%q holds %s %q, Redis %s %q", key, c.Type, c.Raw, typ, raw))
			case c.HasTTL() != (pttl >= 0):
				diffs = append(diffs, fmt.Sprintf("%q has PTTL %d, Redis %v", key, c.PTTL, pttl))
			}
		}
	}
	for _, c := range store.Rows(0, store.Len()) {
		if !inRedis[c.Key] {
			diffs = append(diffs, fmt.Sprintf("%q is held but not in Redis", c.Key))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

// infoField is a number from INFO section.
func infoField(t *testing.T, rdb *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %s = %q", section, field, v)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

func TestEventsUseTheClientsDatabase(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: "redis://" + s.Addr + "/3"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	w := startLive(t, c, model.WatchEvents, "rl:*")

	db3 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 3})
	t.Cleanup(func() { db3.Close() })
	s.Do(t, "SET", "rl:db0", "1") // database 0
	if err := db3.Set(context.Background(), "rl:db3", "3", 0).Err(); err != nil {
		t.Fatal(err)
	}
	w.waitValue("rl:db3", "3")
	if _, ok := w.store.Get("rl:db0"); ok {
		t.Error("a key of database 0 was sent while watching database 3")
	}
}

func TestEventsLostAreCaughtByTheRescan(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:a", "1")
	s.Do(t, "SET", "rl:b", "1")
	rdb := s.Client(t)
	w := startWatch(t, connect(t, s), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
		Mode:        model.WatchEvents,
		ResyncEvery: 100 * time.Millisecond,
	})
	w.waitSynced()
	if w.state.Note != "re-scan every 0.1s (a full one every 1.0s), in case an event was lost" {
		t.Errorf("Note = %q", w.state.Note)
	}

	// Changes Redis tells nobody about, with the notifications on: SWAPDB
	// sends no keyspace event, and database 0 becomes what database 9 was.
	db9 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 9})
	t.Cleanup(func() { db9.Close() })
	ctx := context.Background()
	if err := db9.Set(ctx, "rl:a", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := db9.Set(ctx, "rl:new", "1", 100*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	s.Do(t, "SWAPDB", "0", "9")
	w.waitMatches("rl:*", rdb)
	w.waitValue("rl:a", "2")
	if st := w.state; !watchingIn(st, model.WatchEvents) || st.Note != "re-scan every 0.1s (a full one every 1.0s), in case an event was lost" {
		t.Errorf("mode %q, note %q; want events, with its usual note: the notifications are on", st.Mode, st.Note)
	}
}

// TestEventsRace is the race from the counters lesson: 20 connections
// fire 500 INCRs each at one key while countertop watches, and the store
// must end at exactly 10000.
func TestEventsRace(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	w := startLive(t, connect(t, s), model.WatchEvents, "b1:*")

	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for range 20 {
		c := redis.NewClient(&redis.Options{Addr: s.Addr, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		wg.Go(func() {
			for range 500 {
				if err := c.Incr(context.Background(), "b1:hits").Err(); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	w.waitValue("b1:hits", "10000")
}

func TestEventsStopWhileNobodyReads(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "SET", "rl:1", "1")
	c := connect(t, s)
	o := redisclient.WatchOptions{PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}}, Mode: model.WatchEvents}
	out := make(chan model.Batch)
	stop := run(t, "Watch", watchWith(c, o), out)
	<-out // from now on, Watch has batches to send and nobody reads them
	s.Do(t, "INCR", "rl:1")
	stop()
}
