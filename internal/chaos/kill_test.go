package chaos

import (
	"context"
	"testing"

	"github.com/countertop/countertop/model"
)

// TestClientKill: killing countertop's connections, the ones that read and
// the subscriptions, loses nothing: the view catches up with what changed
// meanwhile, and events mode is live again.
func TestClientKill(t *testing.T) {
	for _, typ := range []string{"normal", "pubsub"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			_, v, rdb := standalone(t, model.WatchEvents, 50)
			for round := range 3 {
				if err := rdb.Do(context.Background(), "CLIENT", "KILL", "TYPE", typ).Err(); err != nil {
					t.Fatal(err)
				}
				churn(t, rdb, typ+string(rune('0'+round)))
				v.converge(rdb, "after CLIENT KILL TYPE "+typ)
			}
			waitUntil(t, "the feed to be live on events again", func() bool {
				s := v.feedState()
				return watchingIn(s, model.WatchEvents) && s.LastError == ""
			})
			// Live again means followed by events, not only by the resync:
			// a change shows long before the next full pass would matter.
			set(t, rdb, "rl:a1", "424242")
			v.converge(rdb, "after a write once live again")
		})
	}
}

// TestNotificationsOffAndOn: with notifications turned off under a live
// events feed, the view keeps up through client tracking, which needs no
// server config, and says why; turned on again, the view still keeps up.
func TestNotificationsOffAndOn(t *testing.T) {
	srv, v, rdb := standalone(t, model.WatchEvents, 50)
	srv.Do(t, "CONFIG", "SET", "notify-keyspace-events", "")
	waitUntil(t, "the feed to say it tracks because notifications are off", func() bool {
		s := v.feedState()
		return watchingIn(s, model.WatchTracking) && s.Note != ""
	}, v.feedState)
	churn(t, rdb, "off")
	v.converge(rdb, "with notifications off")
	srv.Do(t, "CONFIG", "SET", "notify-keyspace-events", "KEA")
	churn(t, rdb, "on")
	v.converge(rdb, "with notifications on again")
}
