package redisclient

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// useCluster makes c a Redis Cluster client seeded at opt.Addr, which
// gives every node opt's credentials, TLS and timeouts. go-redis's client
// learns the other nodes from the seed, sends each command to the master
// of its key's slot, splits pipelines by node, and reloads the topology
// when a node answers MOVED (after a failover or a resharding); when a
// master cannot be reached (it died, and a replica may have taken over),
// countertop has it reloaded at once (see rerouted and afterWrite).
func (c *Client) useCluster(opt *redis.Options) error {
	if opt.DB != 0 {
		return errClusterDB(opt.DB, nil)
	}
	cc := redis.NewClusterClient(universalOptions(opt, []string{opt.Addr}).Cluster())
	// Each master has its own budget: the hook goes on each node's client,
	// which every command to that node passes through.
	cc.OnNewNode(func(node *redis.Client) { node.AddHook(c.budget.hook(node.Options().Addr)) })
	c.rdb = cc
	c.kind, c.hostPort, c.addr = cluster, opt.Addr, opt.Addr+"/0"
	return nil
}

// rerouted runs do, a read, and, in a cluster, when do could not reach a
// node, reads the slot map again and runs do once more. go-redis's cluster
// client keeps its slot map until a node answers MOVED or a minute has
// passed: after a master dies and its replica takes over, nothing answers
// MOVED, and every command for the dead master's slots would go on dialling
// its address for up to that minute. Only for reads: go-redis retries a
// command whose connection broke after it was written and returns the last
// error, a failed dial, so a write may have landed (see afterWrite).
func (c *Client) rerouted(ctx context.Context, do func() error) error {
	err := do()
	if c.kind == cluster && unreachable(err) && ctx.Err() == nil {
		c.reloadSlots(ctx)
		err = do()
	}
	return err
}

// afterWrite returns err, a write's error, after reading the cluster's slot
// map again when
// the write could not reach its node, so that the user's next try goes to
// the master that serves the key now. It does not try the write again: it
// may have landed before the connection broke.
func (c *Client) afterWrite(ctx context.Context, err error) error {
	if c.kind == cluster && unreachable(err) && ctx.Err() == nil {
		c.reloadSlots(ctx)
	}
	return err
}

// reloadSlots reads the cluster's slot map again now, from a node that
// answers, so that the next command goes to the master that serves its
// slot now. (ClusterClient.ReloadState only schedules a reload; the
// commands sent meanwhile would still go to the old master.)
func (c *Client) reloadSlots(ctx context.Context) {
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		// ForEachMaster reads the slot map before it begins.
		_ = cc.ForEachMaster(ctx, func(context.Context, *redis.Client) error { return nil })
	}
}

// errClusterDB returns the error for a URL that names database db of a cluster.
func errClusterDB(db int, cause error) error {
	return explained(fmt.Sprintf("a Redis Cluster has database 0 only — end --url with /0, not /%d", db), cause)
}

// clusterTopology lists the masters and replicas the cluster has now, as
// CLUSTER NODES on a node that answers says, and which of them are up: a
// node is down when it does not answer PING, or when the cluster has agreed
// that it failed (fail) or cannot reach it. A master whose replica took over
// while it was down holds no slots any more, and comes back as a replica:
// it is counted among the replicas, down. It also remembers each node's
// role, for errors that name a node (see nodeDown).
func (c *Client) clusterTopology(ctx context.Context) (Topology, error) {
	cc := c.rdb.(*redis.ClusterClient)
	var mu sync.Mutex
	answers := map[string]*redis.Client{} // the nodes of the slot map that answered PING
	var listed Topology                   // the slot map's nodes: the answer when CLUSTER NODES is not
	probe := func(list *[]Node) func(context.Context, *redis.Client) error {
		return func(ctx context.Context, n *redis.Client) error {
			// A master that hangs is down (see onMaster): not asked again,
			// which would take the whole timeout.
			up := c.stalled(n.Options().Addr) == nil && n.Ping(ctx).Err() == nil
			mu.Lock()
			defer mu.Unlock()
			*list = append(*list, Node{Addr: n.Options().Addr, Up: up})
			if up {
				answers[n.Options().Addr] = n
			}
			return nil
		}
	}
	if err := cc.ForEachMaster(ctx, probe(&listed.Masters)); err != nil {
		return Topology{}, c.explain(err)
	}
	if err := cc.ForEachSlave(ctx, probe(&listed.Replicas)); err != nil {
		return Topology{}, c.explain(err)
	}
	if err := ctx.Err(); err != nil {
		// Out of time (reading the slot map from a node that hangs, say):
		// the nodes that did not answer may not have been asked.
		return Topology{}, c.explain(err)
	}
	t := Topology{Kind: cluster}
	for _, addr := range slices.Sorted(maps.Keys(answers)) {
		out, err := answers[addr].ClusterNodes(ctx).Result()
		if err != nil {
			continue // a user not allowed CLUSTER NODES: the slot map says enough
		}
		roles := map[string]nodeRole{}
		for _, n := range parseClusterNodes(out) {
			if n.handshake {
				continue // joining: not part of the cluster yet
			}
			up := !n.failing && (n.myself || n.connected)
			if _, ok := answers[n.addr]; ok {
				up = !n.failing
			} else if slices.ContainsFunc(append(listed.Masters, listed.Replicas...), func(l Node) bool { return l.Addr == n.addr }) {
				up = false // it did not answer PING
			}
			switch {
			case n.master && (n.slots || up): // an empty master, just added, is one
				t.Masters = append(t.Masters, Node{Addr: n.addr, Up: up})
				roles[n.addr] = nodeRole{master: true, replicas: n.replicas}
			case !n.master || !up:
				t.Replicas = append(t.Replicas, Node{Addr: n.addr, Up: up})
				roles[n.addr] = nodeRole{}
			}
		}
		c.roles.Store(&roles)
		t.sort()
		return t, nil
	}
	listed.Kind = cluster
	listed.sort()
	return listed, nil
}

// nodeRole is what the last reading of the topology said of a node.
type nodeRole struct {
	master   bool // it serves slots
	replicas int  // its replicas that are up, when master
}

// clusterNode is one line of CLUSTER NODES.
type clusterNode struct {
	id, addr, masterID string
	master, slots      bool // a master, serving slots
	failing            bool // flagged fail (agreed by the cluster), or it has no address
	handshake, myself  bool
	connected          bool // the answering node's cluster bus link to it is up
	replicas           int  // of a master: how many replicas are up
}

// parseClusterNodes reads CLUSTER NODES: one node a line,
// <id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
func parseClusterNodes(out string) []clusterNode {
	var nodes []clusterNode
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		hostPort, _, _ := strings.Cut(f[1], "@")
		n := clusterNode{id: f[0], addr: hostPort, masterID: f[3], connected: f[7] == "connected", slots: len(f) > 8}
		if i := strings.LastIndexByte(hostPort, ':'); i >= 0 {
			n.addr = net.JoinHostPort(hostPort[:i], hostPort[i+1:]) // brackets an IPv6 address, as go-redis does
		}
		for flag := range strings.SplitSeq(f[2], ",") {
			switch flag {
			case "master":
				n.master = true
			case "fail", "noaddr": // not fail?, one node's suspicion
				n.failing = true
			case "handshake":
				n.handshake = true
			case "myself":
				n.myself = true
			}
		}
		nodes = append(nodes, n)
	}
	byID := map[string]*clusterNode{}
	for i := range nodes {
		byID[nodes[i].id] = &nodes[i]
	}
	for _, n := range nodes {
		if m := byID[n.masterID]; !n.master && m != nil && !n.failing && (n.myself || n.connected) {
			m.replicas++
		}
	}
	return nodes
}

// nodeAddr returns the address of node, a server of the deployment, for
// errors: a cluster's master by its own address, else the one of --url.
func (c *Client) nodeAddr(node redis.Cmdable) string {
	if n, ok := node.(*redis.Client); ok && c.kind == cluster {
		return n.Options().Addr
	}
	return c.hostPort
}

// nodeDown says that addr, a node of the cluster (learned from it, not
// from --url), could not be reached, what that means for its slots, and
// what to do.
func (c *Client) nodeDown(addr string, err error) string {
	var role nodeRole
	known := false
	if roles := c.roles.Load(); roles != nil {
		role, known = (*roles)[addr]
	}
	if isTimeout(err) {
		// Not down, as far as anyone knows: busy (a fork, a slow
		// command), or frozen, or cut off.
		kind := "node"
		switch {
		case known && role.master:
			kind = "master"
		case known:
			kind = "replica"
		}
		return fmt.Sprintf("%s, a %s of the cluster, did not answer in time: it may be busy with a slow command or a save, or frozen — countertop keeps trying, and its keys' values are as last read", addr, kind)
	}
	what := "refused the connection"
	if !errors.Is(err, syscall.ECONNREFUSED) {
		what = "could not be reached (" + reason(as[*net.OpError](err).Err) + ")"
	}
	switch {
	case !known:
		return fmt.Sprintf("%s, a node of the cluster, %s — if it is a master, its slots have no master until a replica takes over (after cluster-node-timeout): try again in a moment, or restart it", addr, what)
	case !role.master:
		return fmt.Sprintf("%s, a replica of the cluster, %s — its master still serves the keys; restart it to have the replica back", addr, what)
	case role.replicas == 0:
		return fmt.Sprintf("%s, a master of the cluster, %s — it has no replica to take over, so its slots have no master until it is back: restart it", addr, what)
	}
	return fmt.Sprintf("%s, a master of the cluster, %s — its slots have no master until a replica takes over (after cluster-node-timeout): try again in a moment", addr, what)
}
