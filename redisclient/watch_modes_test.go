package redisclient_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// The scenarios of this file run in every watch mode they apply to: every
// push mode (pushModes), and polling where the store must come out the
// same. A new mode is one more run of each, with nothing to add here but
// the server it needs (serverArgs).

// serverArgs are the arguments of a redis-server that mode can follow:
// the notifications' classes events mode asks for, exactly (they must be
// enough); none for tracking (it needs no server configuration) nor for
// polling.
func serverArgs(mode model.WatchMode) []string {
	if mode == model.WatchEvents {
		return []string{"--notify-keyspace-events", "K$gxehzl"}
	}
	return nil
}

// startLive watches patterns in mode, a push mode, with no periodic
// re-scan within the test's time, so that only what the mode follows and
// its (re)subscriptions change the store, and waits for the first full
// pass to end. Tracking polls at an interval no test waits out (slowPoll);
// events check for flushes every interval, and keep the default one.
func startLive(t *testing.T, c *redisclient.Client, mode model.WatchMode, patterns ...string) *feed {
	t.Helper()
	o := redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: patterns},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
	if mode == model.WatchTracking {
		o.Interval = slowPoll
	}
	w := startWatch(t, c, o)
	w.waitPassIn(mode, 0)
	return w
}

// startIn is startLive in a push mode, and polling every 50 ms in the
// others.
func startIn(t *testing.T, c *redisclient.Client, mode model.WatchMode, patterns ...string) *feed {
	t.Helper()
	if mode.Spec().Push {
		return startLive(t, c, mode, patterns...)
	}
	w := startWatch(t, c, redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: patterns, Interval: 50 * time.Millisecond},
		Mode:        mode,
	})
	w.waitPassIn(mode, 0)
	return w
}

// change is a change made on the server, in a scenario's order, and what
// the store shows once the feed has followed it.
type change struct {
	name string
	do   func(t *testing.T, s *redistest.Server, w *feed)
}

// eachKindOfChange is every kind of change a counter goes through, from
// rl:a = 1, rl:ttl = 5 (EX 100) and rl:gone = 1.
var eachKindOfChange = []change{
	{"incr", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "INCR", "rl:a")
		w.waitValue("rl:a", "2")
	}},
	{"incrby", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "INCRBY", "rl:a", "5")
		w.waitValue("rl:a", "7")
	}},
	{"incr and decr", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "INCR", "rl:a")
		s.Do(t, "DECRBY", "rl:a", "3")
		w.waitValue("rl:a", "5")
	}},
	{"incrbyfloat", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "INCRBYFLOAT", "rl:f", "1.5")
		w.waitValue("rl:f", "1.5")
	}},
	{"a new key", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "INCRBY", "rl:new", "5")
		w.waitValue("rl:new", "5")
	}},
	{"set clears the TTL", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:ttl", "7")
		w.waitFor("rl:ttl = 7 without TTL", func() bool {
			c, _ := w.store.Get("rl:ttl")
			return c.Raw == "7" && !c.HasTTL()
		})
	}},
	{"expire", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "EXPIRE", "rl:a", "100")
		w.waitFor("rl:a's TTL", func() bool { c, _ := w.store.Get("rl:a"); return c.PTTL > 50000 })
	}},
	{"expire re-extends the TTL", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:e", "1", "PX", "10000")
		if c := w.waitValue("rl:e", "1"); c.PTTL > 10000 {
			t.Fatalf("PTTL %d after PX 10000", c.PTTL)
		}
		s.Do(t, "PEXPIRE", "rl:e", "100000")
		w.waitFor("rl:e's new TTL", func() bool { c, _ := w.store.Get("rl:e"); return c.PTTL > 50000 })
	}},
	{"persist", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "PERSIST", "rl:e")
		w.waitFor("rl:e without TTL", func() bool { c, ok := w.store.Get("rl:e"); return ok && !c.HasTTL() })
	}},
	{"del", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "DEL", "rl:gone")
		w.waitGone("rl:gone")
	}},
	{"rename", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:old", "3")
		w.waitValue("rl:old", "3")
		s.Do(t, "RENAME", "rl:old", "rl:renamed")
		w.waitGone("rl:old")
		w.waitValue("rl:renamed", "3")
	}},
	{"expired", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:short", "1")
		w.waitValue("rl:short", "1")
		s.Do(t, "PEXPIRE", "rl:short", "50")
		w.waitGone("rl:short")
	}},
	{"del and create again", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:again", "1")
		s.Do(t, "DEL", "rl:again")
		s.Do(t, "SET", "rl:again", "2")
		w.waitValue("rl:again", "2")
	}},
	{"any bytes in a key name", func(t *testing.T, s *redistest.Server, w *feed) {
		key := "rl:a:b\n\x00\xff"
		s.Do(t, "SET", key, "9")
		w.waitValue(key, "9")
	}},
	{"another type", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "SET", "rl:h", "1")
		w.waitValue("rl:h", "1")
		s.Do(t, "DEL", "rl:h")
		s.Do(t, "HSET", "rl:h", "f", "1")
		w.waitFor("rl:h as a hash", func() bool { c, _ := w.store.Get("rl:h"); return c.Type == "hash" })
	}},
	{"hincrby, zadd and lpush", func(t *testing.T, s *redistest.Server, w *feed) {
		s.Do(t, "HINCRBY", "rl:h", "f", "10")
		// Logs of hit times (ms), without a window: their length.
		s.Do(t, "ZADD", "rl:z", "1700000000000", "a")
		s.Do(t, "ZADD", "rl:z", "1700000000001", "b")
		s.Do(t, "LPUSH", "rl:l", "1700000000000", "1700000000001", "1700000000002")
		for key, want := range map[string]int64{"rl:h": 11, "rl:z": 2, "rl:l": 3} {
			w.waitFor(fmt.Sprintf("%s = %d", key, want), func() bool { c, _ := w.store.Get(key); return c.Value.Int == want })
		}
	}},
	{"flushdb", func(t *testing.T, s *redistest.Server, w *feed) {
		// No message names the keys a flush takes: tracking's null, or
		// events' look at the flush counts, brings a pass.
		s.Do(t, "FLUSHDB")
		w.waitFor("an empty store", func() bool { return w.store.Len() == 0 })
		s.Do(t, "SET", "rl:after", "1")
		w.waitValue("rl:after", "1")
	}},
}

func TestEachKindOfChangeInEveryMode(t *testing.T) {
	for _, mode := range append(pushModes(), model.WatchPoll) {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, serverArgs(mode)...)
			s.Do(t, "SET", "rl:a", "1")
			s.Do(t, "SET", "rl:ttl", "5", "EX", "100")
			s.Do(t, "SET", "rl:gone", "1")
			rdb := s.Client(t)
			w := startIn(t, connect(t, s), mode, "rl:*")
			w.waitValue("rl:a", "1")
			w.waitValue("rl:ttl", "5")
			for _, c := range eachKindOfChange {
				t.Run(c.name, func(t *testing.T) { c.do(t, s, w) })
			}

			// A key no pattern matches is never sent.
			s.Do(t, "SET", "other", "1")
			s.Do(t, "SET", "rl:last", "1")
			w.waitValue("rl:last", "1")
			if _, ok := w.store.Get("other"); ok {
				t.Error("a key no pattern matches was sent")
			}
			assertStoreMatchesRedis(t, w.store, "rl:*", rdb)
			if !watchingIn(w.state, mode) || w.state.LastError != "" {
				t.Errorf("state %+v; want %v, healthy", w.state, mode)
			}
			if mode.Spec().Push && w.passes != 2 {
				t.Errorf("%d full passes; want the first and the flush's: %v alone must keep the store right", w.passes, mode)
			}
		})
	}
}

// The subscriber's connection killed: the mode subscribes again, saying
// meanwhile that it reconnects, and a full pass finds what changed
// meanwhile.
func TestResyncAfterTheSubscriberIsKilled(t *testing.T) {
	for _, mode := range pushModes() {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, serverArgs(mode)...)
			s.Do(t, "SET", "rl:a", "1")
			rdb := s.Client(t)
			w := startLive(t, connect(t, s), mode, "rl:*")

			// rl:gap appears without a message (SWAPDB sends no event and
			// no invalidation; database 9 holds rl:a as it was, and
			// rl:gap), so only a full pass can find it; the periodic one
			// is an hour away, so it must be the one after the subscriber
			// comes back. (Turning the notifications off for the gap would
			// make events track instead: see watch_tracking_test.go.)
			db9 := redis.NewClient(&redis.Options{Addr: s.Addr, DB: 9})
			t.Cleanup(func() { db9.Close() })
			if err := db9.MSet(context.Background(), "rl:a", "1", "rl:gap", "1").Err(); err != nil {
				t.Fatal(err)
			}
			passes := w.passes
			s.Do(t, "SWAPDB", "0", "9")
			s.Do(t, "CLIENT", "KILL", "TYPE", "pubsub")

			w.waitValue("rl:gap", "1")
			w.waitPassIn(mode, passes)
			if !w.sawPhase(model.FeedReconnecting) {
				t.Errorf("modes %v; want the lost subscription shown as reconnecting", w.modes)
			}
			s.Do(t, "INCR", "rl:a") // messages flow again
			w.waitValue("rl:a", "2")
			assertStoreMatchesRedis(t, w.store, "rl:*", rdb)
		})
	}
}

// Keys Redis evicts are removed from the store by what the mode follows
// alone, with no full pass: an evicted event, or an invalidation.
func TestEvictedKeysAreRemoved(t *testing.T) {
	for _, mode := range pushModes() {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, append(serverArgs(mode), "--maxmemory-policy", "allkeys-random")...)
			rdb := s.Client(t)
			w := startLive(t, connect(t, s), mode, "rl:*")

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
				t.Errorf("%d full passes; want evictions to be followed by %v alone", w.passes, mode)
			}
		})
	}
}

// While nothing changes, the periodic pass of a push mode reads no key: it
// scans for keys made or gone, and re-reads every key only one pass in
// ten.
func TestPeriodicPassReadsNoKey(t *testing.T) {
	for _, mode := range pushModes() {
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

// A pass is walked a slice at a time, and the keys a push mode names are
// read between the slices: a key changed after the pass read it shows
// while the pass goes on, not once it is over.
func TestChangesAreReadDuringAPass(t *testing.T) {
	for _, mode := range pushModes() {
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
