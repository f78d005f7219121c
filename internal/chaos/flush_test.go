package chaos

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
)

// TestFlushAll: FLUSHALL, which sends no event per key, leaves no stale
// row once a pass has run, in any mode.
func TestFlushAll(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			_, v, rdb := standalone(t, mode, 50)
			if err := rdb.FlushAll(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			v.converge(rdb, "after FLUSHALL")
			churn(t, rdb, "flushed")
			v.converge(rdb, "after writes once flushed")
		})
	}
}

// TestSwapDB: SWAPDB puts another database's keys under the watched one;
// the view shows those and none of the ones swapped out, in any mode.
func TestSwapDB(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			db1 := redis.NewClient(&redis.Options{Addr: srv.Addr, DB: 1})
			defer db1.Close()
			seed(t, db1, "z", 60)           // more keys than database 0: DBSIZE does not fall
			set(t, db1, "rl:a1", "swapped") // a key in both, with another value
			if err := rdb.Do(context.Background(), "SWAPDB", 0, 1).Err(); err != nil {
				t.Fatal(err)
			}
			v.converge(rdb, "after SWAPDB")
			churn(t, rdb, "swapped")
			v.converge(rdb, "after writes once swapped")
		})
	}
}
