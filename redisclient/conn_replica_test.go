package redisclient_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// A single server that replicates another is called a replica of its
// master, in the topology and in the header the feed fills; it says when
// its link to the master is down, and a promotion makes it standalone.
func TestAReplicaIsCalledAReplica(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--repl-diskless-sync-delay", "0")
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", fmt.Sprint(master.Port))
	c := connect(t, replica)
	of := "replica of " + master.Addr
	if got := topology(t, c).String(); got != of && got != of+", link down" {
		t.Errorf("a replica: Topology = %q, want %q", got, of)
	}
	if got := topology(t, connect(t, master)).String(); got != "standalone" {
		t.Errorf("its master: Topology = %q, want standalone", got)
	}

	f := startWatch(t, c, redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 50 * time.Millisecond},
		Mode:        model.WatchPoll,
	})
	f.waitFor("the header to name the replica's master", func() bool { return f.state.Topology == of })
	master.Stop()
	f.waitFor("the header to say the link is down", func() bool { return f.state.Topology == of+", link down" })
	replica.Do(t, "REPLICAOF", "NO", "ONE")
	f.waitFor("the header to call the promoted replica standalone", func() bool { return f.state.Topology == "standalone" })
}
