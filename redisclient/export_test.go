package redisclient

import "time"

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
