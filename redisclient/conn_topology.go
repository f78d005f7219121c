package redisclient

import (
	"cmp"
	"context"
	"fmt"
	"net"
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
	// Of is the master a single server replicates (host:port), as its
	// INFO replication says; "" for a master, or when INFO is refused.
	// OfDown is true while its link to that master is down.
	Of     string
	OfDown bool
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
	return c.serverTopology(ctx), nil
}

// serverTopology is a single server's topology: a master, or a replica of
// the master its INFO replication names. A user may be refused INFO: the
// server is then called standalone, INFO is not asked again, and a PING
// says whether it is up.
func (c *Client) serverTopology(ctx context.Context) Topology {
	t := Topology{Kind: standalone, Masters: []Node{{Addr: c.hostPort}}}
	if !c.noReplicationInfo.Load() {
		info, err := c.rdb.Info(ctx, "replication").Result()
		if err == nil {
			t.Masters[0].Up = true
			t.Of, t.OfDown = replicaOf(info)
			return t
		}
		if isReply(err) {
			c.noReplicationInfo.Store(true)
		}
	}
	t.Masters[0].Up = c.rdb.Ping(ctx).Err() == nil
	return t
}

// replicaOf reads an INFO replication reply: the master the server
// replicates (host:port), "" when it is a master, and whether its link to
// that master is down.
func replicaOf(info string) (master string, down bool) {
	fields := map[string]string{}
	for line := range strings.Lines(info) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[k] = v
		}
	}
	if fields["role"] != "slave" || fields["master_host"] == "" {
		return "", false
	}
	return net.JoinHostPort(fields["master_host"], fields["master_port"]), fields["master_link_status"] != "up"
}

// String returns the topology for the dashboard's header, e.g. "standalone",
// "replica of 10.0.0.5:6379" (a single server that replicates another:
// writes there are refused), "cluster: 3 masters (2 up), 3 replicas (2 up)"
// or "sentinel mymaster: master 10.0.0.5:6379, 2 replicas". Replicas that
// are down are counted only when there are some.
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
	if t.Of != "" {
		if t.OfDown {
			return "replica of " + t.Of + ", link down"
		}
		return "replica of " + t.Of
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
