package redisclient_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// clusterKeys is how many counters the cluster tests write: enough that
// every master holds some.
const clusterKeys = 300

// fillCluster writes clusterKeys counters rl:0 ... rl:299 (rl:N holds N,
// with a TTL) and one key no pattern of the tests matches, and returns the
// counters.
func fillCluster(t *testing.T, c *redistest.Cluster) map[string]string {
	t.Helper()
	want := make(map[string]string, clusterKeys)
	_, err := c.Client(t).Pipelined(context.Background(), func(p redis.Pipeliner) error {
		for i := range clusterKeys {
			key := fmt.Sprintf("rl:%d", i)
			want[key] = strconv.Itoa(i)
			p.Set(context.Background(), key, i, 10*time.Minute)
		}
		p.Set(context.Background(), "other", 1, 0)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range c.Masters(t) {
		if n := m.Do(t, "DBSIZE").(int64); n < clusterKeys/10 {
			t.Fatalf("master %s holds %d keys: the keys are not spread over the masters", m.Addr, n)
		}
	}
	return want
}

// topology returns c's topology, failing the test on error.
func topology(t *testing.T, c *redisclient.Client) redisclient.Topology {
	t.Helper()
	top, err := c.Topology(context.Background())
	if err != nil {
		t.Fatalf("Topology: %v", err)
	}
	return top
}

// keyPerMaster returns a key of prefix for each master of rc: keys that
// hash to each master's slots.
func keyPerMaster(t *testing.T, rc *redistest.Cluster, prefix string) []string {
	t.Helper()
	masters := len(rc.Masters(t))
	owners := map[string]bool{}
	var keys []string
	for i := 0; len(keys) < masters; i++ {
		key := prefix + strconv.Itoa(i)
		m, err := rc.Client(t).MasterForKey(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if addr := m.Options().Addr; !owners[addr] {
			owners[addr] = true
			keys = append(keys, key)
		}
	}
	return keys
}

// missing reports whether flags lacks one of want.
func missing(flags, want string) bool {
	return strings.ContainsFunc(want, func(f rune) bool { return !strings.ContainsRune(flags, f) })
}

// clients returns a client of each of servers.
func clients(t *testing.T, servers []*redistest.Server) []*redis.Client {
	nodes := make([]*redis.Client, len(servers))
	for i, s := range servers {
		nodes[i] = s.Client(t)
	}
	return nodes
}

// psubscribers is how many clients of s are subscribed to a pattern.
func psubscribers(t *testing.T, s *redistest.Server) int {
	t.Helper()
	n := 0
	for line := range strings.Lines(s.Do(t, "CLIENT", "LIST", "TYPE", "pubsub").(string)) {
		if strings.Contains(line, " psub=") && !strings.Contains(line, " psub=0 ") {
			n++
		}
	}
	return n
}

// waitSubscriptionMoved waits until the watcher is subscribed to to, and
// no longer to from (unless nil).
func (f *feed) waitSubscriptionMoved(from, to *redistest.Server) {
	f.t.Helper()
	f.until("the subscription to move to "+to.Addr, func() string {
		if n := psubscribers(f.t, to); n != 1 {
			return fmt.Sprintf("%s has %d pattern subscribers", to.Addr, n)
		}
		if from == nil {
			return ""
		}
		if n := psubscribers(f.t, from); n != 0 {
			return fmt.Sprintf("%s still has %d pattern subscribers", from.Addr, n)
		}
		return ""
	})
}

// trackers is how many clients of s are subscribed to tracking's
// invalidations, and how many have tracking on.
func trackers(t *testing.T, s *redistest.Server) (subscribed, tracking int) {
	t.Helper()
	numsub := s.Do(t, "PUBSUB", "NUMSUB", "__redis__:invalidate").([]any)
	subscribed = int(numsub[1].(int64))
	for line := range strings.Lines(s.Do(t, "CLIENT", "LIST").(string)) {
		for _, f := range strings.Fields(line) {
			if v, ok := strings.CutPrefix(f, "flags="); ok && strings.Contains(v, "t") {
				tracking++
			}
		}
	}
	return subscribed, tracking
}

// waitTrackingMoved waits until the watcher tracks on to, with one
// subscriber and one tracking connection, and no longer on from.
func (f *feed) waitTrackingMoved(from, to *redistest.Server) {
	f.t.Helper()
	f.until("tracking to move to "+to.Addr, func() string {
		if sub, tr := trackers(f.t, to); sub != 1 || tr != 1 {
			return fmt.Sprintf("%s has %d subscribers and %d tracking connections", to.Addr, sub, tr)
		}
		if sub, tr := trackers(f.t, from); sub != 0 || tr != 0 {
			return fmt.Sprintf("%s still has %d subscribers and %d tracking connections", from.Addr, sub, tr)
		}
		return ""
	})
}

// watchEvents watches pattern in events mode, following the masters every
// 50ms and with no periodic re-scan within the test's time, and waits for
// the first full pass to end.
func watchEvents(t *testing.T, c *redisclient.Client, pattern string) *feed {
	t.Helper()
	return watchLive(t, c, model.WatchEvents, pattern)
}

// watchLive is watchEvents in mode, events or tracking (polling every 30
// s: only tracking's invalidations can bring a change in good time).
func watchLive(t *testing.T, c *redisclient.Client, mode model.WatchMode, pattern string) *feed {
	t.Helper()
	o := redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{pattern}},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
	if mode == model.WatchTracking {
		o.Interval = slowPoll
	}
	o.SetFollowEvery(50 * time.Millisecond)
	w := startWatch(t, c, o)
	w.waitPassIn(mode, 0)
	return w
}

// noExtraPass checks that f made no full pass since it had made passes:
// what arrived since came from events.
func (f *feed) noExtraPass(passes int) {
	f.t.Helper()
	if f.passes != passes {
		f.t.Errorf("%d full passes, want %d: the changes should have arrived as events", f.passes, passes)
	}
}

// TestCluster reads a three-master cluster: every test here needs every
// master, and only the last changes the topology, so they share one.
func TestCluster(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0, "--notify-keyspace-events", "K$gxe")
	want := fillCluster(t, rc)
	ctx := context.Background()
	// Auto-detected: the URL names one node and no --cluster.
	c := connectURL(t, redisclient.Options{URL: rc.URL()})

	t.Run("topology", func(t *testing.T) {
		top := topology(t, c)
		if top.Kind != "cluster" || len(top.Masters) != 3 {
			t.Errorf("Topology = %+v, want a cluster of 3 masters", top)
		}
		if got, want := top.String(), "cluster: 3 masters (3 up), 0 replicas"; got != want {
			t.Errorf("Topology().String() = %q, want %q", got, want)
		}
		if got, want := c.Addr(), rc.Nodes[0].Addr+"/0"; got != want {
			t.Errorf("Addr() = %q, want %q", got, want)
		}
	})

	t.Run("--cluster names the seed", func(t *testing.T) {
		c := connectURL(t, redisclient.Options{URL: "redis://" + rc.Nodes[2].Addr, Cluster: true})
		if top := topology(t, c); top.Kind != "cluster" || len(top.Masters) != 3 {
			t.Errorf("Topology = %+v, want a cluster of 3 masters", top)
		}
	})

	t.Run("snapshot finds every key on every master", func(t *testing.T) {
		obs, err := snapshot(ctx, c, []string{"rl:*"}, 10) // small pages: many SCAN calls per master
		if err != nil {
			t.Fatal(err)
		}
		got := make(map[string]string, len(obs))
		for _, o := range obs {
			got[o.Key] = o.Raw
			if o.PTTL <= 0 {
				t.Errorf("%s: PTTL %d, want its TTL", o.Key, o.PTTL)
			}
		}
		if !maps.Equal(got, want) {
			t.Errorf("Snapshot found %d of the %d counters (or wrong values)", len(got), len(want))
		}
	})

	t.Run("scan passes each key once", func(t *testing.T) {
		seen := map[string]int{}
		err := c.Scan(ctx, []string{"rl:*", "rl:1*"}, 0, func(keys []string) error {
			for _, k := range keys {
				seen[k]++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for k, n := range seen {
			if n != 1 {
				t.Errorf("%s passed %d times", k, n)
			}
		}
		if len(seen) != clusterKeys {
			t.Errorf("Scan found %d keys, want %d", len(seen), clusterKeys)
		}
	})

	t.Run("fetch sends one pipeline to each master", func(t *testing.T) {
		keys := make([]string, 0, len(want))
		for k := range want {
			keys = append(keys, k)
		}
		if _, err := c.Fetch(ctx, keys); err != nil { // opens the connections
			t.Fatal(err)
		}
		var mu sync.Mutex
		counters := map[string]*pipelineCounter{}
		cc := c.Universal().(*redis.ClusterClient)
		err := cc.ForEachMaster(ctx, func(_ context.Context, n *redis.Client) error {
			h := &pipelineCounter{}
			n.AddHook(h)
			mu.Lock()
			defer mu.Unlock()
			counters[n.Options().Addr] = h
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		obs, err := c.Fetch(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, o := range obs {
			if o.Key != keys[i] || o.Raw != want[o.Key] {
				t.Fatalf("Fetch read %s = %q, want %s = %q", o.Key, o.Raw, keys[i], want[keys[i]])
			}
		}
		for addr, h := range counters {
			if h.pipelines != 1 || h.singles != 0 {
				t.Errorf("master %s got %d pipelines and %d single commands; want 1 pipeline", addr, h.pipelines, h.singles)
			}
		}
	})

	t.Run("an increment lands on the master of its key", func(t *testing.T) {
		for _, m := range rc.Masters(t) {
			key := m.Do(t, "RANDOMKEY").(string) // a key this master holds
			before, _ := strconv.Atoi(m.Do(t, "GET", key).(string))
			o, err := c.Incr(ctx, key, by(t, "1"), time.Minute)
			if err != nil {
				t.Fatalf("Incr %s (on %s): %v", key, m.Addr, err)
			}
			if got := m.Do(t, "GET", key); o.Raw != strconv.Itoa(before+1) || got != o.Raw {
				t.Errorf("Incr %s from %d: returned %q, master %s holds %v", key, before, o.Raw, m.Addr, got)
			}
			if existed, err := c.Delete(ctx, key); err != nil || !existed || m.Do(t, "EXISTS", key) != int64(0) {
				t.Errorf("Delete %s (on %s): %v", key, m.Addr, err)
			}
			m.Do(t, "SET", key, before, "EX", 600) // as it was, for the other subtests
		}
	})

	t.Run("a repair lands on the master of its key", func(t *testing.T) {
		admin := rc.Client(t)
		for _, key := range keyPerMaster(t, rc, "repair:") {
			if err := admin.Set(ctx, key, "150", 0).Err(); err != nil {
				t.Fatal(err)
			}
			got, _, err := c.Expire(ctx, model.Expiry{Key: key, Window: time.Minute, Shape: model.ShapeCounter})
			if ttl := admin.PTTL(ctx, key).Val(); err != nil || got != model.ExpirySet || ttl <= 0 {
				t.Errorf("Expire %s = %v, %v; its master says TTL %v", key, got, err, ttl)
			}
			admin.Del(ctx, key)
			admin.HSet(ctx, key, "f", "1")
			got, _, err = c.Expire(ctx, model.Expiry{Key: key, Window: time.Minute, Shape: model.ShapeCounter})
			if ttl := admin.PTTL(ctx, key).Val(); err != nil || got != model.ExpiryChanged || ttl != -1 {
				t.Errorf("Expire %s, a hash now = %v, %v; its master says TTL %v", key, got, err, ttl)
			}
			admin.Del(ctx, key)
		}
	})

	t.Run("a burst lands on the master of its key", func(t *testing.T) {
		for _, key := range keyPerMaster(t, rc, "burst:") {
			r, err := c.Burst(ctx, key, by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 200, Clients: 4})
			if err != nil {
				t.Fatalf("Burst %s: %v", key, err)
			}
			checkBurst(t, r, 200, "200")
		}
	})

	t.Run("auto mode needs notifications on every master, and tracks otherwise", func(t *testing.T) {
		masters := rc.Masters(t)
		m := masters[1]
		m.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
		o := watchOptions(model.WatchAuto)
		st := firstState(t, c, o)
		const tracks = "; CLIENT TRACKING needs no server config; re-scan every 30s (a full one every 5m00s), in case an invalidation was lost"
		want := fmt.Sprintf(`tracking: keyspace notifications are off on master %s (notify-keyspace-events="")`, m.Addr) + tracks
		if !watchingIn(st, model.WatchTracking) || st.Note != want {
			t.Errorf("one master without notifications: mode %q, note %q\nwant tracking, %q", st.Mode, st.Note, want)
		}

		for _, m := range masters {
			m.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
		}
		// Every master to fix is named, not only the first.
		st = firstState(t, c, o)
		addrs := []string{masters[0].Addr, masters[1].Addr, masters[2].Addr}
		slices.Sort(addrs)
		names := fmt.Sprintf("masters %s, %s and %s", addrs[0], addrs[1], addrs[2])
		want = fmt.Sprintf(`tracking: keyspace notifications are off on %s (notify-keyspace-events="")`, names) + tracks
		if !watchingIn(st, model.WatchTracking) || st.Note != want {
			t.Errorf("no master with notifications: mode %q, note %q\nwant tracking, %q", st.Mode, st.Note, want)
		}
		o.EnableEvents = true
		st = firstState(t, c, o)
		want = `turned keyspace notifications on at 3 masters (notify-keyspace-events was "", now "K$gxehzl"); re-scan every 30s (a full one every 5m00s), in case an event was lost`
		if !watchingIn(st, model.WatchEvents) || st.Note != want {
			t.Errorf("--enable-events: mode %q, note %q\nwant events, %q", st.Mode, st.Note, want)
		}
		for _, m := range masters {
			if flags := notifyFlags(t, m); missing(flags, "K$gxehzl") {
				t.Errorf("master %s: notify-keyspace-events = %q, want K$gxehzl", m.Addr, flags)
			}
		}
	})

	for _, mode := range pushModes() {
		t.Run(mode.String()+": changes on every master reach the store", func(t *testing.T) {
			admin := rc.Client(t)
			keys := keyPerMaster(t, rc, "ev:")
			for _, k := range keys {
				if err := admin.Set(ctx, k, 1, time.Minute).Err(); err != nil {
					t.Fatal(err)
				}
			}
			w := watchLive(t, c, mode, "ev:*")
			masters := clients(t, rc.Masters(t))
			w.waitMatches("ev:*", masters...)
			for i, k := range keys {
				if err := admin.IncrBy(ctx, k, int64(i+1)).Err(); err != nil {
					t.Fatal(err)
				}
				if err := admin.Set(ctx, k+":new", 1, 0).Err(); err != nil {
					t.Fatal(err)
				}
			}
			if err := admin.Del(ctx, keys[0]).Err(); err != nil {
				t.Fatal(err)
			}
			if err := admin.PExpire(ctx, keys[1]+":new", 50*time.Millisecond).Err(); err != nil {
				t.Fatal(err)
			}
			w.waitGone(keys[0])
			w.waitGone(keys[1] + ":new")
			w.waitMatches("ev:*", masters...)
			w.noExtraPass(1)
		})
	}

	t.Run("the README's ACL users", func(t *testing.T) {
		rules := readmeACL(t)
		for _, n := range rc.Nodes { // every node has its own users
			for _, setuser := range rules.users {
				n.Do(t, setuser...)
			}
			for _, setuser := range rules.cluster {
				n.Do(t, setuser...)
			}
		}
		checkACLUsers(t, rules, rc.URL(), rc.Client(t), keyPerMaster(t, rc, "ratelimit:"))
	})

	t.Run("database other than 0", func(t *testing.T) {
		checkSentence(t, connectErr(t, redisclient.Options{URL: rc.URL() + "/1"}),
			"a Redis Cluster has database 0 only — end --url with /0, not /1", "")
	})

	// Last: it changes the topology.
	t.Run("a master added during a watch is followed", func(t *testing.T) {
		f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
		f.onBatch = func(b model.Batch) {
			if len(b.Removed) > 0 {
				t.Errorf("%q reported removed, but they exist", b.Removed)
			}
		}
		f.waitAll("the first pass", want)
		w := watchEvents(t, c, "rl:*")
		passes := w.passes

		added := rc.AddMaster(t, "rl:7")
		// A key in the slot that moved lives on the new master only.
		added.Do(t, "SET", "rl:new{rl:7}", "1", "EX", "600")
		want := maps.Clone(want)
		want["rl:new{rl:7}"] = "1"
		f.waitAll("the key on the new master", want)
		if got := topology(t, c).String(); got != "cluster: 4 masters (4 up), 0 replicas" {
			t.Errorf("Topology = %q, want 4 masters", got)
		}

		w.waitSubscriptionMoved(nil, added)
		w.waitPassAfter(passes)
		if got := w.state.Topology; got != "cluster: 4 masters (4 up), 0 replicas" {
			t.Errorf("the feed's Topology = %q, want 4 masters", got)
		}
		w.waitValue("rl:new{rl:7}", "1")
		passes = w.passes
		added.Do(t, "INCR", "rl:new{rl:7}")
		w.waitValue("rl:new{rl:7}", "2")
		w.noExtraPass(passes)
		w.waitMatches("rl:*", clients(t, rc.Masters(t))...)
	})
}

// A snapshot reads each master's keys on that master's own connections.
// A key whose slot moved to another master after the walk found it (a
// resharding under way) answers MOVED there: it is read where it lives
// now, with its value, and so are the keys that stayed.
func TestClusterSnapshotReadsAKeyThatMovedAway(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0)
	want := fillCluster(t, rc)
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	from := rc.Nodes[0]
	var found []string // as the walk of from found them
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if n, err := rc.Client(t).MasterForKey(context.Background(), k); err == nil && n.Options().Addr == from.Addr {
			found = append(found, k)
		}
	}
	moved := found[len(found)/2]
	rc.AddMaster(t, moved) // its slot, and it, leave from

	obs, err := c.ReadFoundOn(context.Background(), from.Addr, found)
	if err != nil {
		t.Fatalf("reading the keys found on %s, %s among them, which moved: %v", from.Addr, moved, err)
	}
	got := map[string]string{}
	for _, o := range obs {
		got[o.Key] = o.Raw
	}
	for _, k := range found {
		if got[k] != want[k] {
			t.Errorf("%s read as %q, want %q", k, got[k], want[k])
		}
	}
}

// A master of Redis 7.4+ or Valkey 8 keeps a table per slot, and SCAN's
// cursor names the slot: a snapshot walks such a master whole, its keys in
// many slots, with small pages so that the walk crosses from slot to slot
// many times. Cut in stripes as a single table is, the walk skipped about
// a third of them.
func TestClusterSnapshotWalksAMasterOfManySlots(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 1, 0) // every slot on one master
	ctx := context.Background()
	want := map[string]string{}
	slots := map[int64]bool{}
	var keyslots []*redis.IntCmd
	_, err := rc.Client(t).Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 2000 {
			key := fmt.Sprintf("w:%d", i)
			want[key] = strconv.Itoa(i)
			p.Set(ctx, key, i, 10*time.Minute)
			keyslots = append(keyslots, p.ClusterKeySlot(ctx, key))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range keyslots {
		slots[s.Val()] = true
	}
	if len(slots) < 1000 {
		t.Fatalf("the keys fill %d slots: too few for the walk to cross many", len(slots))
	}
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	if got := snapshotValues(t, c, "w:*", 10); !maps.Equal(got, want) {
		t.Errorf("Snapshot found %d of the %d keys in %d slots (or wrong values)", len(got), len(want), len(slots))
	}
}

// snapshotValues takes a snapshot of the keys pattern matches, SCAN
// asked for count keys at a time, and returns each key's value.
func snapshotValues(t *testing.T, c *redisclient.Client, pattern string, count int64) map[string]string {
	t.Helper()
	obs, err := snapshot(context.Background(), c, []string{pattern}, count)
	if err != nil {
		t.Fatal(err)
	}
	got := make(map[string]string, len(obs))
	for _, o := range obs {
		got[o.Key] = o.Raw
	}
	return got
}

// TestTLSCluster reads, watches and writes a cluster that speaks only TLS,
// between its nodes too, and asks for client certificates, as managed
// clusters with encryption in transit do: countertop dials every node it
// learns of with TLS and the client certificate.
func TestTLSCluster(t *testing.T) {
	t.Parallel()
	rc := redistest.StartTLSCluster(t, 3, 1, "--notify-keyspace-events", "K$gxe")
	want := fillCluster(t, rc)
	ctx := context.Background()
	certs := rc.Nodes[0].TLS
	c := connectURL(t, redisclient.Options{URL: rc.URL(), TLS: redisclient.TLSOptions{CAFile: certs.CA, CertFile: certs.ClientCert, KeyFile: certs.ClientKey}})
	if got, want := topology(t, c).String(), "cluster: 3 masters (3 up), 3 replicas"; got != want {
		t.Errorf("Topology = %q, want %q", got, want)
	}
	if plain, err := redisclient.Connect(ctx, redisclient.Options{URL: "redis://" + rc.Nodes[0].Addr, DialTimeout: time.Second}); err == nil {
		plain.Close()
		t.Fatal("a connection without TLS was accepted: the cluster is not TLS-only")
	}

	if got := snapshotValues(t, c, "rl:*", 100); !maps.Equal(got, want) {
		t.Errorf("Snapshot found %d of the %d counters (or wrong values)", len(got), len(want))
	}

	keys := keyPerMaster(t, rc, "ev:")
	w := watchEvents(t, c, "ev:*")
	if !watchingIn(w.state, model.WatchEvents) {
		t.Fatalf("mode %q, want events: %s", w.state.Mode, w.state.Note)
	}
	for _, k := range keys { // a write on each master, through countertop
		if o, err := c.Incr(ctx, k, by(t, "1"), time.Minute); err != nil || o.Raw != "1" {
			t.Fatalf("Incr %s: %v, %v", k, o, err)
		}
	}
	w.waitMatches("ev:*", clients(t, rc.Masters(t))...)
	w.noExtraPass(1)
}

// TestClusterFailoverDuringWatch promotes a replica with CLUSTER FAILOVER
// while countertop polls and while it follows events: neither view loses a
// key, and events come from the promoted master.
func TestClusterFailoverDuringWatch(t *testing.T) {
	t.Parallel()
	// Every node has notifications on: a replica may become a master.
	rc := redistest.StartCluster(t, 3, 1, "--notify-keyspace-events", "K$gxe")
	want := fillCluster(t, rc)
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	const shape = "cluster: 3 masters (3 up), 3 replicas"
	if got := topology(t, c).String(); got != shape {
		t.Errorf("Topology = %q", got)
	}
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
	deleted := map[string]bool{}
	// No key that exists may ever be reported gone, failover or not.
	f.onBatch = func(b model.Batch) {
		for _, k := range b.Removed {
			if !deleted[k] {
				t.Errorf("%s was reported removed, but it exists", k)
			}
		}
	}
	f.waitAll("the first pass", want)
	w := watchEvents(t, c, "rl:*")
	if w.state.Topology != shape {
		t.Errorf("the feed's Topology = %q, want %q", w.state.Topology, shape)
	}
	tw := watchLive(t, c, model.WatchTracking, "rl:*")

	passes, tpasses := w.passes, tw.passes
	old := rc.Masters(t)[0]
	promoted := rc.Failover(t, old)
	// The old master lives on as a replica: only asking which nodes are
	// masters can tell that the subscription must move.
	w.waitSubscriptionMoved(old, promoted)
	w.waitPassAfter(passes)
	tw.waitTrackingMoved(old, promoted)
	tw.waitPassIn(model.WatchTracking, tpasses)
	admin := rc.Client(t)
	ctx := context.Background()
	for i := range 10 {
		key := fmt.Sprintf("rl:%d", i)
		deleted[key] = true
		delete(want, key)
		if err := admin.Del(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
		key = fmt.Sprintf("rl:new:%d", i)
		want[key] = "1"
		if err := admin.Set(ctx, key, 1, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	f.waitAll("the view after the failover", want)

	passes, tpasses = w.passes, tw.passes
	key := promoted.Do(t, "RANDOMKEY").(string) // one the promoted master serves
	promoted.Do(t, "SET", key, "77", "EX", "600")
	w.waitValue(key, "77")
	w.waitMatches("rl:*", clients(t, rc.Masters(t))...)
	w.noExtraPass(passes)
	tw.waitValue(key, "77")
	tw.waitMatches("rl:*", clients(t, rc.Masters(t))...)
	tw.noExtraPass(tpasses)
	if !watchingIn(tw.state, model.WatchTracking) || tw.state.LastError != "" {
		t.Errorf("the tracking feed's state after the failover: %+v", tw.state)
	}
	if w.state.Topology != shape || !watchingIn(w.state, model.WatchEvents) || w.state.LastError != "" {
		t.Errorf("the feed's state after the failover: %+v", w.state)
	}

	top := topology(t, c)
	masters := map[string]bool{}
	for _, m := range top.Masters {
		masters[m.Addr] = true
	}
	if !masters[promoted.Addr] || masters[old.Addr] || top.String() != shape {
		t.Errorf("after %s took over from %s: Topology = %+v", promoted.Addr, old.Addr, top)
	}
}

// waitAll waits until the store holds exactly the keys of want, each with
// its stored string.
func (f *feed) waitAll(what string, want map[string]string) {
	f.t.Helper()
	f.until(what, func() string {
		if f.store.Len() != len(want) {
			return fmt.Sprintf("%d keys held, want %d", f.store.Len(), len(want))
		}
		for k, v := range want {
			if c, ok := f.store.Get(k); !ok || c.Raw != v {
				return fmt.Sprintf("%q holds %q, want %q", k, c.Raw, v)
			}
		}
		return ""
	})
}
