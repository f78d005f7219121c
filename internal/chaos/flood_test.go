//go:build chaos

package chaos

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
)

// TestFloodPastPubsubLimit: a flood of writes past the subscription's
// output buffer limit makes Redis drop countertop's subscription; the
// feed says so, naming the setting, and the notifications lost with it
// must not leave the view behind.
func TestFloodPastPubsubLimit(t *testing.T) {
	srv, v, rdb := standalone(t, model.WatchEvents, 10)
	ctx := context.Background()
	srv.Do(t, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 16kb 8kb 1")
	var subs string
	waitUntil(t, "the subscription", func() bool { subs = subscribers(t, rdb); return subs != "" })
	for round := 0; subscribers(t, rdb) == subs; round++ {
		if round == 20 {
			t.Fatal("20 floods never went past the pubsub buffer limit: the scenario tested nothing")
		}
		p := rdb.Pipeline()
		for i := range 20000 {
			p.Set(ctx, fmt.Sprintf("rl:flood:%d", i%5000), round*20000+i, 0)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	v.converge(rdb, "after a flood that dropped the subscription")
	waitUntil(t, "the close said", func() bool {
		return v.sawState(func(st model.FeedState) bool {
			return strings.Contains(st.LastError+st.Note, "client-output-buffer-limit pubsub")
		})
	}, v.feedState)
	waitUntil(t, "the feed to follow events again", func() bool { return watchingIn(v.feedState(), model.WatchEvents) })
	churn(t, rdb, "flood")
	v.converge(rdb, "after writes once subscribed again")
}

// subscribers returns the ids of the server's pubsub connections.
func subscribers(t *testing.T, rdb *redis.Client) string {
	t.Helper()
	list, err := rdb.Do(context.Background(), "CLIENT", "LIST", "TYPE", "pubsub").Text()
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(list, "\n") {
		for _, f := range strings.Fields(line) {
			if id, ok := strings.CutPrefix(f, "id="); ok {
				ids = append(ids, id)
			}
		}
	}
	slices.Sort(ids)
	return strings.Join(ids, ",")
}
