package redistest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// slotCount is the number of hash slots a Redis Cluster divides keys into.
const slotCount = 16384

// Cluster is a real Redis Cluster of redis-server processes, made by
// StartCluster. Which nodes are masters changes with Failover and
// AddMaster.
type Cluster struct {
	Nodes []*Server // every node, in the order they were started

	masters int      // how many nodes serve slots
	args    []string // every node's
	tls     *Certs   // every node's, for a cluster that speaks only TLS
}

// StartCluster starts masters*(1+replicasPerMaster) redis-server processes
// with cluster mode on, splits the 16384 slots evenly over the first
// masters of them, gives each master replicasPerMaster replicas, and waits
// until every node agrees on the topology, says cluster_state:ok, and
// every replica is in sync. The nodes stop when the test ends. args are
// passed to every node (with --requirepass, replicas authenticate with the
// same password).
//
// Nodes detect a failed peer after one second (cluster-node-timeout), and
// masters send a replica its first copy at once (repl-diskless-sync-delay),
// so that the tests finish fast. args come after these, so that
// "--cluster-node-timeout", "60000" keeps a killed master's replica from
// taking over while a test looks at the outage.
func StartCluster(t testing.TB, masters, replicasPerMaster int, args ...string) *Cluster {
	t.Helper()
	return startCluster(t, masters, replicasPerMaster, nil, args)
}

// StartTLSCluster is StartCluster for a cluster that speaks only TLS, as
// managed clusters with encryption in transit do: to clients, between its
// nodes (the cluster bus) and from replicas to masters, with the
// certificates of one NewCerts (in each node's TLS field). Nodes ask
// clients for a certificate their CA signed.
func StartTLSCluster(t testing.TB, masters, replicasPerMaster int, args ...string) *Cluster {
	t.Helper()
	certs := NewCerts(t)
	args = append(certs.serverArgs(true), append([]string{"--tls-cluster", "yes", "--tls-replication", "yes"}, args...)...)
	return startCluster(t, masters, replicasPerMaster, certs, args)
}

func startCluster(t testing.TB, masters, replicasPerMaster int, certs *Certs, args []string) *Cluster {
	t.Helper()
	if masters < 1 || replicasPerMaster < 0 {
		t.Fatalf("redistest: a cluster of %d masters with %d replicas each cannot be built", masters, replicasPerMaster)
	}
	nodeArgs := []string{"--cluster-enabled", "yes", "--cluster-node-timeout", "1000", "--repl-diskless-sync-delay", "0"}
	if pw := argValue(args, "--requirepass"); pw != "" {
		nodeArgs = append(nodeArgs, "--masterauth", pw)
	}
	nodeArgs = append(nodeArgs, args...)

	c := &Cluster{masters: masters, args: nodeArgs, tls: certs}
	for i := range masters * (1 + replicasPerMaster) {
		n := c.startNode(t)
		c.Nodes = append(c.Nodes, n)
		// Distinct epochs spare the nodes from settling collisions.
		n.Do(t, "CLUSTER", "SET-CONFIG-EPOCH", i+1)
	}
	for i, m := range c.Nodes[:masters] {
		m.Do(t, "CLUSTER", "ADDSLOTSRANGE", i*slotCount/masters, (i+1)*slotCount/masters-1)
	}
	// Every node meets every other: faster than letting gossip spread
	// the news.
	for i, n := range c.Nodes {
		for _, m := range c.Nodes[:i] {
			n.Do(t, "CLUSTER", "MEET", "127.0.0.1", m.Port)
		}
	}
	waitFor(t, "every cluster node to know the others", func() (bool, string) {
		for _, n := range c.Nodes {
			info, err := n.admin.ClusterInfo(context.Background()).Result()
			if err != nil {
				return false, err.Error()
			}
			if known := infoField(info, "cluster_known_nodes"); known != strconv.Itoa(len(c.Nodes)) {
				return false, fmt.Sprintf("%s knows %s nodes", n.Addr, known)
			}
		}
		return true, ""
	})
	for i, m := range c.Nodes[:masters] {
		var replicas []*Server
		for j := masters + i; j < len(c.Nodes); j += masters {
			c.Nodes[j].Do(t, "CLUSTER", "REPLICATE", m.Do(t, "CLUSTER", "MYID"))
			replicas = append(replicas, c.Nodes[j])
		}
		waitReplicating(t, m, replicas)
		// CLUSTER SLOTS, where clients learn the topology, leaves out
		// replicas whose replication offset is 0, as it is until the master
		// writes something (or pings its replicas, every ten seconds). A
		// FLUSHALL on an empty master is such a write.
		m.Do(t, "FLUSHALL")
	}
	c.settle(t)
	return c
}

// startNode starts one more node of the cluster, not yet part of it.
func (c *Cluster) startNode(t testing.TB) *Server {
	t.Helper()
	return launch(t, &Server{args: c.args, Password: argValue(c.args, "--requirepass"), TLS: c.tls})
}

// URL is the first node's address as countertop's --url takes it: a seed
// from which the client learns the rest (rediss:// for StartTLSCluster).
func (c *Cluster) URL() string {
	if c.tls != nil {
		return "rediss://" + c.Nodes[0].Addr
	}
	return "redis://" + c.Nodes[0].Addr
}

// Addrs are the addresses of every node.
func (c *Cluster) Addrs() []string {
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr
	}
	return addrs
}

// Client returns a go-redis cluster client for test setup, closed when the
// test ends.
func (c *Cluster) Client(t testing.TB) *redis.ClusterClient {
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), Password: c.Nodes[0].Password, TLSConfig: c.Nodes[0].tlsConfig()})
	t.Cleanup(func() { cc.Close() })
	return cc
}

// Masters returns the nodes that serve slots now, in the order they were
// started.
func (c *Cluster) Masters(t testing.TB) []*Server {
	t.Helper()
	var masters []*Server
	for _, n := range c.view(t, c.Nodes[0]) {
		if n.master() && n.slots != "" {
			masters = append(masters, c.node(t, n.addr))
		}
	}
	slices.SortFunc(masters, func(a, b *Server) int { return slices.Index(c.Nodes, a) - slices.Index(c.Nodes, b) })
	return masters
}

// Failover promotes a replica of master with CLUSTER FAILOVER, as an
// operator does before maintenance, waits until every node agrees that it
// serves master's slots and master has become its replica, in sync, and
// returns it.
func (c *Cluster) Failover(t testing.TB, master *Server) *Server {
	t.Helper()
	id, _ := master.Do(t, "CLUSTER", "MYID").(string)
	var replica *Server
	for _, n := range c.view(t, master) {
		if !n.master() && n.masterID == id {
			replica = c.node(t, n.addr)
			break
		}
	}
	if replica == nil {
		t.Fatalf("redistest: %s has no replica to fail over to", master.Addr)
	}
	replica.Do(t, "CLUSTER", "FAILOVER")
	waitFor(t, replica.Addr+" to be promoted", func() (bool, string) {
		role := replicationField(replica, "role")
		return role == "master", "role:" + role
	})
	c.settle(t)
	return replica
}

// Kill kills master's process (SIGKILL, as a crash or kill -9 does, with no
// CLUSTER FAILOVER), waits until the cluster has promoted one of its
// replicas in its place (after cluster-node-timeout) and every node still
// running says cluster_state:ok and sees the replica serving the slots,
// and returns the replica. The killed node stays in Nodes, flagged failed
// by the others; Failover and AddMaster, which want every node healthy,
// are not for a cluster with a killed node.
func (c *Cluster) Kill(t testing.TB, master *Server) *Server {
	t.Helper()
	id, _ := master.Do(t, "CLUSTER", "MYID").(string)
	var replicas []*Server
	for _, n := range c.view(t, master) {
		if !n.master() && n.masterID == id {
			replicas = append(replicas, c.node(t, n.addr))
		}
	}
	if len(replicas) == 0 {
		t.Fatalf("redistest: %s has no replica to take over when it is killed", master.Addr)
	}
	master.Stop()
	var promoted *Server
	waitFor(t, "a replica of the killed "+master.Addr+" to be promoted", func() (bool, string) {
		for _, r := range replicas {
			if role := replicationField(r, "role"); role == "master" {
				promoted = r
				return true, ""
			}
		}
		return false, "no replica says role:master yet"
	})
	promotedID, _ := promoted.Do(t, "CLUSTER", "MYID").(string)
	waitFor(t, "the cluster to agree that "+promoted.Addr+" took over", func() (bool, string) {
		for _, n := range c.Nodes {
			if n == master {
				continue
			}
			view, why := c.okView(n)
			if why != "" {
				return false, why
			}
			i := slices.IndexFunc(view, func(v nodeLine) bool { return v.id == promotedID })
			if i < 0 || !view[i].master() || view[i].slots == "" {
				return false, n.Addr + " does not see " + promoted.Addr + " serving slots"
			}
		}
		return true, ""
	})
	return promoted
}

// AddMaster starts a node, joins it to the cluster, and makes it the
// master of the slot that holds key, moving that slot's keys to it, as
// redis-cli --cluster reshard does. It waits until every node agrees, and
// returns the new master.
func (c *Cluster) AddMaster(t testing.TB, key string) *Server {
	t.Helper()
	n := c.startNode(t)
	for _, m := range c.Nodes {
		n.Do(t, "CLUSTER", "MEET", "127.0.0.1", m.Port)
	}
	c.Nodes = append(c.Nodes, n)
	// A node takes MIGRATE only once it says the cluster is ok.
	waitFor(t, n.Addr+" to join the cluster", func() (bool, string) {
		info, err := n.admin.ClusterInfo(context.Background()).Result()
		if err != nil {
			return false, err.Error()
		}
		if state := infoField(info, "cluster_state"); state != "ok" {
			return false, "it says cluster_state:" + state
		}
		for _, m := range c.Nodes {
			view, err := c.viewOf(m)
			if err != nil {
				return false, err.Error()
			}
			if len(view) != len(c.Nodes) || slices.ContainsFunc(view, func(v nodeLine) bool { return slices.Contains(v.flags, "handshake") }) {
				return false, m.Addr + " does not know every node yet"
			}
		}
		return true, ""
	})

	slot, _ := n.Do(t, "CLUSTER", "KEYSLOT", key).(int64)
	shards, err := n.admin.ClusterShards(context.Background()).Result()
	if err != nil {
		t.Fatalf("redistest: CLUSTER SHARDS: %v", err)
	}
	var from *Server
	for _, s := range shards {
		serves := slices.ContainsFunc(s.Slots, func(r redis.SlotRange) bool { return r.Start <= slot && slot <= r.End })
		if m := shardMaster(s); serves && m != nil {
			from = c.byID(t, n, m.ID)
		}
	}
	if from == nil {
		t.Fatalf("redistest: no master serves slot %d", slot)
	}
	id, fromID := n.Do(t, "CLUSTER", "MYID"), from.Do(t, "CLUSTER", "MYID")
	n.Do(t, "CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	from.Do(t, "CLUSTER", "SETSLOT", slot, "MIGRATING", id)
	for {
		keys, _ := from.Do(t, "CLUSTER", "GETKEYSINSLOT", slot, 100).([]any)
		if len(keys) == 0 {
			break
		}
		args := []any{"MIGRATE", "127.0.0.1", n.Port, "", 0, 5000}
		if pw := n.Password; pw != "" {
			args = append(args, "AUTH", pw)
		}
		from.Do(t, append(append(args, "KEYS"), keys...)...)
	}
	// The new owner first, then the old, then the other masters; replicas
	// learn from their masters.
	for _, m := range append([]*Server{n, from}, slices.DeleteFunc(c.Masters(t), func(m *Server) bool { return m == from })...) {
		m.Do(t, "CLUSTER", "SETSLOT", slot, "NODE", id)
	}
	c.masters++
	c.settle(t)
	return n
}

// settle waits until every node says cluster_state:ok and sees the same
// topology (the right number of masters, every other node a replica, no
// node failing or joining), every replica is in sync with its master, and
// CLUSTER SHARDS says every node is online.
func (c *Cluster) settle(t testing.TB) {
	t.Helper()
	waitFor(t, "the cluster to settle", func() (bool, string) {
		var first string
		for _, n := range c.Nodes {
			view, why := c.okView(n)
			if why != "" {
				return false, why
			}
			if ok, why := c.healthy(view); !ok {
				return false, n.Addr + ": " + why
			}
			if sig := signature(view); first == "" {
				first = sig
			} else if sig != first {
				return false, "the nodes disagree on the topology"
			}
			shards, err := n.admin.ClusterShards(context.Background()).Result()
			if err != nil {
				return false, err.Error()
			}
			for _, s := range shards {
				if len(s.Slots) == 0 {
					continue // a master without slots, which healthy refuses
				}
				m := shardMaster(s)
				if m == nil {
					return false, fmt.Sprintf("%s names no master for slots %d-%d", n.Addr, s.Slots[0].Start, s.Slots[0].End)
				}
				if online, want := onlineCount(s), 1+replicaCount(view, m.ID); online != want {
					return false, fmt.Sprintf("%s says %d nodes are online for slots %d-%d, not %d", n.Addr, online, s.Slots[0].Start, s.Slots[0].End, want)
				}
			}
			if self := view[slices.IndexFunc(view, func(v nodeLine) bool { return v.myself })]; !self.master() {
				if link := replicationField(n, "master_link_status"); link != "up" {
					return false, n.Addr + " says master_link_status:" + link
				}
			}
		}
		return true, ""
	})
}

// shardMaster is the master of a CLUSTER SHARDS entry; nil if it names none.
func shardMaster(s redis.ClusterShard) *redis.Node {
	i := slices.IndexFunc(s.Nodes, func(n redis.Node) bool { return n.Role == "master" })
	if i < 0 {
		return nil
	}
	return &s.Nodes[i]
}

// onlineCount is how many nodes of a CLUSTER SHARDS entry are online: its
// master and the replicas that are in sync and not failing, the ones
// CLUSTER SLOTS (which go-redis routes by) lists.
func onlineCount(s redis.ClusterShard) int {
	n := 0
	for _, node := range s.Nodes {
		if node.Role == "master" || node.Health == "online" {
			n++
		}
	}
	return n
}

// replicaCount is how many replicas view gives the master with id.
func replicaCount(view []nodeLine, id string) int {
	n := 0
	for _, v := range view {
		if !v.master() && v.masterID == id {
			n++
		}
	}
	return n
}

// healthy reports whether view shows every node, c.masters of them serving
// slots, each other one a replica, none failing, joining or cut off.
func (c *Cluster) healthy(view []nodeLine) (bool, string) {
	if len(view) != len(c.Nodes) {
		return false, fmt.Sprintf("sees %d nodes of %d", len(view), len(c.Nodes))
	}
	masters := 0
	for _, n := range view {
		for _, bad := range []string{"fail", "fail?", "handshake", "noaddr"} {
			if slices.Contains(n.flags, bad) {
				return false, n.addr + " is " + bad
			}
		}
		if !n.myself && n.link != "connected" {
			return false, n.addr + " is " + n.link
		}
		if n.master() && n.slots != "" {
			masters++
		} else if n.master() {
			return false, n.addr + " is a master without slots"
		}
	}
	if masters != c.masters {
		return false, fmt.Sprintf("sees %d masters, not %d", masters, c.masters)
	}
	return true, ""
}

// nodeLine is one line of CLUSTER NODES.
type nodeLine struct {
	id, addr, masterID, link, slots string
	flags                           []string
	myself                          bool
}

func (n nodeLine) master() bool { return slices.Contains(n.flags, "master") }

// view is CLUSTER NODES as n sees it; errors fail the test.
func (c *Cluster) view(t testing.TB, n *Server) []nodeLine {
	t.Helper()
	v, err := c.viewOf(n)
	if err != nil {
		t.Fatalf("redistest: CLUSTER NODES on %s: %v", n.Addr, err)
	}
	return v
}

// okView is n's view of the cluster, or why there is none to trust yet: n
// does not answer, or does not say cluster_state:ok.
func (c *Cluster) okView(n *Server) ([]nodeLine, string) {
	info, err := n.admin.ClusterInfo(context.Background()).Result()
	if err != nil {
		return nil, err.Error()
	}
	if state := infoField(info, "cluster_state"); state != "ok" {
		return nil, n.Addr + " says cluster_state:" + state
	}
	view, err := c.viewOf(n)
	if err != nil {
		return nil, err.Error()
	}
	return view, ""
}

func (c *Cluster) viewOf(n *Server) ([]nodeLine, error) {
	out, err := n.admin.ClusterNodes(context.Background()).Result()
	if err != nil {
		return nil, err
	}
	var view []nodeLine
	for line := range strings.Lines(out) {
		// <id> <ip:port@cport[,hostname]> <flags> <master> <ping-sent> <pong-recv> <config-epoch> <link-state> <slot>...
		f := strings.Fields(line)
		if len(f) < 8 {
			continue
		}
		addr, _, _ := strings.Cut(f[1], "@")
		flags := strings.Split(f[2], ",")
		view = append(view, nodeLine{
			id: f[0], addr: addr, flags: flags, masterID: f[3], link: f[7],
			slots: strings.Join(f[8:], " "), myself: slices.Contains(flags, "myself"),
		})
	}
	return view, nil
}

// signature is the part of a view every node must agree on: each node's
// role, master and slots.
func signature(view []nodeLine) string {
	lines := make([]string, len(view))
	for i, n := range view {
		role := "replica"
		if n.master() {
			role = "master"
		}
		lines[i] = strings.Join([]string{n.id, role, n.masterID, n.slots}, " ")
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// byID returns the node with id, as n's CLUSTER NODES places it.
func (c *Cluster) byID(t testing.TB, n *Server, id string) *Server {
	t.Helper()
	view := c.view(t, n)
	i := slices.IndexFunc(view, func(v nodeLine) bool { return v.id == id })
	if i < 0 {
		t.Fatalf("redistest: %s knows no node %s", n.Addr, id)
	}
	return c.node(t, view[i].addr)
}

// node returns the node at addr.
func (c *Cluster) node(t testing.TB, addr string) *Server {
	t.Helper()
	for _, n := range c.Nodes {
		if n.Addr == addr {
			return n
		}
	}
	t.Fatalf("redistest: no node of the cluster is at %s", addr)
	return nil
}

// infoField returns the value of field in an INFO or CLUSTER INFO reply.
func infoField(info, field string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// replicationField returns field of s's INFO replication, or the error.
func replicationField(s *Server, field string) string {
	info, err := s.admin.Info(context.Background(), "replication").Result()
	if err != nil {
		return err.Error()
	}
	return infoField(info, field)
}
