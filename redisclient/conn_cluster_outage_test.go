package redisclient_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// keyOn returns a key of want that master serves.
func keyOn(t *testing.T, rc *redistest.Cluster, master *redistest.Server, want map[string]string) string {
	t.Helper()
	admin := rc.Client(t)
	for key := range want {
		m, err := admin.MasterForKey(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if m.Options().Addr == master.Addr {
			return key
		}
	}
	t.Fatalf("no key of the test is on %s", master.Addr)
	return ""
}

// TestClusterMasterKilledDuringPoll kills a master (no CLUSTER FAILOVER):
// once its replica is promoted, polling and writes reach the promoted
// master without waiting for go-redis to reload its slot map by itself,
// which it does only once a minute when no node answers MOVED. (The poller
// recovers through the topology it reads after a failure as well as
// through rerouted reads; the write's half fails without afterWrite.)
func TestClusterMasterKilledDuringPoll(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 1)
	want := fillCluster(t, rc)
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	// A client of its own, as `+` in a dashboard whose poller has not
	// noticed yet: its slot map is as old as the failover.
	writer := connectURL(t, redisclient.Options{URL: rc.URL()})
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
	f.waitAll("the first pass", want)

	// Not the seed: countertop must learn of the promotion from the cluster.
	old := rc.Masters(t)[1]
	key := keyOn(t, rc, old, want)
	promoted := rc.Kill(t, old)
	promoted.Do(t, "SET", key, "77", "EX", "600")

	f.waitValue(key, "77")
	f.waitFor("polling to be healthy again", func() bool {
		return watchingIn(f.state, model.WatchPoll) && f.state.Connected && f.state.LastError == ""
	})
	// The first + after the failover cannot reach the dead master and is
	// not sent again (its connection could have broken after it landed):
	// it says so, and the next + goes to the promoted master.
	_, err := writer.Incr(context.Background(), key, by(t, "1"), time.Minute)
	if want := ", a master of the cluster, refused the connection — its slots have no master until a replica takes over (after cluster-node-timeout): try again in a moment"; err == nil || !strings.Contains(err.Error(), old.Addr+want) {
		t.Fatalf("the first Incr after the failover: %v; want it to say %s%s", err, old.Addr, want)
	}
	obs, err := writer.Incr(context.Background(), key, by(t, "1"), time.Minute)
	if err != nil || obs.Raw != "78" {
		t.Fatalf("Incr %s on the promoted master = %+v, %v; want 78: one increment, not two", key, obs, err)
	}
	f.waitValue(key, "78")
	// The killed master is counted, down, among the replicas: it comes
	// back as one.
	if got, want := topology(t, c).String(), "cluster: 3 masters (3 up), 3 replicas (2 up)"; got != want {
		t.Errorf("Topology after the failover = %q, want %q", got, want)
	}
}

// TestClusterNodesDown kills a replica, then a master whose replica cannot
// take over within the test (cluster-node-timeout is a minute): the
// topology counts both as down, the poller says which node does not answer
// and what to do, and so does a snapshot, without blaming --url.
func TestClusterNodesDown(t *testing.T) {
	t.Parallel()
	rc, want, c, f := pollCluster(t, 1, "", 50*time.Millisecond)

	// StartCluster gives Nodes[3] to Nodes[0] as its replica, Nodes[4] to
	// Nodes[1].
	replica, master := rc.Nodes[3], rc.Nodes[1]
	replica.Stop()
	const replicaDown = "cluster: 3 masters (3 up), 3 replicas (2 up)"
	if got := topology(t, c).String(); got != replicaDown {
		t.Errorf("Topology with a replica killed = %q, want %q", got, replicaDown)
	}
	f.waitFor("the header to count the replica down", func() bool { return f.state.Topology == replicaDown })

	master.Stop()
	const masterDown = "cluster: 3 masters (2 up), 3 replicas (2 up)"
	if got := topology(t, c).String(); got != masterDown {
		t.Errorf("Topology with a master killed = %q, want %q", got, masterDown)
	}
	sentence := master.Addr + ", a master of the cluster, refused the connection — its slots have no master until a replica takes over (after cluster-node-timeout): try again in a moment"
	// The first error may be the connection the kill broke (EOF); the
	// next tries cannot connect, and say which node that is.
	f.until("the header to count the master down and name it", func() string {
		if f.state.Topology != masterDown || f.state.Phase != model.FeedReconnecting || f.state.LastError != sentence {
			return fmt.Sprintf("topology %q, mode %q, error %q\nwant %q", f.state.Topology, f.state.Mode, f.state.LastError, sentence)
		}
		return ""
	})

	// The masters that answer keep their rows live meanwhile, with the
	// sentence on: a value changed on one of them arrives, and no key of
	// the dead master is reported gone.
	f.noneRemoved("while its master is down")
	live := keyOn(t, rc, rc.Nodes[0], want)
	rc.Nodes[0].Do(t, "SET", live, "4242", "EX", "600")
	f.waitValue(live, "4242")
	if f.state.LastError != sentence {
		t.Errorf("while the others' rows come, the error is %q, want %q", f.state.LastError, sentence)
	}

	// As snapshot and check do: connect anew, then read everything.
	fresh := connectURL(t, redisclient.Options{URL: rc.URL()})
	_, err := snapshot(context.Background(), fresh, []string{"rl:*"}, 0)
	checkSentence(t, err, sentence, "")
	if strings.Contains(fmt.Sprint(err), "--url") {
		t.Errorf("the snapshot's error blames --url: %v", err)
	}
	key := keyOn(t, rc, rc.Nodes[0], want) // on a master that answers
	if _, err := fresh.Incr(context.Background(), key, by(t, "1"), time.Minute); err != nil {
		t.Errorf("Incr on a master that is up: %v", err)
	}
}

// A master that refuses the password the others take is named in the
// error, not the node given in --url, which took it.
func TestClusterPasswordRefusedByOneMaster(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0)
	want := fillCluster(t, rc)
	other := rc.Nodes[1]
	key := keyOn(t, rc, other, want)
	other.Do(t, "CONFIG", "SET", "requirepass", "not-the-same") // the admin connection stays signed in
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	_, err := snapshot(context.Background(), c, []string{"rl:*"}, 0)
	if err == nil || !strings.Contains(err.Error(), other.Addr) || strings.Contains(err.Error(), rc.Nodes[0].Addr) {
		t.Errorf("snapshot with %s refusing: %v; want the error to name it, and not the seed %s", other.Addr, err, rc.Nodes[0].Addr)
	}
	// A read of its keys alone (the read after an increment, say).
	_, err = c.Fetch(context.Background(), []string{key})
	if err == nil || !strings.Contains(err.Error(), other.Addr) || strings.Contains(err.Error(), rc.Nodes[0].Addr) {
		t.Errorf("Fetch of %s on %s refusing: %v; want the error to name it, and not the seed %s", key, other.Addr, err, rc.Nodes[0].Addr)
	}
}

// Started while a master is down (before a replica takes over), the
// poller shows the other masters' keys, names the one that is down, and
// does not say all is well while it is.
//
// The passes after the first are spread over many cycles (a SCAN of two
// keys a cycle), as at a million keys: the cycles in the middle of a pass
// must not say all is well either.
func TestClusterStartedWithAMasterDown(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0, "--cluster-node-timeout", "60000")
	want := fillCluster(t, rc)
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	dead := rc.Nodes[1]
	dead.Stop()
	o := redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond, ScanCount: 2}
	o.SetScanBudget(time.Nanosecond)
	f := startPoll(t, c, o)
	live := keyOn(t, rc, rc.Nodes[2], want)
	f.waitValue(live, want[live])
	prefix := dead.Addr + ", a master of the cluster,"
	f.until("the sentence to name the master that is down", func() string {
		if !strings.HasPrefix(f.state.LastError, prefix) {
			return fmt.Sprintf("error %q, want it to begin %q", f.state.LastError, prefix)
		}
		return ""
	})
	f.onBatch = func(b model.Batch) {
		if b.State != nil && b.State.LastError == "" {
			t.Errorf("while %s is down the feed said all is well: %+v", dead.Addr, *b.State)
		}
	}
	other := keyOn(t, rc, rc.Nodes[0], want)
	rc.Nodes[0].Do(t, "SET", other, "99", "EX", "600")
	f.waitValue(other, "99")
}

// A master that lets the snapshot walk its keys but refuses to read them
// (an ACL on that node alone) is named in the error: the reads of a
// snapshot's chunk, which can span masters, are each master's own.
func TestClusterSnapshotReadRefusedByOneMaster(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0)
	want := fillCluster(t, rc)
	other := rc.Nodes[1]
	keyOn(t, rc, other, want) // it holds keys of the pattern
	other.Do(t, "ACL", "SETUSER", "default", "-getrange")
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	_, err := snapshot(context.Background(), c, []string{"rl:*"}, 0)
	if err == nil || !strings.Contains(err.Error(), "on "+other.Addr) || strings.Contains(err.Error(), rc.Nodes[0].Addr) {
		t.Errorf("snapshot with %s refusing GETRANGE: %v; want the error to name it, and not the seed %s", other.Addr, err, rc.Nodes[0].Addr)
	}
}

// While a master is down, the masters that answer keep their rows as live
// as ever: a poll cycle every interval, not the backoff of an outage, which
// grows to 5 s. A counter a client keeps moving on a live master is read
// many times over a few seconds, long after the master went down.
func TestClusterLiveRowsKeepTheIntervalWhileAMasterIsDown(t *testing.T) {
	t.Parallel()
	rc, want, _, f := pollCluster(t, 0, "", 100*time.Millisecond)

	dead := rc.Nodes[1]
	dead.Stop()
	f.waitFor("the sentence to name the dead master", func() bool { return strings.Contains(f.state.LastError, dead.Addr) })
	// Backing off 0.25, 0.5, 1, 2 and 4 s would be at 5 s by now. (The
	// feed is read meanwhile: a feed not read holds the poller up.)
	backedOff := time.Now().Add(8 * time.Second)
	f.waitFor("eight seconds of the outage", func() bool { return time.Now().After(backedOff) })

	// 5 s of values, one every 100 ms. A cycle here, under the race
	// detector, takes up to a few hundred ms (a discovery pass's share,
	// the topology read again); backing off, one comes every 5 s.
	live := keyOn(t, rc, rc.Nodes[0], want)
	reads := f.readsOfValuesSet(rc.Nodes[0], live, 50)
	if len(reads) < 8 {
		t.Errorf("%d of 50 values of %s set 100 ms apart over 5 s were read, want 8 or more: the live rows slowed down", len(reads), live)
	}
	if !strings.Contains(f.state.LastError, dead.Addr) {
		t.Errorf("while the live rows come, the error is %q, want it to name %s", f.state.LastError, dead.Addr)
	}
}

// pollCluster starts a cluster of three masters, each with replicas
// replicas, that fails over only when a test says (a minute's
// cluster-node-timeout), fills it, and polls rl:* every interval on a
// client of its URL with query, until the first pass is over.
func pollCluster(t *testing.T, replicas int, query string, interval time.Duration) (*redistest.Cluster, map[string]string, *redisclient.Client, *feed) {
	t.Helper()
	rc := redistest.StartCluster(t, 3, replicas, "--cluster-node-timeout", "60000")
	want := fillCluster(t, rc)
	c := connectURL(t, redisclient.Options{URL: rc.URL() + query})
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: interval})
	f.waitAll("the first pass", want)
	return rc, want, c, f
}

// While a master is down, a key new on a master that answers appears: the
// discovery passes go on over the masters that answer, and take no key of
// the dead one for deleted.
func TestClusterNewKeysAppearWhileAMasterIsDown(t *testing.T) {
	t.Parallel()
	rc, _, _, f := pollCluster(t, 0, "", 100*time.Millisecond)
	f.noneRemoved("while a master is down")
	dead := rc.Nodes[1]
	dead.Stop()
	f.waitFor("the sentence to name the dead master", func() bool { return strings.Contains(f.state.LastError, dead.Addr) })

	names := map[string]string{}
	for i := range 100 {
		names[fmt.Sprintf("rl:new:%d", i)] = ""
	}
	fresh := keyOn(t, rc, rc.Nodes[0], names)
	rc.Nodes[0].Do(t, "SET", fresh, "77", "EX", "600")
	f.waitValue(fresh, "77")
	if !strings.Contains(f.state.LastError, dead.Addr) {
		t.Errorf("once the new key came, the error is %q, want it to name %s", f.state.LastError, dead.Addr)
	}
}
