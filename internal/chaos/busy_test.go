package chaos

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
)

// unhealthy is a feed state that tells the user something is wrong.
func unhealthy(s model.FeedState) bool {
	return s.LastError != "" || !s.Connected || s.Phase == model.FeedReconnecting
}

// TestBusyScript: a script that hangs Redis (BUSY to everyone else) is
// reported, and once SCRIPT KILL ends it the view catches up.
func TestBusyScript(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchPoll} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv, v, rdb := standalone(t, mode, 50)
			ran := make(chan error, 1)
			go func() {
				c := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: time.Minute})
				defer c.Close()
				ran <- c.Eval(context.Background(), "while true do end", nil).Err()
			}()
			waitUntil(t, "the feed to report the busy server", func() bool { return v.sawState(unhealthy) })
			waitUntil(t, "SCRIPT KILL to end the script", func() bool {
				return rdb.Do(context.Background(), "SCRIPT", "KILL").Err() == nil
			})
			if err := <-ran; err == nil {
				t.Fatal("the endless script returned without an error")
			}
			churn(t, rdb, "killed")
			v.converge(rdb, "after SCRIPT KILL")
			waitUntil(t, "the feed to be healthy again", func() bool { return !unhealthy(v.feedState()) })
		})
	}
}
