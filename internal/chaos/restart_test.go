package chaos

import (
	"context"
	"testing"

	"github.com/countertop/countertop/model"
)

// TestRestartWithoutData: a restart that loses everything (no persistence)
// leaves no row for any key, and keys written afterwards show up.
func TestRestartWithoutData(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			srv.Restart(t)
			v.converge(rdb, "after a restart that lost every key")
			if n := len(v.rows()); n != 0 {
				t.Fatalf("the view shows %d rows of a Redis that holds none", n)
			}
			churn(t, rdb, "after")
			v.converge(rdb, "after writes to the restarted server")
		})
	}
}

// TestRestartWithData: a restart that loads an older snapshot brings back
// the keys deleted since and drops the ones written since; the view shows
// what came back and nothing else.
func TestRestartWithData(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			if err := rdb.Save(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			churn(t, rdb, "lost") // after the snapshot: undone by the restart
			v.converge(rdb, "before the restart")
			srv.Restart(t)
			if got, _ := rdb.Exists(context.Background(), "rl:a3").Result(); got != 1 {
				t.Fatal("the restarted server did not load its snapshot")
			}
			v.converge(rdb, "after a restart that went back to a snapshot")
			churn(t, rdb, "after")
			v.converge(rdb, "after writes to the restarted server")
		})
	}
}
