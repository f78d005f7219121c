package redisclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// useCluster makes c a Redis Cluster client seeded at opt.Addr, which
// gives every node opt's credentials, TLS and timeouts. go-redis's client
// learns the other nodes from the seed, sends each command to the master
// of its key's slot, splits pipelines by node, and reloads the topology
// when a node answers MOVED (after a failover or a resharding).
func (c *Client) useCluster(opt *redis.Options) error {
	if opt.DB != 0 {
		return errClusterDB(opt.DB, nil)
	}
	c.rdb = redis.NewClusterClient(universalOptions(opt, []string{opt.Addr}).Cluster())
	c.kind, c.hostPort, c.addr = cluster, opt.Addr, opt.Addr+"/0"
	return nil
}

// errClusterDB is the error for a URL that names database db of a cluster.
func errClusterDB(db int, cause error) error {
	return explained(fmt.Sprintf("a Redis Cluster has database 0 only — end --url with /0, not /%d", db), cause)
}

// masters returns a client of each server that holds keys, as the
// deployment says now, asked again on every call so that a promoted replica
// or an added master is found without a restart: each master of a cluster,
// the master Sentinel names, or the one server. Keyspace notifications,
// which each server sends only for its own keys, must be subscribed to on
// each, and discovery in a cluster SCANs each.
func (c *Client) masters(ctx context.Context) ([]*redis.Client, error) {
	switch c.kind {
	case sentinel:
		m, err := c.sentinelMaster(ctx)
		if err != nil {
			return nil, err
		}
		return []*redis.Client{m}, nil
	case standalone:
		return []*redis.Client{c.rdb.(*redis.Client)}, nil
	}
	var (
		mu    sync.Mutex
		nodes []*redis.Client
	)
	err := c.rdb.(*redis.ClusterClient).ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return nil, c.explain(err)
	}
	slices.SortFunc(nodes, func(a, b *redis.Client) int { return strings.Compare(a.Options().Addr, b.Options().Addr) })
	return nodes, nil
}

// scanMasters is scan on each master of the cluster in turn. They share
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

// clusterTopology lists the masters and replicas the cluster has now, and
// PINGs each to see which are up.
func (c *Client) clusterTopology(ctx context.Context) (Topology, error) {
	cc := c.rdb.(*redis.ClusterClient)
	t := Topology{Kind: cluster}
	var mu sync.Mutex
	probe := func(list *[]Node) func(context.Context, *redis.Client) error {
		return func(ctx context.Context, n *redis.Client) error {
			up := n.Ping(ctx).Err() == nil
			mu.Lock()
			defer mu.Unlock()
			*list = append(*list, Node{Addr: n.Options().Addr, Up: up})
			return nil
		}
	}
	if err := cc.ForEachMaster(ctx, probe(&t.Masters)); err != nil {
		return Topology{}, c.explain(err)
	}
	if err := cc.ForEachSlave(ctx, probe(&t.Replicas)); err != nil {
		return Topology{}, c.explain(err)
	}
	t.sort()
	return t, nil
}
