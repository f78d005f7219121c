//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// TestClusterMasterKilled: a cluster master killed (no CLUSTER FAILOVER)
// and its replica promoted: the view keeps every key the replica had, and
// follows writes on the new master.
func TestClusterMasterKilled(t *testing.T) {
	c := redistest.StartCluster(t, 3, 1, "--notify-keyspace-events", "KEA")
	rdb := c.Client(t)
	ctx := context.Background()
	seed(t, rdb, "c", 60)
	// Every write reaches the replicas before the kill, so that the
	// promoted replica holds what the view showed.
	for _, m := range c.Masters(t) {
		m.Do(t, "WAIT", 1, 5000)
	}
	v := startView(t, c.URL(), true, watchOptions(model.WatchEvents))
	v.converge(rdb, "at start")

	victim := c.Masters(t)[0]
	promoted := c.Kill(t, victim)
	rdb.ReloadState(ctx)
	v.converge(rdb, "after "+victim.Addr+" was killed and "+promoted.Addr+" promoted")
	for i := range 30 {
		set(t, rdb, fmt.Sprintf("rl:c:after:%d", i), i)
	}
	churn(t, rdb, "failover")
	v.converge(rdb, "after writes once the replica was promoted")
}
