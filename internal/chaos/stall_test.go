//go:build chaos

package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// TestDebugSleep: a server that stops answering for longer than a read may
// take (a pipeline's two read timeouts) is reported as stalled, and once it answers the view catches up.
func TestDebugSleep(t *testing.T) {
	for _, mode := range []string{"events", "poll"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			slept := make(chan error, 1)
			go func() {
				c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
				defer c.Close()
				slept <- c.Do(context.Background(), "DEBUG", "SLEEP", "9").Err()
			}()
			waitUntil(t, "the feed to report the stall", func() bool { return v.sawState(unhealthy) })
			if err := <-slept; err != nil {
				t.Fatal(err)
			}
			churn(t, rdb, "woke")
			v.converge(rdb, "after DEBUG SLEEP")
			waitUntil(t, "the feed to be healthy again", func() bool { return !unhealthy(v.feedState()) })
		})
	}
}
