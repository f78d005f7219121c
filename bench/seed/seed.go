// Package seed fills a Redis with a keyspace shaped like a busy rate
// limiter's, quickly, for countertop's benchmarks: a few matching counters
// among many other keys, most with a TTL, some without (the bug countertop
// exists to show), and a few that are not counters at all.
package seed

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// Pattern matches the counters Seed writes, and none of the other keys.
const Pattern = "ratelimit:*"

// Spec is the keyspace to write.
type Spec struct {
	Keys     int // keys in all
	Matching int // of those, counters that match Pattern
	// NoTTLEvery makes every NoTTLEvery-th counter immortal (no expiry);
	// 0: none is.
	NoTTLEvery int
	// HashEvery makes every HashEvery-th matching key a hash, which
	// countertop shows as not a counter; 0: none is.
	HashEvery int
	// TTL is the expiry of keys that have one; each key gets up to an hour
	// more, so deadlines are spread. It must outlast the benchmark.
	TTL time.Duration
}

// CounterKey is the name of the i-th matching key.
func CounterKey(i int) string { return "ratelimit:user:" + pad(i) + ":login" }

// OtherKey is the name of the i-th key that does not match Pattern.
func OtherKey(i int) string { return "session:" + pad(i) }

func pad(i int) string { return fmt.Sprintf("%08d", i) }

// pipelineSize is how many writes go in one round trip, and writers how
// many pipelines are in flight at once: enough to keep redis-server busy.
const (
	pipelineSize = 1000
	writers      = 4
)

// Seed writes the keyspace spec describes with pipelined SETs (and HSETs),
// over the keys already there. It is not atomic: a failure leaves part of
// it written.
func Seed(ctx context.Context, rdb redis.UniversalClient, spec Spec) error {
	if spec.Matching > spec.Keys {
		return fmt.Errorf("seed: %d matching keys cannot fit in %d keys", spec.Matching, spec.Keys)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(writers)
	for start := 0; start < spec.Keys; start += pipelineSize {
		end := min(start+pipelineSize, spec.Keys)
		g.Go(func() error {
			pipe := rdb.Pipeline()
			for i := start; i < end; i++ {
				spec.write(ctx, pipe, i)
			}
			_, err := pipe.Exec(ctx)
			return err
		})
	}
	return g.Wait()
}

// write queues the i-th key of the keyspace: the counters first, then the
// other keys.
func (spec Spec) write(ctx context.Context, pipe redis.Pipeliner, i int) {
	ttl := spec.TTL + time.Duration(i%3600)*time.Second
	if i >= spec.Matching {
		pipe.Set(ctx, OtherKey(i-spec.Matching), "x", ttl)
		return
	}
	key := CounterKey(i)
	switch {
	case every(i, spec.HashEvery):
		pipe.HSet(ctx, key, "hits", i%120)
		pipe.Expire(ctx, key, ttl)
	case every(i, spec.NoTTLEvery):
		pipe.Set(ctx, key, strconv.Itoa(i%120), 0)
	default:
		pipe.Set(ctx, key, strconv.Itoa(i%120), ttl)
	}
}

// every reports whether i is a multiple of n > 0, counting from the n-1-th
// key so that key 0 is a plain counter.
func every(i, n int) bool { return n > 0 && i%n == n-1 }
