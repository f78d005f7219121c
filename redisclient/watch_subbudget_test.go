package redisclient

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
)

// commandCalls returns how many times s ran each of names, in all.
func commandCalls(t *testing.T, s *redistest.Server, names ...string) int64 {
	t.Helper()
	calls := s.CommandCalls(t)
	var n int64
	for _, name := range names {
		n += calls[name]
	}
	return n
}

// The subscription's own commands count in the server's budget, as every
// command countertop sends on its own does: its AUTH, CLIENT SETNAME, its SUBSCRIBE or
// PSUBSCRIBE, CLIENT ID in tracking mode, each ping, and the INFO that
// notes the server's output buffer closes; so the header's cost and the
// bound hold for them too.
func TestSubscriptionCommandsCountInTheBudget(t *testing.T) {
	for _, kind := range pushKinds {
		t.Run(kind.mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "KEA")
			s.Do(t, "ACL", "SETUSER", "watcher", "on", ">pw", "~*", "&*", "+@all")
			ctx := context.Background()
			c, err := Connect(ctx, Options{URL: s.URL(), Username: "watcher", Password: "pw", MaxCommands: 1000})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			r := c.newReader(PollOptions{Patterns: []string{"rl:*"}}.withDefaults(), nil)
			o := WatchOptions{PollOptions: r.o}.withDefaults()
			w := kind.watcher(r, o)
			server := c.budget.server("")
			names := []string{"auth", "client|setname", "psubscribe", "subscribe", "client|id", "info", "ping"}
			sentBefore, ranBefore := server.sent.Load(), commandCalls(t, s, names...)

			node := c.rdb.(*redis.Client)
			var conn *subConn
			switch m := w.push.(type) {
			case *tracking:
				// The subscription's part of tracking.open: the tracking
				// connection is go-redis's, whose hook counts its commands.
				conn, err = dialSub(ctx, node.Options(), c.name, server)
				if err == nil {
					_, err = conn.do(ctx, "CLIENT", "ID")
				}
				if err == nil {
					err = conn.subscribe(ctx, "SUBSCRIBE", invalidations)
				}
			default:
				var sub *subscription
				if sub, err = m.open(ctx, node); err == nil {
					conn = sub.conn
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(conn.close)
			go conn.drain(w, new(atomic.Uint64))
			if sent, err := conn.ping(time.Now()); !sent || err != nil {
				t.Fatalf("ping sent %v, %v", sent, err)
			}
			// The pong is read by the drain; the command has run once Redis
			// counts it.
			deadline := time.Now().Add(10 * time.Second)
			for {
				ran := commandCalls(t, s, names...) - ranBefore - 1 // the INFO commandstats above
				sent := server.sent.Load() - sentBefore
				if ran == sent && ran >= 4 {
					t.Logf("%d commands sent, %d counted", ran, sent)
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Redis ran %d of the subscription's commands (%q), the budget counted %d", ran, names, sent)
				}
				ranBefore++ // commandCalls's own INFO
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
