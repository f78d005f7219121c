package chaos

import (
	"context"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// TestBurstConnectionsKilled: `incr --count` whose connections are killed
// mid-burst counts nothing twice, and reports every increment whose fate is
// unknown: Redis holds what was sent plus at most one uncertain increment
// per connection, and the burst says there were such.
func TestBurstConnectionsKilled(t *testing.T) {
	srv, v, rdb := standalone(t, model.WatchEvents, 10)
	ctx := context.Background()
	writer := connect(t, srv.URL(), false)
	one, err := model.ParseAmount("1")
	if err != nil {
		t.Fatal(err)
	}
	const key, clients = "rl:burst", 4
	interrupted := 0
	for round := 0; round < 5 && interrupted < 2; round++ {
		before, _ := rdb.Get(ctx, key).Int64()
		type result struct {
			r   redisclient.BurstResult
			err error
		}
		done := make(chan result, 1)
		bctx, cancel := context.WithCancel(ctx)
		go func() {
			r, err := writer.Burst(bctx, key, one, 0, redisclient.BurstOptions{Count: 1_000_000, Clients: clients})
			done <- result{r, err}
		}()
		waitUntil(t, "the burst to be under way", func() bool {
			n, _ := rdb.Get(ctx, key).Int64()
			return n >= before+200
		})
		if err := rdb.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Err(); err != nil {
			t.Fatal(err)
		}
		// A burst whose connections all came back (go-redis redials one it
		// finds closed before use) goes on: stop it once that is clear.
		killed, _ := rdb.Get(ctx, key).Int64()
		var res result
		waitUntil(t, "the burst to stop or go on", func() bool {
			select {
			case res = <-done:
				return true
			default:
			}
			n, _ := rdb.Get(ctx, key).Int64()
			if n >= killed+1000 {
				cancel()
				res = <-done
				return true
			}
			return false
		})
		cancel()
		after, err := rdb.Get(ctx, key).Int64()
		if err != nil {
			t.Fatal(err)
		}
		landed := after - before
		sent := int64(res.r.Sent)
		if res.err == nil || errors.Is(res.err, context.Canceled) {
			if landed != sent {
				t.Fatalf("round %d: a burst that reported no error sent %d increments and Redis counted %d", round, sent, landed)
			}
			continue
		}
		interrupted++
		if !strings.Contains(res.err.Error(), "may have counted or not") {
			t.Fatalf("round %d: the burst stopped without saying its last increments are uncertain: %v", round, res.err)
		}
		if landed < sent || landed > sent+clients {
			t.Fatalf("round %d: %d increments were carried out and Redis counted %d: only %d may be uncertain (%v)", round, sent, landed, clients, res.err)
		}
		if res.r.Observed != nil && res.r.Observed.Cmp(big.NewRat(landed, 1)) != 0 {
			t.Fatalf("round %d: the burst observed %s, Redis went from %d to %d", round, res.r.Observed.RatString(), before, after)
		}
		if got := res.r.After.Raw; got != "" && got != strconv.FormatInt(after, 10) {
			t.Fatalf("round %d: the burst read the key as %s afterwards, Redis holds %d", round, got, after)
		}
	}
	if interrupted == 0 {
		t.Fatal("CLIENT KILL never interrupted a burst: the scenario tested nothing")
	}
	v.converge(rdb, "after bursts whose connections were killed")
}
