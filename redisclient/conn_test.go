package redisclient_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

// TestConnectCancelled cancels Connect while the server it dialled says
// nothing: Connect returns at once, as an interruption, not after its
// timeout, whatever the kind of deployment it was waiting on.
func TestConnectCancelled(t *testing.T) {
	t.Parallel()
	addr := redistest.Silent(t)
	for _, tc := range []struct {
		name string
		o    redisclient.Options
	}{
		{"standalone", redisclient.Options{URL: "redis://" + addr + "/0"}},
		{"cluster", redisclient.Options{URL: "redis://" + addr, Cluster: true}},
		{"sentinel", redisclient.Options{URL: "redis://ignored:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{addr}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			c, err := redisclient.Connect(ctx, tc.o)
			if err == nil {
				c.Close()
				t.Fatal("Connect to a server that never answers succeeded")
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want one that says the caller cancelled", err)
			}
			// The default timeout is 5s for the dial and 5s more for PING.
			if took := time.Since(start); took > time.Second {
				t.Errorf("Connect returned %v after it started, though cancelled after 100ms", took)
			}
		})
	}
}

func TestConnectDetectsTheKindOfServer(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	if got := topology(t, connect(t, s)).String(); got != "standalone" {
		t.Errorf("a single server: Topology = %q, want standalone", got)
	}
	checkSentence(t, connectErr(t, redisclient.Options{URL: s.URL(), Cluster: true}),
		s.Addr+" is not a Redis Cluster node (cluster support is disabled there) — drop --cluster", "")

	// The demo's server answers CLUSTER SLOTS as if it were a one-node
	// cluster, and has no INFO cluster.
	m := miniredis.RunT(t)
	m.Set("rl:1", "5")
	c := connectURL(t, redisclient.Options{URL: "redis://" + m.Addr()})
	if got := topology(t, c).String(); got != "standalone" {
		t.Errorf("miniredis: Topology = %q, want standalone", got)
	}
	if obs, err := snapshot(context.Background(), c, []string{"rl:*"}, 0); err != nil || len(obs) != 1 {
		t.Errorf("miniredis: Snapshot = %v, %v; want rl:1", obs, err)
	}
}
