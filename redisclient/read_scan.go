package redisclient

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// defaultScanCount is SCAN's COUNT hint when none is given: a million keys
// take a thousand round trips, and no single call blocks Redis for long.
const defaultScanCount = 1000

// Scan walks the keyspace with SCAN MATCH pattern COUNT count, one cursor
// per pattern (never KEYS, which blocks Redis), and calls fn with each
// reply's keys as they arrive, so a caller can show rows before the walk
// ends. A key is passed once per call to Scan, even when several patterns
// match it or SCAN returns it twice (which SCAN may do). count <= 0 means
// 1000. An error from fn stops the walk and is returned as it is.
func (c *Client) Scan(ctx context.Context, patterns []string, count int64, fn func(keys []string) error) error {
	return c.scan(ctx, c.rdb, patterns, count, newScanPass(), fn)
}

// scanOnce runs one SCAN on node, bounded as a pipeline of reads is (see
// readTimeoutOf).
func (c *Client) scanOnce(ctx context.Context, node redis.Cmdable, cursor uint64, pattern string, count int64) (keys []string, next uint64, err error) {
	addr := c.nodeAddr(node)
	err = c.onMaster(ctx, addr, func() error {
		ctx, err := c.prepaid(ctx, addr, 1)
		if err != nil {
			return err
		}
		ctx, cancel := c.withPipelineTimeout(ctx)
		defer cancel()
		keys, next, err = node.Scan(ctx, cursor, pattern, count).Result()
		return err
	})
	return keys, next, err
}

// dbSize runs DBSIZE on node, bounded as scanOnce is.
func (c *Client) dbSize(ctx context.Context, node redis.Cmdable) (size int64, err error) {
	addr := c.nodeAddr(node)
	err = c.onMaster(ctx, addr, func() error {
		ctx, err := c.prepaid(ctx, addr, 1)
		if err != nil {
			return err
		}
		ctx, cancel := c.withPipelineTimeout(ctx)
		defer cancel()
		size, err = node.DBSize(ctx).Result()
		return err
	})
	return size, err
}

// scanPass is the state of one call to Scan, shared by every pattern (and,
// in a cluster, by every master).
type scanPass struct {
	found map[string]struct{} // distinct keys passed on so far
}

// newScanPass returns a pass that has passed on no key yet.
func newScanPass() *scanPass { return &scanPass{found: make(map[string]struct{})} }

// scan runs the SCAN loops on node, which is the whole deployment for a
// single Redis. Given a cluster client, it scans each master in turn (see
// scanMasters): SCAN on the cluster client would read one node.
func (c *Client) scan(ctx context.Context, node redis.Cmdable, patterns []string, count int64, pass *scanPass, fn func(keys []string) error) error {
	if _, ok := node.(*redis.ClusterClient); ok {
		return c.scanMasters(ctx, patterns, count, pass, fn)
	}
	if count <= 0 {
		count = defaultScanCount
	}
	where := c.nodeAddr(node) // a master's refusal is its own
	for _, pattern := range patterns {
		var cursor uint64
		for {
			keys, next, err := c.scanOnce(ctx, node, cursor, pattern, count)
			if err != nil {
				return c.explainAt(err, where)
			}
			if fresh := addNew(pass.found, keys); len(fresh) > 0 {
				if err := fn(fresh); err != nil {
					return err
				}
			}
			if next == 0 {
				break
			}
			cursor = next
		}
	}
	return nil
}

// addNew adds keys to found and returns those that were not in it yet, once
// each (SCAN may return a key twice). It filters keys in place.
func addNew(found map[string]struct{}, keys []string) []string {
	fresh := keys[:0]
	for _, k := range keys {
		if _, dup := found[k]; !dup {
			found[k] = struct{}{}
			fresh = append(fresh, k)
		}
	}
	return fresh
}

// scanMasters runs scan on each master of the cluster in turn. They share
// pass, so a key found on two masters (one that failed over during the
// pass, scanned before and after) is passed on once.
func (c *Client) scanMasters(ctx context.Context, patterns []string, count int64, pass *scanPass, fn func(keys []string) error) error {
	nodes, err := c.masters(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if err := c.scan(ctx, n, patterns, count, pass, fn); err != nil {
			return err
		}
	}
	return nil
}
