package redisclient

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Topology is the shape of the deployment a Client is connected to, as it
// is now.
type Topology struct {
	Kind string // "standalone", "cluster" or "sentinel"
	Name string // the master's name, behind Sentinel
	// Masters are the servers that hold the keys: the one server, the
	// cluster's masters, or the master Sentinel names.
	Masters []Node
	// Replicas are the cluster's replicas, or the master's replicas that
	// Sentinel knows; none are listed for a single server.
	Replicas []Node
}

// Node is one server of a deployment.
type Node struct {
	Addr string // host:port
	Up   bool   // it answered PING, and its cluster does not flag it failing; behind Sentinel, Sentinel sees it up
}

// Topology reads the deployment's topology now: in a cluster, the masters
// and replicas and which of them answer (a failover or an added master
// shows at once); behind Sentinel, the master and replicas Sentinel knows.
func (c *Client) Topology(ctx context.Context) (Topology, error) {
	switch c.kind {
	case cluster:
		return c.clusterTopology(ctx)
	case sentinel:
		return c.sentinelTopology(ctx)
	}
	return Topology{Kind: standalone, Masters: []Node{{Addr: c.hostPort, Up: c.rdb.Ping(ctx).Err() == nil}}}, nil
}

// String returns the topology for the dashboard's header, e.g. "standalone",
// "cluster: 3 masters (2 up), 3 replicas (2 up)" or
// "sentinel mymaster: master 10.0.0.5:6379, 2 replicas". Replicas that are
// down are counted only when there are some.
func (t Topology) String() string {
	switch t.Kind {
	case cluster:
		return fmt.Sprintf("cluster: %s (%d up), %s", count(len(t.Masters), "master"), up(t.Masters), replicas(t.Replicas))
	case sentinel:
		master := "no master"
		if len(t.Masters) > 0 {
			master = "master " + t.Masters[0].Addr
			if !t.Masters[0].Up {
				master += " (down)"
			}
		}
		return fmt.Sprintf("sentinel %s: %s, %s", t.Name, master, replicas(t.Replicas))
	}
	return t.Kind
}

// sort puts the nodes in address order, so that the same topology reads
// the same every time.
func (t *Topology) sort() {
	byAddr := func(a, b Node) int { return cmp.Compare(a.Addr, b.Addr) }
	slices.SortFunc(t.Masters, byAddr)
	slices.SortFunc(t.Replicas, byAddr)
}

// replicas returns nodes counted as replicas ("3 replicas"), with how many
// are up when some are not ("3 replicas (2 up)").
func replicas(nodes []Node) string {
	s := count(len(nodes), "replica")
	if n := up(nodes); n < len(nodes) {
		s += fmt.Sprintf(" (%d up)", n)
	}
	return s
}

// up returns how many of nodes are up.
func up(nodes []Node) int {
	n := 0
	for _, x := range nodes {
		if x.Up {
			n++
		}
	}
	return n
}

// count returns n noun, in the plural unless n is 1.
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
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
