package chaos

import (
	"context"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// serverArgs make a server that sends the notifications events mode needs
// from its start (so a restart keeps them), takes DEBUG, and answers BUSY
// soon after a script hangs.
var serverArgs = []string{
	"--notify-keyspace-events", "KEA",
	"--enable-debug-command", "yes",
	"--busy-reply-threshold", "100",
}

// standalone starts a server seeded with n counters, a view of it in mode,
// and a go-redis client for the truth, and waits for the view to match.
func standalone(t *testing.T, mode model.WatchMode, n int) (*redistest.Server, *view, *redis.Client) {
	t.Helper()
	srv := redistest.Start(t, serverArgs...)
	rdb := srv.Client(t)
	seed(t, rdb, "a", n)
	v := startView(t, srv.URL(), false, watchOptions(mode))
	v.converge(rdb, "at start")
	return srv, v, rdb
}

// set writes key=value with no TTL, failing the test on an error.
func set(t *testing.T, rdb redis.UniversalClient, key string, value any) {
	t.Helper()
	if err := rdb.Set(context.Background(), key, value, 0).Err(); err != nil {
		t.Fatalf("SET %s: %v", key, err)
	}
}

// churn changes the keyspace in every way a user would see: a value, a new
// key, a deleted key, a TTL given and one taken away.
func churn(t *testing.T, rdb redis.UniversalClient, tag string) {
	t.Helper()
	ctx := context.Background()
	set(t, rdb, "rl:a1", "1001")
	set(t, rdb, "rl:new:"+tag, "7")
	for _, err := range []error{
		rdb.Del(ctx, "rl:a3").Err(),
		rdb.Expire(ctx, "rl:a5", 3600e9).Err(),
		rdb.Persist(ctx, "rl:a2").Err(),
		rdb.HSet(ctx, "rl:h:"+tag, "tokens", "3").Err(),
	} {
		if err != nil {
			t.Fatalf("churn %s: %v", tag, err)
		}
	}
	for i := range 5 {
		set(t, rdb, fmt.Sprintf("rl:b:%s:%d", tag, i), i)
	}
}
