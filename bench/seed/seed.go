// Package seed fills a Redis with a keyspace shaped like a busy rate
// limiter's, quickly, for countertop's benchmarks: a few matching counters
// among many other keys, most with a TTL, some without (the bug countertop
// exists to show), and a few that are not counters at all. A mixed
// keyspace (Spec.Mixed) holds every layout limiters write instead.
package seed

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
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
	// Mixed writes the matching keys in every layout (see MixedKey) rather
	// than as string counters: counters, windows (named by their number
	// and by their start in ns), GCRA times, buckets in a hash, in a
	// string and in two strings, logs of 10 to 100,000 entries in sorted
	// sets and lists, block flags, and counts in JSON and in gofiber's
	// msgpack. HashEvery does not apply; NoTTLEvery does, to each.
	Mixed bool
}

// The layouts of a mixed keyspace, by the matching key's index modulo its
// length: more counters than any other, which real keyspaces hold most of.
var mixedLayouts = [...]string{"counter", "counter", "counter", "counter", "window", "gcra", "bucket", "tokens", "zlog", "llog",
	"nswindow", "block", "json", "msgpack"}

// mixes is how many keys one round of mixedLayouts takes.
const mixes = len(mixedLayouts)

// mixedLayout is the layout of the i-th matching key: mixedLayouts', but
// for the fourth counter of each round, which is "pair" (the tokens left
// of a bucket in two strings, as mennanov/limiters wrote it) and "clock"
// (its last refill, in ns) every other round, a round apart.
func mixedLayout(i int) string {
	if i%mixes == 3 {
		return [2]string{"pair", "clock"}[i/mixes%2]
	}
	return mixedLayouts[i%mixes]
}

// MixedKey is the name of the i-th matching key of a mixed keyspace, at
// minute (Unix time / 60) for a window's: a window key names the current,
// previous or an older minute.
func MixedKey(i int, minute int64) string {
	switch l := mixedLayout(i); l {
	case "window":
		return fmt.Sprintf("ratelimit:window:%s:%d", pad(i), minute-int64(i/mixes%3))
	case "nswindow": // mennanov/limiters: a hash tag, then the window's start in ns
		return fmt.Sprintf("ratelimit:nswindow:{%s}%d", pad(i), (minute-int64(i/mixes%3))*60e9)
	case "block":
		return "ratelimit:block:" + pad(i) + ":blocked"
	case "tokens":
		return "ratelimit:tokens:" + pad(i) + ".tokens"
	case "pair":
		return "ratelimit:pair:" + pad(i) + ":available"
	case "clock":
		return "ratelimit:pair:" + pad(i-mixes) + ":last"
	default:
		return "ratelimit:" + l + ":" + pad(i)
	}
}

// LogSize is the number of entries of the j-th log of a mixed keyspace:
// nine in ten hold 10, and each tenfold size is ten times rarer, up to
// 100,000, so that each size holds about as many entries as the others.
func LogSize(j int) int {
	n := 10
	for step := 10; n < 100_000 && j%step == step-1; step *= 10 {
		n *= 10
	}
	return n
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
	return SeedShards(ctx, []redis.UniversalClient{rdb}, spec)
}

// SeedShards writes the keyspace spec describes over shards as a Redis
// Cluster of len(shards) masters holds it: each key on the shard that
// serves its hash slot (see Shard), so that standalone servers seeded so
// hold what the masters of such a cluster hold, and a cluster's masters
// can be seeded directly, each with its own keys.
func SeedShards(ctx context.Context, shards []redis.UniversalClient, spec Spec) error {
	if spec.Matching > spec.Keys {
		return fmt.Errorf("seed: %d matching keys cannot fit in %d keys", spec.Matching, spec.Keys)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(writers)
	for start := 0; start < spec.Keys; start += pipelineSize {
		end := min(start+pipelineSize, spec.Keys)
		g.Go(func() error {
			pipes := make([]redis.Pipeliner, len(shards))
			pipeFor := func(key string) redis.Pipeliner {
				i := Shard(key, len(shards))
				if pipes[i] == nil {
					pipes[i] = shards[i].Pipeline()
				}
				return pipes[i]
			}
			for i := start; i < end; i++ {
				spec.write(ctx, pipeFor, i)
			}
			for _, pipe := range pipes {
				if pipe == nil {
					continue
				}
				if _, err := pipe.Exec(ctx); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// slots is the number of hash slots a Redis Cluster divides keys into.
const slots = 16384

// Shard is the index of the master, among n, that serves key in a cluster
// whose slots are split evenly, in order: master i serves slots
// i*16384/n to (i+1)*16384/n-1, as bench/lib.sh's start_cluster (and
// internal/redistest's StartCluster) assign them.
func Shard(key string, n int) int {
	slot := Slot(key)
	i := slot * n / slots
	for (i+1)*slots/n <= slot {
		i++
	}
	return i
}

// Slot is key's hash slot, as CLUSTER KEYSLOT gives it: CRC16 (XMODEM) of
// the key, or of its hash tag (what the first {...} holds, when not
// empty), modulo 16384.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	var crc uint16
	for i := 0; i < len(key); i++ {
		crc ^= uint16(key[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return int(crc) % slots
}

// write queues the i-th key of the keyspace on the pipeline pipeFor gives
// for its name: the counters first, then the other keys.
func (spec Spec) write(ctx context.Context, pipeFor func(key string) redis.Pipeliner, i int) {
	ttl := spec.TTL + time.Duration(i%3600)*time.Second
	if i >= spec.Matching {
		key := OtherKey(i - spec.Matching)
		pipeFor(key).Set(ctx, key, "x", ttl)
		return
	}
	if spec.Mixed {
		spec.writeMixed(ctx, pipeFor, i, ttl)
		return
	}
	key := CounterKey(i)
	pipe := pipeFor(key)
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

// writeMixed queues the i-th matching key of a mixed keyspace, as its
// limiter writes it, with its TTL unless NoTTLEvery says it has none.
// Times are now's: log entries spread over the last two minutes, so that
// about half are inside a one-minute window.
func (spec Spec) writeMixed(ctx context.Context, pipeFor func(key string) redis.Pipeliner, i int, ttl time.Duration) {
	now := time.Now()
	key := MixedKey(i, now.Unix()/60)
	pipe := pipeFor(key)
	if every(i, spec.NoTTLEvery) {
		ttl = 0
	}
	hits := i % 120
	switch mixedLayout(i) {
	case "counter", "window", "nswindow":
		pipe.Set(ctx, key, hits, ttl)
	case "pair":
		pipe.Set(ctx, key, hits%6, ttl)
	case "clock":
		pipe.Set(ctx, key, now.Add(-time.Duration(i%1000)*time.Millisecond).UnixNano(), ttl)
	case "block":
		pipe.Set(ctx, key, 1, ttl)
	case "json":
		pipe.Set(ctx, key, fmt.Sprintf(`{"count":%d,"firstRequest":%d,"lastRequest":%d}`, hits, now.Add(-time.Minute).UnixMilli(), now.UnixMilli()), ttl)
	case "msgpack": // gofiber's limiter: a fixmap of currHits, prevHits and exp
		pipe.Set(ctx, key, fiberState(hits, now.Unix()+60), ttl)
	case "gcra": // go-redis/redis_rate: seconds since 2017-01-01, a few seconds ahead
		tat := float64(now.UnixMicro())/1e6 - 1483228800 + float64(i%30)
		pipe.Set(ctx, key, strconv.FormatFloat(tat, 'f', 6, 64), ttl)
	case "bucket":
		pipe.HSet(ctx, key, "tokens", hits%20, "refilledAt", now.UnixMilli())
		expire(ctx, pipe, key, ttl)
	case "tokens":
		pipe.Set(ctx, key, hits%20, ttl)
	case "zlog", "llog":
		n := LogSize(i / mixes)
		step := 2 * time.Minute / time.Duration(n)
		const chunk = 10_000 // members per command: no command the size of a whole log
		for from := 0; from < n; from += chunk {
			var zs []redis.Z
			var entries []any
			for j := from; j < min(from+chunk, n); j++ {
				at := now.Add(-time.Duration(j) * step).UnixMilli()
				if mixedLayout(i) == "zlog" {
					zs = append(zs, redis.Z{Score: float64(at), Member: strconv.Itoa(j)})
				} else {
					entries = append(entries, at)
				}
			}
			if zs != nil {
				pipe.ZAdd(ctx, key, zs...)
			} else {
				pipe.RPush(ctx, key, entries...) // newest first, as LPUSH leaves a log
			}
		}
		expire(ctx, pipe, key, ttl)
	}
}

// expire queues an EXPIRE of key when ttl is set.
func expire(ctx context.Context, pipe redis.Pipeliner, key string, ttl time.Duration) {
	if ttl > 0 {
		pipe.Expire(ctx, key, ttl)
	}
}

// fiberState is gofiber's limiter state in msgpack, as its generated code
// writes it: a map of currHits, prevHits (0 here) and exp, each integer in
// the fewest bytes that hold it (hits < 128).
func fiberState(hits int, exp int64) string {
	b := append([]byte("\x83\xa8currHits"), byte(hits))
	b = append(b, "\xa8prevHits\x00\xa3exp\xce"...)
	return string(binary.BigEndian.AppendUint32(b, uint32(exp)))
}
