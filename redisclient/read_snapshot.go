package redisclient

import (
	"context"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// Snapshot makes one full pass: every key matching patterns, with its value
// and TTL. It calls fn with each pipeline's worth of keys as they are read,
// one call at a time, so a caller can work on them while the walk goes on;
// keys deleted between SCAN and the read are left out. An error from fn
// stops the pass and is returned as it is.
//
// A key may come twice, rarely: SCAN may return a key twice, two stripes
// of a walk overlap by up to a page where they meet, a key several
// patterns match comes once only when the earlier ones have no [range]
// (see walk), and in a cluster a key that moved to another master during
// the pass may be read on both. The caller drops repeats as it sorts
// (report.Snapshot and report.KeySorter do), which costs less than a set
// of every key seen.
//
// It keeps Redis busy rather than waiting on round trips, since someone is
// waiting for the answer: a single Redis is walked in snapshotStripes
// stripes at once (see walk), and the keys found are read on other
// connections as soon as there is a pipeline's worth, while the walk goes
// on. A cluster's masters are read all at once, each with one cursor and
// on its own connections (see snapshotNode): reading them one after
// another, or through the cluster's routing, left each waiting for the
// others' round trips. Each command stays as short as in any other pass.
func (c *Client) Snapshot(ctx context.Context, patterns []string, scanCount int64, fn func(obs []model.Observation) error) error {
	var mu sync.Mutex // one call to fn at a time, and none after it failed
	var failed bool
	deliver := func(obs []model.Observation) error {
		mu.Lock()
		defer mu.Unlock()
		if failed {
			return nil // the pass is ending with fn's error
		}
		err := fn(obs)
		failed = err != nil
		return err
	}
	if _, ok := c.rdb.(*redis.ClusterClient); !ok {
		return c.snapshotNode(ctx, c.rdb, snapshotStripes, patterns, scanCount, deliver)
	}
	masters, err := c.masters(ctx)
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	for _, m := range masters {
		// One stripe each: the masters side by side keep Redis busy, and
		// stripes would skip keys on a master that keeps a table per slot
		// (see scanStripe).
		g.Go(func() error { return c.snapshotNode(ctx, m, 1, patterns, scanCount, deliver) })
	}
	return g.Wait()
}

// snapshotNode is Snapshot's pass over node: a single Redis, or a master
// of the cluster, whose keys alone it walks, in stripes stripes (see
// walk), and reads.
func (c *Client) snapshotNode(ctx context.Context, node redis.Cmdable, stripes int, patterns []string, scanCount int64, deliver func([]model.Observation) error) error {
	g, ctx := errgroup.WithContext(ctx)
	pages := make(chan []string, stripes)
	g.Go(func() error {
		defer close(pages)
		return c.walk(ctx, node, stripes, patterns, scanCount, func(keys []string) error {
			select {
			case pages <- keys:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	})
	chunks := make(chan []string)
	for range fetchAhead {
		g.Go(func() error {
			for keys := range chunks {
				read, err := c.snapshotChunk(ctx, node, keys)
				if err != nil {
					return err
				}
				read = slices.DeleteFunc(read, func(o model.Observation) bool { return o.PTTL == model.PTTLMissing })
				if err := deliver(read); err != nil {
					return err
				}
			}
			return nil
		})
	}

	// Pass the keys on a pipeline's worth at a time. The walk never waits
	// for the reads: full chunks queue here, so SCAN goes on at Redis's
	// pace (the keys are in memory either way). After a failure, ctx is
	// done: what is queued is dropped, and g.Wait says why.
	var chunk []string
	var queue [][]string
	walking := (<-chan []string)(pages) // nil once the walk is over
	for walking != nil || len(queue) > 0 {
		var out chan<- []string
		var next []string
		if len(queue) > 0 {
			out, next = chunks, queue[0]
		}
		select {
		case page, ok := <-walking:
			if !ok {
				walking = nil
				if len(chunk) > 0 {
					queue = append(queue, chunk)
				}
				continue
			}
			chunk = append(chunk, page...)
			for len(chunk) >= defaultBatchSize {
				queue = append(queue, chunk[:defaultBatchSize:defaultBatchSize])
				chunk = chunk[defaultBatchSize:]
			}
		case out <- next:
			queue[0] = nil
			queue = queue[1:]
		case <-ctx.Done():
			walking, queue = nil, nil
		}
	}
	close(chunks)
	return g.Wait()
}

// snapshotChunk reads one pipeline's worth of the keys SCAN found on node,
// on node's own connections: in a cluster, the master's, so that an error,
// a timeout above all, names the master it came from, not the node given
// in --url. Keys that left the master since (a resharding, a failover: it
// answers MOVED or ASK, or cannot be reached) are read again where the
// cluster's slot map says they are now (see fetch).
func (c *Client) snapshotChunk(ctx context.Context, node redis.Cmdable, keys []string) ([]model.Observation, error) {
	addr := c.nodeAddr(node)
	var read []model.Observation
	err := c.onMaster(ctx, addr, func() error {
		ctx, err := c.prepaid(ctx, addr, 2*len(keys))
		if err != nil {
			return err
		}
		ctx, cancel := c.withPipelineTimeout(ctx)
		defer cancel()
		read, err = c.fetchChunk(ctx, node, keys, addr)
		return err
	})
	if c.kind != cluster || ctx.Err() != nil || !(moved(err) || unreachable(err)) {
		return read, err
	}
	read = make([]model.Observation, 0, len(keys))
	err = c.fetch(ctx, keys, len(keys), func(obs []model.Observation) error {
		read = append(read, obs...) // one call at a time
		return nil
	})
	return read, err
}

// moved reports whether err is a cluster's redirection: the key is
// served by another master now, or is moving there.
func moved(err error) bool {
	_, isMoved := redis.IsMovedError(err)
	_, isAsk := redis.IsAskError(err)
	return isMoved || isAsk
}

// snapshotStripes is how many parts of the keyspace Snapshot walks at once:
// while Redis runs one part's SCAN, the others' replies travel and are
// parsed, so Redis does not wait a round trip between calls. Two still
// left it waiting whenever the client's threads queued for a core; four did
// no better than three (BENCHMARKS.md). Only a pass someone waits for walks
// in stripes: the dashboard's discovery walks one cursor at a time.
const snapshotStripes = 3

// walk runs SCAN MATCH over each pattern on node, a single Redis or a
// master of a cluster, and calls fn, from several goroutines at once,
// with each reply's keys. It walks node in stripes stripes at once (see
// scanStripe): a key SCAN repeats, or one at the edge of two stripes, may
// come twice, but not, as a rule, a key that two patterns match.
func (c *Client) walk(ctx context.Context, node redis.Cmdable, stripes int, patterns []string, count int64, fn func(keys []string) error) error {
	if count <= 0 {
		count = defaultScanCount
	}
	g, ctx := errgroup.WithContext(ctx)
	firsts := make([]firstPage, len(patterns))
	for j := range firsts {
		firsts[j].done = make(chan struct{})
	}
	for i := range stripes {
		g.Go(func() error {
			for j, p := range patterns {
				// A key an earlier pattern matches was passed on with it.
				// Only where GlobMatch and the server must agree: a range
				// ([a-z]) of bytes past 0x7f compares differently on
				// servers built where char is unsigned, and a key dropped
				// by mistake would vanish; a repeat costs only a read.
				earlier := slices.DeleteFunc(slices.Clone(patterns[:j]), func(e string) bool { return strings.Contains(e, "[") })
				err := c.scanStripe(ctx, node, p, count, i, stripes, &firsts[j], func(keys []string) error {
					keys = slices.DeleteFunc(keys, func(k string) bool {
						return slices.ContainsFunc(earlier, func(e string) bool { return model.GlobMatch(e, k) })
					})
					if len(keys) == 0 {
						return nil
					}
					return fn(keys)
				})
				if err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// firstPage tells the later stripes of a walk whether the first stripe's
// first SCAN left anything to walk. SCAN goes on until it has COUNT keys or
// reaches the end, so a keyspace of fewer keys comes whole in that reply,
// and each later stripe would read it again from its start to the end
// (with three stripes, the last third three times).
type firstPage struct {
	done chan struct{} // closed once the first SCAN has answered, or failed
	more bool          // set before done is closed: the walk did not end there
}

// scanStripe walks the i-th of n stripes of a SCAN walk of node. SCAN visits the hash
// table's buckets in reverse-binary order: the cursor's bits reversed are
// its position along the walk, from 0 up to a wrap back to 0, whatever the
// table's size and through resizes. Stripe i starts at the cursor of
// position i/n of the way and ends once the next cursor reaches position
// (i+1)/n: together, the stripes walk the whole keyspace once, with
// SCAN's guarantee that a key there from start to end is returned.
// Stripes after the first start once first says the walk goes on.
//
// That holds for a database of one table: any Redis but a cluster node,
// and a cluster node before Redis 7.4. A cluster node of Redis 7.4+ or
// Valkey 8 keeps a table per slot and puts the slot in the cursor's low
// 14 bits, above them the position in that slot's table: cut as one
// table's, its stripes would start and stop in the wrong places and skip
// keys. A cluster's master is walked in one stripe (n = 1), from cursor 0
// back to 0, which SCAN walks whole on every layout.
func (c *Client) scanStripe(ctx context.Context, node redis.Cmdable, pattern string, count int64, i, n int, first *firstPage, fn func(keys []string) error) error {
	announce := func(more bool) {} // the first stripe's first answer, for the others
	if i == 0 {
		announced := false
		announce = func(more bool) {
			if !announced {
				announced, first.more = true, more
				close(first.done)
			}
		}
		defer announce(false) // failed: the walk ends with the error
	} else {
		select {
		case <-first.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !first.more {
			return nil
		}
	}
	width := math.MaxUint64/uint64(n) + 1 // wraps to 0 for n = 1: one stripe ends only where the walk does
	end := uint64(i+1) * width
	cursor := bits.Reverse64(uint64(i) * width)
	for {
		keys, next, err := c.scanOnce(ctx, node, cursor, pattern, count)
		if err != nil {
			return c.explainAt(err, c.nodeAddr(node)) // a master's refusal is its own
		}
		announce(next != 0)
		if len(keys) > 0 {
			if err := fn(keys); err != nil {
				return err
			}
		}
		if next == 0 || i < n-1 && bits.Reverse64(next) >= end {
			return nil
		}
		cursor = next
	}
}
