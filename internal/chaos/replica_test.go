package chaos

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// TestReplica: pointed at a read-only replica holding 3,002 stuck counters,
// the header calls it a replica of its master, and repair --yes stops at
// the first key the replica refuses, in one line that says why and how many
// keys it did not touch, instead of one READONLY line a key.
func TestReplica(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, append(serverArgs, "--repl-diskless-sync-delay", "0")...) // the replica syncs at once
	const n = 3002
	ctx := context.Background()
	mrdb := master.Client(t)
	pipe := mrdb.Pipeline()
	for i := range n {
		pipe.Set(ctx, fmt.Sprintf("rl:stuck:%d", i), 150, 0)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	replica := redistest.Start(t, append(serverArgs, "--replicaof", "127.0.0.1", fmt.Sprint(master.Port))...)
	rdb := replica.Client(t)
	waitUntil(t, "the replica to hold the master's keys", func() bool { return rdb.DBSize(ctx).Val() == n })

	v := startView(t, replica.URL(), false, watchOptions(model.WatchEvents))
	v.converge(rdb, "on the replica")
	waitUntil(t, "the header to call the server a replica of its master", func() bool {
		return v.feedState().Topology == "replica of "+master.Addr
	}, v.feedState)

	code, out, errOut := runCLI(t, "repair", "--yes", "--url", replica.URL(), "--pattern", pattern)
	if code != 1 {
		t.Errorf("repair on a replica exited %d, want 1 (nothing could be repaired)", code)
	}
	if lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n"); len(lines) != 1 ||
		!strings.Contains(errOut, replica.Addr+" is a read-only replica — connect to its master to change keys") ||
		!strings.HasSuffix(errOut, fmt.Sprintf("; stopped there, as every key would be refused alike: %d more keys not touched\n", n-1)) {
		t.Errorf("repair on a replica wrote %d lines to stderr, want one that says why it stopped and what it left:\n%.2000s", len(lines), errOut)
	}
	if want := fmt.Sprintf("repaired 0 of %d; 1 failed, %d not touched\n", n, n-1); !strings.HasSuffix(out, want) {
		t.Errorf("repair's summary:\n%s\nwant it to end with %q", out, want)
	}
	v.converge(rdb, "after the refused repair") // nothing changed
}
