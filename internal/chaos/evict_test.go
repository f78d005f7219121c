package chaos

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/cli"
	"github.com/countertop/countertop/model"
)

// TestEviction: under maxmemory with allkeys-lru, a burst of cache writes
// evicts rate-limit counters. Their rows leave the view as Redis drops
// them, and the feed's health says how many keys were evicted in the last
// minute: following events, exactly the watched ones Redis evicted; else
// INFO's count, of every key on the server, and it says so. check names
// the server that evicted.
func TestEviction(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 300)
			watchedEvicted := countEvicted(t, rdb)
			ctx := context.Background()
			if err := rdb.ConfigSet(ctx, "maxmemory-policy", "allkeys-lru").Err(); err != nil {
				t.Fatal(err)
			}
			used := infoInt(t, rdb, "memory", "used_memory")
			if err := rdb.ConfigSet(ctx, "maxmemory", strconv.FormatInt(used+4<<20, 10)).Err(); err != nil {
				t.Fatal(err)
			}
			cache(t, rdb, 6000) // 12 MB into 4

			v.converge(rdb, "after the evictions")
			watched := watchedEvicted()
			if watched == 0 {
				t.Fatal("Redis evicted no watched counter: the scenario evicted nothing that matters")
			}
			waitUntil(t, "the health to count the evictions", func() bool {
				h := v.lastHealth()
				if mode == model.WatchEvents {
					return h.Evicted == watchedEvicted() && !h.EvictedAll
				}
				// Read after the count: the server may evict more meanwhile.
				return h.Evicted > 0 && h.Evicted <= infoInt(t, rdb, "stats", "evicted_keys") && h.EvictedAll
			}, v.feedState)
			if h := v.lastHealth(); mode != model.WatchEvents && h.Evicted < watched {
				t.Errorf("INFO's count is %d, under the %d watched keys Redis evicted", h.Evicted, watched)
			}

			code, out, errOut := runCLI(t, "check", "--url", srv.URL(), "--pattern", pattern)
			if want := "\nevicted    " + srv.Addr + "  "; code == 2 || !strings.Contains("\n"+out, want) {
				t.Errorf("check exited %d and does not name the server that evicted keys (%q):\n%s%s", code, want, out, errOut)
			}
		})
	}
}

// countEvicted counts, from a subscription of its own, the keys matching
// pattern that Redis says it evicted, until the test ends.
func countEvicted(t *testing.T, rdb *redis.Client) func() int64 {
	t.Helper()
	sub := rdb.Subscribe(context.Background(), "__keyevent@0__:evicted")
	if _, err := sub.Receive(context.Background()); err != nil { // subscribed before anything is evicted
		t.Fatal(err)
	}
	var n atomic.Int64
	go func() {
		for msg := range sub.Channel(redis.WithChannelSize(100_000)) {
			if model.GlobMatch(pattern, msg.Payload) {
				n.Add(1)
			}
		}
	}()
	t.Cleanup(func() { sub.Close() })
	return n.Load
}

// cache writes n keys outside the pattern, 2,000 bytes each, as a cache
// would.
func cache(t *testing.T, rdb *redis.Client, n int) {
	t.Helper()
	ctx := context.Background()
	value := strings.Repeat("x", 2000)
	for start := 0; start < n; start += 500 {
		pipe := rdb.Pipeline()
		for i := start; i < min(n, start+500); i++ {
			pipe.Set(ctx, fmt.Sprintf("cache:%d", i), value, 0)
		}
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// infoInt is an integer field of an INFO section.
func infoInt(t *testing.T, rdb *redis.Client, section, field string) int64 {
	t.Helper()
	info, err := rdb.Info(context.Background(), section).Result()
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("INFO %s: %q", section, line)
			}
			return n
		}
	}
	t.Fatalf("INFO %s has no %s", section, field)
	return 0
}

// lastHealth returns the last Health the view received.
func (v *view) lastHealth() model.Health {
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.health) == 0 {
		return model.Health{}
	}
	return v.health[len(v.health)-1]
}

// chaosConfig gives the pattern's counters a limit and a window.
const chaosConfig = `
[[rule]]
pattern = "rl:*"
limit = 100
window = "60s"
`

// runCLI runs countertop's command line in-process, with chaosConfig, and
// returns its exit code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countertop.toml")
	if err := os.WriteFile(path, []byte(chaosConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code = cli.Run(append(args[:1:1], append([]string{"--config", path}, args[1:]...)...), &out, &errOut)
	return code, out.String(), errOut.String()
}
