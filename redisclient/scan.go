package redisclient

import (
	"context"

	"github.com/countertop/countertop/model"
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

// Snapshot is one full pass: every key matching patterns, with its value and
// TTL. Keys deleted between SCAN and the read are left out.
func (c *Client) Snapshot(ctx context.Context, patterns []string, scanCount int64) ([]model.Observation, error) {
	var keys []string
	err := c.Scan(ctx, patterns, scanCount, func(page []string) error {
		keys = append(keys, page...)
		return nil
	})
	if err != nil {
		return nil, err
	}
	obs := make([]model.Observation, 0, len(keys))
	err = c.fetch(ctx, keys, defaultBatchSize, func(batch []model.Observation) error {
		for _, o := range batch {
			if o.PTTL != model.PTTLMissing {
				obs = append(obs, o)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return obs, nil
}

// scanPass is the state of one discovery pass, shared by every pattern (and,
// in a cluster, by every master).
type scanPass struct {
	found    map[string]struct{} // distinct keys passed on so far
	returned int64               // keys SCAN replied with, repeats included
}

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
	for _, pattern := range patterns {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, pattern, count).Result()
			if err != nil {
				return c.explain(err)
			}
			pass.returned += int64(len(keys))
			fresh := keys[:0] // keys is ours: filter it in place
			for _, k := range keys {
				if _, dup := pass.found[k]; !dup {
					pass.found[k] = struct{}{}
					fresh = append(fresh, k)
				}
			}
			if len(fresh) > 0 {
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
