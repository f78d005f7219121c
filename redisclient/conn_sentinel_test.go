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

// TestSentinelFailoverDuringWatch fails over while countertop polls and
// while it follows events: both follow the new master, and the events come
// from it, although the old master lives on as a replica.
func TestSentinelFailoverDuringWatch(t *testing.T) {
	t.Parallel()
	args := []string{"--requirepass", "pw", "--notify-keyspace-events", "K$gxe"}
	master := redistest.Start(t, args...)
	replica := redistest.Start(t, args...)
	s := redistest.StartSentinel(t, master, replica)
	master.Do(t, "SET", "rl:1", "1", "EX", "600")

	err := connectErr(t, redisclient.Options{URL: strings.Replace(s.URL(), "://", "://:wrong-pw@", 1)})
	checkSentence(t, err, "master mymaster rejected the username or password", "wrong-pw")
	c := connectURL(t, redisclient.Options{URL: s.URL(), Password: "pw"})
	if got, want := c.Addr(), s.Addr+"/0"; got != want {
		t.Errorf("Addr() = %q, want %q", got, want)
	}
	want := fmt.Sprintf("sentinel mymaster: master %s, 1 replica", master.Addr)
	if got := topology(t, c).String(); got != want {
		t.Errorf("Topology = %q, want %q", got, want)
	}
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond})
	f.waitValue("rl:1", "1")
	w := watchEvents(t, c, "rl:*")
	if w.state.Topology != want {
		t.Errorf("the feed's Topology = %q, want %q", w.state.Topology, want)
	}
	tw := watchLive(t, c, model.WatchTracking, "rl:*")
	passes, tpasses := w.passes, tw.passes

	if got := s.Failover(t); got != replica {
		t.Fatalf("the Sentinel promoted %s, want %s", got.Addr, replica.Addr)
	}
	w.waitSubscriptionMoved(master, replica)
	w.waitPassAfter(passes)
	tw.waitTrackingMoved(master, replica)
	tw.waitPassIn(model.WatchTracking, tpasses)
	want = fmt.Sprintf("sentinel mymaster: master %s, 1 replica", replica.Addr)
	if w.state.Topology != want {
		t.Errorf("after the failover, the feed's Topology = %q, want %q", w.state.Topology, want)
	}
	passes, tpasses = w.passes, tw.passes
	replica.Do(t, "SET", "rl:3", "3", "EX", "600")
	w.waitValue("rl:3", "3")
	w.noExtraPass(passes)
	tw.waitValue("rl:3", "3")
	tw.noExtraPass(tpasses)

	// The old master is gone for good: only the new one can answer.
	master.Stop()
	replica.Do(t, "SET", "rl:2", "2", "EX", "600")
	f.waitValue("rl:2", "2")
	o, err := c.Incr(context.Background(), "rl:1", by(t, "1"), time.Minute)
	if err != nil || o.Raw != "2" {
		t.Fatalf("Incr after the failover = %q, %v; want 2", o.Raw, err)
	}
	f.waitValue("rl:1", "2")
	w.waitValue("rl:1", "2")
	w.waitMatches("rl:*", replica.Client(t))
	want = fmt.Sprintf("sentinel mymaster: master %s, 1 replica (0 up)", replica.Addr)
	waitTopology(t, c, want)
}

// waitTopology waits until c's topology reads want: Sentinel takes a
// moment to see a server go down.
func waitTopology(t *testing.T, c *redisclient.Client, want string) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := topology(t, c).String()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Topology = %q, want %q", got, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestSentinelOptions(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	s := redistest.StartSentinel(t, master)
	refused := redistest.Start(t)
	refused.Stop()

	for _, tc := range []struct {
		name string
		o    redisclient.Options
	}{
		// The flags need no Sentinel URL; the URL's host is not used.
		{"flags without a Sentinel URL", redisclient.Options{URL: "redis://ignored:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{s.Addr}}},
		{"flags beat the URL's Sentinels and name", redisclient.Options{URL: "redis+sentinel://" + refused.Addr + "/0?master_name=other", SentinelMaster: "mymaster", SentinelAddrs: []string{s.Addr}}},
		{"Sentinels tried in turn", redisclient.Options{URL: "redis+sentinel://" + refused.Addr + "," + s.Addr + "/0?master_name=mymaster"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := connectURL(t, tc.o)
			if top := topology(t, c); top.Kind != "sentinel" || top.Masters[0].Addr != master.Addr {
				t.Errorf("Connect(%+v): Topology = %+v, want master %s", tc.o, top, master.Addr)
			}
		})
	}

	for _, tc := range []struct {
		name string
		o    redisclient.Options
		want string
	}{
		{"unknown master", redisclient.Options{URL: "redis+sentinel://" + s.Addr + "/0?master_name=nope"},
			fmt.Sprintf("no Sentinel at %s knows a master named %q — check --sentinel-master", s.Addr, "nope")},
		{"no master name", redisclient.Options{URL: "redis+sentinel://" + s.Addr + "/0"},
			"Sentinel needs the name of the master to follow: pass --sentinel-master NAME, or add ?master_name=NAME"},
		{"no Sentinel", redisclient.Options{URL: "redis://127.0.0.1:1/0", SentinelMaster: "mymaster"},
			"Sentinel needs the address of a Sentinel: pass --sentinel HOST:PORT"},
		{"bad Sentinel address", redisclient.Options{URL: "redis://127.0.0.1:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{"host:port"}},
			`"host:port" is not a Sentinel address: write it as host:port`},
		{"no Sentinel answers", redisclient.Options{URL: "redis+sentinel://" + refused.Addr + "/0?master_name=mymaster"},
			"no Sentinel answers at " + refused.Addr + " (connection refused) — check --sentinel, or the hosts of a redis+sentinel:// URL"},
		{"no Sentinel answers the flags", redisclient.Options{URL: "redis://ignored:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{refused.Addr}},
			"no Sentinel answers at " + refused.Addr + " (connection refused) — check --sentinel"},
		{"Sentinel and --cluster", redisclient.Options{URL: s.URL(), Cluster: true},
			"--cluster and Sentinel do not go together"},
		{"a server's port as a Sentinel", redisclient.Options{URL: "redis://ignored:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{master.Addr}},
			master.Addr + " is not a Sentinel (it does not know the SENTINEL command) — give the Sentinels' addresses (--sentinel, or the hosts of a redis+sentinel:// URL), not a Redis server's"},
		{"a server's port among the Sentinels", redisclient.Options{URL: "redis+sentinel://" + refused.Addr + "," + master.Addr + "/0?master_name=mymaster"},
			master.Addr + " is not a Sentinel (it does not know the SENTINEL command)"},
		{"a Sentinel's port as a server", redisclient.Options{URL: "redis://" + s.Addr},
			s.Addr + " is a Redis Sentinel, which holds no keys — connect through it with redis+sentinel://" + s.Addr + "/0?master_name=NAME"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSentence(t, connectErr(t, tc.o), tc.want, "")
		})
	}
}

// TestSentinelWithPassword follows a master through Sentinels that ask for
// a password of their own, as secured setups run them: the master's
// password does not open them, and each mistake is one sentence that says
// which setting to fix.
func TestSentinelWithPassword(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--requirepass", "master-pw", "--notify-keyspace-events", "K$gxe")
	s := redistest.StartSentinelWithPassword(t, "sentinel-pw", master)
	master.Do(t, "SET", "rl:1", "1", "EX", "600")

	checkSentence(t, connectErr(t, redisclient.Options{URL: s.URL(), Password: "master-pw"}),
		"the Sentinel at "+s.Addr+" requires a password — give it in REDIS_SENTINEL_PASSWORD (or sentinel_password in the config file)", "master-pw")
	checkSentence(t, connectErr(t, redisclient.Options{URL: s.URL(), Password: "master-pw", SentinelAuth: redisclient.Auth{Password: "wrong-pw"}}),
		"the Sentinel at "+s.Addr+" rejected the username or password — check REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD", "wrong-pw")

	c := connectURL(t, redisclient.Options{URL: s.URL(), Password: "master-pw", SentinelAuth: redisclient.Auth{Password: "sentinel-pw"}})
	if got, want := topology(t, c).String(), fmt.Sprintf("sentinel mymaster: master %s, 0 replicas", master.Addr); got != want {
		t.Errorf("Topology = %q, want %q", got, want)
	}
	obs, err := snapshot(context.Background(), c, []string{"rl:*"}, 0)
	if err != nil || len(obs) == 0 || obs[0].Key != "rl:1" || obs[0].Raw != "1" {
		t.Errorf("Snapshot = %v, %v; want rl:1 = 1", obs, err)
	}
	w := watchEvents(t, c, "rl:*") // subscribes on the master the Sentinel names
	master.Do(t, "SET", "rl:2", "2", "EX", "600")
	w.waitValue("rl:2", "2")
}
