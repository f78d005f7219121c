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

// startEvents watches patterns in events mode with no periodic re-scan
// within the test's time, so that only events and (re)subscriptions can
// change the store, and waits for the first full pass to end.
func startEvents(t *testing.T, c *redisclient.Client, patterns ...string) *feed {
	t.Helper()
	w := startWatch(t, c, redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: patterns},
		Mode:        model.WatchEvents,
		ResyncEvery: time.Hour,
	})
	w.waitSynced()
	return w
}

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

func TestEventsFollowEachKindOfChange(t *testing.T) {
	t.Parallel()
	// Exactly the classes countertop asks for: they must be enough.
	s := redistest.Start(t, "--notify-keyspace-events", "K$gxehzl")
	s.Do(t, "SET", "rl:a", "1")
	s.Do(t, "SET", "rl:ttl", "5", "EX", "100")
	rdb := s.Client(t)
	w := startEvents(t, connect(t, s), "rl:*")
	w.waitValue("rl:a", "1")
	w.waitValue("rl:ttl", "5")

	steps := []struct {
		name string
		do   func()
	}{
		{"incrby", func() {
			s.Do(t, "INCRBY", "rl:a", "5")
			w.waitValue("rl:a", "6")
		}},
		{"incr and decr", func() {
			s.Do(t, "INCR", "rl:a")
			s.Do(t, "DECRBY", "rl:a", "3")
			w.waitValue("rl:a", "4")
		}},
		{"incrbyfloat", func() {
			s.Do(t, "INCRBYFLOAT", "rl:f", "1.5")
			w.waitValue("rl:f", "1.5")
		}},
		{"set clears the TTL", func() {
			s.Do(t, "SET", "rl:ttl", "7")
			w.waitFor("rl:ttl = 7 without TTL", func() bool {
				c, _ := w.store.Get("rl:ttl")
				return c.Raw == "7" && !c.HasTTL()
			})
		}},
		{"expire re-extends the TTL", func() {
			s.Do(t, "SET", "rl:e", "1", "PX", "10000")
			if c := w.waitValue("rl:e", "1"); c.PTTL > 10000 {
				t.Fatalf("PTTL %d after PX 10000", c.PTTL)
			}
			s.Do(t, "PEXPIRE", "rl:e", "100000")
			w.waitFor("rl:e's new TTL", func() bool { c, _ := w.store.Get("rl:e"); return c.PTTL > 50000 })
		}},
		{"persist", func() {
			s.Do(t, "PERSIST", "rl:e")
			w.waitFor("rl:e without TTL", func() bool { c, ok := w.store.Get("rl:e"); return ok && !c.HasTTL() })
		}},
		{"del", func() {
			s.Do(t, "DEL", "rl:a")
			w.waitGone("rl:a")
		}},
		{"rename", func() {
			s.Do(t, "SET", "rl:old", "3")
			w.waitValue("rl:old", "3")
			s.Do(t, "RENAME", "rl:old", "rl:new")
			w.waitGone("rl:old")
			w.waitValue("rl:new", "3")
		}},
		{"expired", func() {
			s.Do(t, "SET", "rl:short", "1")
			w.waitValue("rl:short", "1")
			s.Do(t, "PEXPIRE", "rl:short", "50")
			w.waitGone("rl:short")
		}},
		{"del and create again", func() {
			s.Do(t, "SET", "rl:again", "1")
			s.Do(t, "DEL", "rl:again")
			s.Do(t, "SET", "rl:again", "2")
			w.waitValue("rl:again", "2")
		}},
		{"any bytes in a key name", func() {
			key := "rl:a:b\n\x00\xff"
			s.Do(t, "SET", key, "9")
			w.waitValue(key, "9")
		}},
		{"another type", func() {
			s.Do(t, "SET", "rl:h", "1")
			w.waitValue("rl:h", "1")
			s.Do(t, "DEL", "rl:h")
			s.Do(t, "HSET", "rl:h", "f", "1")
			w.waitFor("rl:h as a hash", func() bool { c, _ := w.store.Get("rl:h"); return c.Type == "hash" })
		}},
		{"hincrby, zadd and lpush", func() {
			s.Do(t, "HINCRBY", "rl:h", "f", "10")
			// Logs of hit times (ms), without a window: their length.
			s.Do(t, "ZADD", "rl:z", "1700000000000", "a")
			s.Do(t, "ZADD", "rl:z", "1700000000001", "b")
			s.Do(t, "LPUSH", "rl:l", "1700000000000", "1700000000001", "1700000000002")
			for key, want := range map[string]int64{"rl:h": 11, "rl:z": 2, "rl:l": 3} {
				w.waitFor(fmt.Sprintf("%s = %d", key, want), func() bool { c, _ := w.store.Get(key); return c.Value.Int == want })
			}
		}},
	}
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) { step.do() })
	}

	// A key no pattern matches is never sent.
	s.Do(t, "SET", "other", "1")
	s.Do(t, "SET", "rl:last", "1")
	w.waitValue("rl:last", "1")
	if _, ok := w.store.Get("other"); ok {
		t.Error("a key no pattern matches was sent")
	}
	assertStoreMatchesRedis(t, w.store, "rl:*", rdb)
	if w.passes != 1 {
		t.Errorf("%d full passes; want only the first: events alone must keep the store right", w.passes)
	}
}

func TestEventsRemoveEvictedKeys(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "K$gxe", "--maxmemory-policy", "allkeys-random")
			rdb := s.Client(t)
			var w *feed
			if mode == model.WatchEvents {
				w = startEvents(t, connect(t, s), "rl:*")
			} else {
				w = startTracking(t, connect(t, s), "rl:*")
			}

			ctx := context.Background()
			base := infoField(t, rdb, "memory", "used_memory")
			s.Do(t, "CONFIG", "SET", "maxmemory", strconv.FormatInt(base+2<<20, 10))
			value := strings.Repeat("x", 2048)
			pipe := rdb.Pipeline()
			for i := range 3000 {
				pipe.Set(ctx, "rl:big:"+strconv.Itoa(i), value, 0)
			}
			if _, err := pipe.Exec(ctx); err != nil {
				t.Fatal(err)
			}
			if infoField(t, rdb, "stats", "evicted_keys") == 0 {
				t.Fatal("no key was evicted: the test needs a smaller maxmemory")
			}
			w.waitMatches("rl:*", rdb)
			if w.passes != 1 {
				t.Errorf("%d full passes; want evictions to be followed by %s alone", w.passes, mode)
			}
		})
	}
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
	w := startEvents(t, c, "rl:*")

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
	w := startEvents(t, connect(t, s), "b1:*")

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

// While nothing changes, the periodic pass of events and tracking reads no
// key: it scans for keys made or gone, and re-reads every key only one
// pass in ten.
func TestPeriodicPassReadsNoKey(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			msetNumbered(t, s, 200, "rl:%04d")
			w := startWatch(t, connect(t, s), redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
				Mode:        mode,
				ResyncEvery: 100 * time.Millisecond,
			})
			w.waitFor("the first pass", func() bool { return w.passes > 0 && !w.state.Scanning && w.store.Len() == 200 })
			before, passes := s.CommandCalls(t), w.passes
			w.waitFor("two periodic passes", func() bool { return w.passes >= passes+2 && !w.state.Scanning })
			after := s.CommandCalls(t)
			if n := after["getrange"] - before["getrange"]; n != 0 {
				t.Errorf("two periodic passes read %d keys while nothing changed; want none", n)
			}
			if after["scan"] <= before["scan"] {
				t.Error("the periodic passes sent no SCAN: they did not look for keys made or gone")
			}
		})
	}
}

// A pass is walked a slice at a time, and the keys events name are read
// between the slices: a key changed after the pass read it shows while the
// pass goes on, not once it is over.
func TestChangesAreReadDuringAPass(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			msetNumbered(t, s, 5000, "rl:%04d")
			// 10,000 reads at 2,000 commands a second: a pass of 5 s or more.
			c := connectURL(t, redisclient.Options{URL: s.URL(), MaxCommands: 2000})
			w := startWatch(t, c, redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}},
				Mode:        mode,
				ResyncEvery: time.Hour,
			})
			w.waitFor("the first pass to have read a key", func() bool { return w.state.Scanning && w.store.Len() > 0 })
			key := w.store.Rows(0, 1)[0].Key
			s.Do(t, "SET", key, "changed")
			w.waitValue(key, "changed")
			if !w.state.Scanning {
				t.Errorf("%s was read again only once the pass was over; want it read while the pass went on", key)
			}
		})
	}
}
