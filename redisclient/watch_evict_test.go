package redisclient_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// startEvicting starts a server that evicts any key (allkeys-lru) once
// its data passes what it holds now by room bytes.
func startEvicting(t *testing.T, room int64) *redistest.Server {
	t.Helper()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	s.Do(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	used := infoField(t, s.Client(t), "memory", "used_memory")
	s.Do(t, "CONFIG", "SET", "maxmemory", strconv.FormatInt(used+room, 10))
	return s
}

// fill writes n keys named by format, each holding 2,000 bytes, in
// pipelines: past maxmemory, Redis evicts.
func fill(t *testing.T, s *redistest.Server, format string, n int) {
	t.Helper()
	rdb := s.Client(t)
	ctx := context.Background()
	value := strings.Repeat("x", 2000)
	for start := 0; start < n; start += 500 {
		pipe := rdb.Pipeline()
		for i := start; i < min(n, start+500); i++ {
			pipe.Set(ctx, fmt.Sprintf(format, i), value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// evictedWatched counts the evicted events of keys that pattern matches,
// from a subscription of the test's own, until the test ends.
func evictedWatched(t *testing.T, s *redistest.Server, pattern string) func() int64 {
	t.Helper()
	sub := s.Client(t).Subscribe(context.Background(), "__keyevent@0__:evicted")
	if _, err := sub.Receive(context.Background()); err != nil { // subscribed before anything is evicted
		t.Fatal(err)
	}
	counts := make(chan int64, 1)
	counts <- 0
	go func() {
		for msg := range sub.Channel(redis.WithChannelSize(100_000)) {
			if model.GlobMatch(pattern, msg.Payload) {
				counts <- <-counts + 1
			}
		}
	}()
	t.Cleanup(func() { sub.Close() })
	return func() int64 { n := <-counts; counts <- n; return n }
}

// Following events, the header counts the watched keys Redis evicted, each
// once though two watched patterns match it, and none of the others.
func TestEvictedWatchedKeysAreCounted(t *testing.T) {
	t.Parallel()
	s := startEvicting(t, 4<<20)
	rdb := s.Client(t)
	truth := evictedWatched(t, s, "rl:*")
	w := startWatch(t, connect(t, s), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*", "rl:a:*"}, Interval: 50 * time.Millisecond},
		Mode:        model.WatchEvents,
	})
	w.waitFor("events", func() bool { return watchingIn(w.state, model.WatchEvents) && w.state.LastError == "" })
	fill(t, s, "rl:a:%05d", 3000) // both patterns match
	fill(t, s, "other:%05d", 3000)
	fill(t, s, "rl:b:%05d", 3000) // rl:* alone
	all := infoField(t, rdb, "stats", "evicted_keys")
	w.waitFor("the health to count each watched key evicted once", func() bool {
		return w.health.Evicted > 0 && w.health.Evicted == truth() && !w.health.EvictedAll
	})
	if w.health.Evicted >= all {
		t.Errorf("%d counted, of %d evicted on the server: the keys outside the patterns were counted", w.health.Evicted, all)
	}
}

// Without events, the header counts every key the server evicted, as INFO
// does, and says so.
func TestEvictedKeysAreCountedByINFOWithoutEvents(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchTracking, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := startEvicting(t, 4<<20)
			rdb := s.Client(t)
			w := startWatch(t, connect(t, s), redisclient.WatchOptions{
				PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond},
				Mode:        mode,
			})
			fill(t, s, "rl:a:%05d", 5000)
			w.waitFor("the health to count evictions", func() bool { return w.health.Evicted > 0 })
			before := infoField(t, rdb, "stats", "evicted_keys") // counted from now on, whatever came before
			fill(t, s, "other:%05d", 5000)
			after := infoField(t, rdb, "stats", "evicted_keys")
			w.waitFor("the health to count the evictions of keys outside the patterns too", func() bool {
				return w.health.Evicted >= after-before && w.health.Evicted <= after && w.health.EvictedAll
			})
		})
	}
}
