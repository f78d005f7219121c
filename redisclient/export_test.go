package redisclient

import (
	"context"
	"fmt"
	"time"

	"github.com/countertop/countertop/model"
)

// SetHealthEvery shortens how long a subscription may stay silent before
// Watch pings it, and how long the ping may go unanswered, so that a test
// can cut a connection off and see it replaced in good time.
func (o *WatchOptions) SetHealthEvery(d time.Duration) { o.healthEvery = d }

// SetFollowEvery shortens how often Watch asks a cluster or Sentinel which
// servers are masters, so that a test sees a failover followed in good time.
func (o *WatchOptions) SetFollowEvery(d time.Duration) { o.followEvery = d }

// SnapshotStripes is how many parts of the keyspace a Snapshot walks at
// once: each place two parts meet may repeat a page of keys.
const SnapshotStripes = snapshotStripes

// SetScanBudget sets how long each poll cycle takes discovery on, in place
// of a quarter of the interval, so that a test can spread a pass over many
// cycles without a million keys. A budget of a nanosecond is one SCAN a
// cycle.
func (o *PollOptions) SetScanBudget(d time.Duration) { o.scanBudget = d }

// FetchBatches is the read behind Poll and Watch: keys batchSize at a
// time, fn called with each batch. Tests use it to check which error wins.
func (c *Client) FetchBatches(ctx context.Context, keys []string, batchSize int, fn func([]model.Observation) error) error {
	return c.fetch(ctx, keys, batchSize, fn)
}

// ReadFoundOn reads keys as a Snapshot reads the keys its walk found on
// the master at addr: on that master's own connections (see
// snapshotChunk).
func (c *Client) ReadFoundOn(ctx context.Context, addr string, keys []string) ([]model.Observation, error) {
	masters, err := c.masters(ctx)
	if err != nil {
		return nil, err
	}
	for _, m := range masters {
		if m.Options().Addr == addr {
			return c.snapshotChunk(ctx, m, keys)
		}
	}
	return nil, fmt.Errorf("%s is not a master", addr)
}
