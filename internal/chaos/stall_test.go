//go:build chaos

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// TestDebugSleep: a server that stops answering is named silent within
// three intervals in every mode, subscriptions included (events and
// tracking read nothing while nothing changes), is reported as stalled
// once its reads time out (a pipeline's two read timeouts), and once it
// answers the view catches up.
func TestDebugSleep(t *testing.T) {
	interval := watchOptions(model.WatchPoll).Interval
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			waitUntil(t, "the feed to measure its health", v.answering, v.feedState)
			slept := make(chan error, 1)
			c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
			defer c.Close()
			if err := c.Ping(context.Background()).Err(); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			go func() { slept <- c.Do(context.Background(), "DEBUG", "SLEEP", "9").Err() }()
			waitUntil(t, "the silence to show", func() bool { _, ok := v.silentSince(start); return ok }, v.feedState)
			if h, _ := v.silentSince(start); h.At.Sub(start) > 3*interval || h.Silent != srv.Addr {
				t.Errorf("%s was named silent %v after the sleep began; want itself, within three intervals (%v)", h.Silent, h.At.Sub(start), 3*interval)
			}
			waitUntil(t, "the feed to report the stall", func() bool { return v.sawState(unhealthy) }, v.feedState)
			if err := <-slept; err != nil {
				t.Fatal(err)
			}
			churn(t, rdb, "woke")
			v.converge(rdb, "after DEBUG SLEEP")
			waitUntil(t, "the feed to be healthy again", func() bool { return !unhealthy(v.feedState()) && v.answering() }, v.feedState)
		})
	}
}

// TestClusterMasterFrozen: one master of a cluster that stops answering
// (SIGSTOP, its connections open) is named within three intervals, in
// polling and in events mode, while the others answer; and no longer once
// it is thawed.
func TestClusterMasterFrozen(t *testing.T) {
	interval := watchOptions(model.WatchPoll).Interval
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			// No failover while it is frozen: the test is about a hang.
			c := redistest.StartCluster(t, 3, 0, "--notify-keyspace-events", "KEA", "--cluster-node-timeout", "60000")
			rdb := c.Client(t)
			seed(t, rdb, "f", 60)
			v := startView(t, c.URL(), true, watchOptions(mode))
			v.converge(rdb, "at start")
			waitUntil(t, "the feed to measure its health", v.answering, v.feedState)
			victim := c.Masters(t)[1]
			start := time.Now()
			victim.Freeze(t)
			waitUntil(t, "the silence to show", func() bool { _, ok := v.silentSince(start); return ok }, v.feedState)
			if h, _ := v.silentSince(start); h.At.Sub(start) > 3*interval || h.Silent != victim.Addr {
				t.Errorf("%s was named silent %v after %s froze; want it, within three intervals (%v)", h.Silent, h.At.Sub(start), victim.Addr, 3*interval)
			}
			victim.Thaw(t)
			waitUntil(t, "every master to answer again", v.answering, v.feedState)
			v.converge(rdb, "after the thaw")
		})
	}
}
