package chaos

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// TestRepairRace: repairing stuck counters while another client turns some
// into hashes and deletes others gives a TTL to counters only, never to a
// hash, and the tally accounts for every key, as the summary reports it.
func TestRepairRace(t *testing.T) {
	srv, v, rdb := standalone(t, model.WatchEvents, 0)
	ctx := context.Background()
	const n = 2000
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("rl:stuck:%d", i)
		set(t, rdb, keys[i], i)
	}
	v.converge(rdb, "with the stuck counters written")

	repairer := connect(t, srv.URL(), false)
	var tally model.RepairTally
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Backwards, while the other client goes forwards: they cross, so
		// that some keys change before their repair and some after.
		for _, k := range slices.Backward(keys) {
			out, _, err := repairer.Expire(ctx, model.Expiry{Key: k, Window: time.Hour, Shape: model.ShapeCounter})
			if err != nil {
				t.Errorf("repair %s: %v", k, err)
			}
			tally.Add(out)
		}
	}()
	other := srv.Client(t)
	go func() {
		defer wg.Done()
		for i, k := range keys {
			var err error
			switch i % 4 {
			case 0, 2: // turned into a hash, in two steps as an application would
				if err = other.Del(ctx, k).Err(); err == nil {
					err = other.HSet(ctx, k, "tokens", i).Err()
				}
			case 1:
				err = other.Del(ctx, k).Err()
			}
			if err != nil {
				t.Errorf("change %s: %v", k, err)
			}
		}
	}()
	wg.Wait()

	withTTL := 0
	for i, k := range keys {
		typ, _ := rdb.Type(ctx, k).Result()
		pttl, _ := rdb.PTTL(ctx, k).Result()
		switch i % 4 {
		case 0, 2:
			if typ != "hash" || pttl != -1 {
				t.Errorf("%s: a hash the repair raced with is %s with PTTL %v: a hash must get no TTL", k, typ, pttl)
			}
		case 1:
			if typ != "none" {
				t.Errorf("%s was deleted and is %s", k, typ)
			}
		case 3:
			if typ != "string" || pttl <= 0 {
				t.Errorf("%s: a stuck counter nobody touched is %s with PTTL %v after its repair", k, typ, pttl)
			}
			withTTL++
		}
	}
	set, changed, gone := tally.Count(model.ExpirySet), tally.Count(model.ExpiryChanged), tally.Count(model.ExpiryGone)
	if changed == 0 || gone == 0 {
		t.Errorf("the repair never met a key changed or deleted before it (%d repaired, %d changed, %d gone): the scenario raced nothing", set, changed, gone)
	}
	if tally.Total() != n || set+changed+gone != n || tally.Count(model.ExpiryFailed) != 0 || tally.Count(model.ExpiryHadTTL) != 0 {
		t.Errorf("the tally does not account for the %d keys: %d repaired, %d changed, %d gone, %d had a TTL, %d failed (total %d)",
			n, set, changed, gone, tally.Count(model.ExpiryHadTTL), tally.Count(model.ExpiryFailed), tally.Total())
	}
	// A key repaired before the other client turned it into a hash lost its
	// TTL with the DEL; every untouched counter was repaired.
	if set < withTTL {
		t.Errorf("%d repaired, yet %d counters have a TTL", set, withTTL)
	}
	v.converge(rdb, "after the repair race")
}
