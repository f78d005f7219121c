package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"
)

// sentinelConf is the file a Sentinel reads its config from and writes its
// state to, in its dir.
const sentinelConf = "sentinel.conf"

// Sentinel is a real Redis Sentinel (redis-server --sentinel), made by
// StartSentinel. Its Server is the Sentinel process itself.
type Sentinel struct {
	*Server
	MasterName string // the name it knows the master by

	nodes []*Server // the master and its replicas; which is master changes with Failover
}

// StartSentinel makes each of replicas a replica of master, waits until they
// are in sync, then starts a Sentinel watching master under the name
// "mymaster" (quorum 1, so that it alone can decide a failover) and waits
// until it knows every replica. It stops when the test ends. A master with a
// Password gets it as masterauth on every node, and in Sentinel's auth-pass.
func StartSentinel(t testing.TB, master *Server, replicas ...*Server) *Sentinel {
	t.Helper()
	return startSentinel(t, "", master, replicas)
}

// StartSentinelWithPassword is StartSentinel for a Sentinel that asks its
// clients for password (requirepass in its config), as secured setups do;
// Do and Client give it.
func StartSentinelWithPassword(t testing.TB, password string, master *Server, replicas ...*Server) *Sentinel {
	t.Helper()
	return startSentinel(t, password, master, replicas)
}

func startSentinel(t testing.TB, password string, master *Server, replicas []*Server) *Sentinel {
	t.Helper()
	nodes := append([]*Server{master}, replicas...)
	for _, n := range nodes {
		// A master sends a new replica its first copy at once, not after
		// the default delay of five seconds.
		n.Do(t, "CONFIG", "SET", "repl-diskless-sync-delay", "0")
		if master.Password != "" { // the master too: it becomes a replica after a failover
			n.Do(t, "CONFIG", "SET", "masterauth", master.Password)
		}
	}
	for _, r := range replicas {
		r.Do(t, "REPLICAOF", "127.0.0.1", master.Port)
	}
	// Sentinel learns of replicas from the master's INFO, which it reads at
	// once and then every ten seconds: they must be listed by then.
	waitReplicating(t, master, replicas)

	const name = "mymaster"
	conf := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 1\n", name, master.Port) +
		// A master that stops answering is failed over after 5s; tests
		// force failovers with Failover instead, and a slow test machine
		// must not trigger one.
		fmt.Sprintf("sentinel down-after-milliseconds %s 5000\n", name) +
		fmt.Sprintf("sentinel failover-timeout %s 2000\n", name)
	if master.Password != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", name, master.Password)
	}
	if password != "" {
		conf += fmt.Sprintf("requirepass %s\n", password)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, sentinelConf), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &Sentinel{Server: launch(t, &Server{dir: dir, sentinel: true, Password: password}), MasterName: name, nodes: nodes}
	s.settle(t, master)
	return s
}

// URL is the Sentinel as countertop's --url takes it:
// redis+sentinel://127.0.0.1:PORT/0?master_name=mymaster.
func (s *Sentinel) URL() string {
	return "redis+sentinel://" + s.Addr + "/0?master_name=" + s.MasterName
}

// Master returns the node that the Sentinel says is the master now.
func (s *Sentinel) Master(t testing.TB) *Server {
	t.Helper()
	addr, err := s.masterAddr()
	if err != nil {
		t.Fatalf("redistest: SENTINEL GET-MASTER-ADDR-BY-NAME: %v", err)
	}
	for _, n := range s.nodes {
		if n.Addr == addr {
			return n
		}
	}
	t.Fatalf("redistest: the Sentinel names %s as the master, which it was not given", addr)
	return nil
}

// Failover forces a failover with SENTINEL FAILOVER once every replica has
// every write (Sentinel does not wait for that: a write it has not
// replicated would be lost), waits until the Sentinel names a replica as
// the new master, makes the old master its replica (as the Sentinel itself
// would some seconds later), waits until every node is in sync with it,
// and returns it.
func (s *Sentinel) Failover(t testing.TB) *Server {
	t.Helper()
	old := s.Master(t)
	if n := len(s.nodes) - 1; old.Do(t, "WAIT", n, settleTimeout.Milliseconds()) != int64(n) {
		t.Fatalf("redistest: the replicas of %s did not catch up within %v", old.Addr, settleTimeout)
	}
	s.Do(t, "SENTINEL", "FAILOVER", s.MasterName)
	waitFor(t, "the Sentinel to promote a replica", func() (bool, string) {
		addr, err := s.masterAddr()
		if err != nil {
			return false, err.Error()
		}
		return addr != old.Addr, "the master is still " + addr
	})
	master := s.Master(t)
	waitFor(t, master.Addr+" to be promoted", func() (bool, string) {
		role := replicationField(master, "role")
		return role == "master", "role:" + role
	})
	old.Do(t, "REPLICAOF", "127.0.0.1", master.Port)
	s.settle(t, master)
	return master
}

// settle waits until every other node replicates master in sync, and the
// Sentinel names master and knows every replica as healthy.
func (s *Sentinel) settle(t testing.TB, master *Server) {
	t.Helper()
	replicas := slices.DeleteFunc(slices.Clone(s.nodes), func(n *Server) bool { return n == master })
	waitReplicating(t, master, replicas)
	sc := redis.NewSentinelClient(&redis.Options{Addr: s.Addr, Password: s.Password})
	defer sc.Close()
	waitFor(t, "the Sentinel to know the topology", func() (bool, string) {
		if addr, err := s.masterAddr(); err != nil || addr != master.Addr {
			return false, fmt.Sprintf("it names %q as the master (%v)", addr, err)
		}
		known, err := sc.Replicas(context.Background(), s.MasterName).Result()
		if err != nil {
			return false, err.Error()
		}
		healthy := 0
		for _, r := range known {
			if r["flags"] == "slave" && r["master-link-status"] == "ok" {
				healthy++
			}
		}
		return healthy == len(replicas), fmt.Sprintf("it knows %d healthy replicas of %d", healthy, len(replicas))
	})
}

func (s *Sentinel) masterAddr() (string, error) {
	hostPort, err := s.admin.Do(context.Background(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", s.MasterName).StringSlice()
	if err != nil {
		return "", err
	}
	if len(hostPort) != 2 {
		return "", fmt.Errorf("unexpected reply %q", hostPort)
	}
	return net.JoinHostPort(hostPort[0], hostPort[1]), nil
}

// waitReplicating waits until each of replicas is in sync with master.
func waitReplicating(t testing.TB, master *Server, replicas []*Server) {
	t.Helper()
	waitFor(t, "the replicas of "+master.Addr+" to be in sync", func() (bool, string) {
		for _, r := range replicas {
			if port := replicationField(r, "master_port"); port != strconv.Itoa(master.Port) {
				return false, r.Addr + " replicates port " + port
			}
			if link := replicationField(r, "master_link_status"); link != "up" {
				return false, r.Addr + " says master_link_status:" + link
			}
		}
		return true, ""
	})
}
