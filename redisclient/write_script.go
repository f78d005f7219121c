package redisclient

import (
	"context"

	"github.com/redis/go-redis/v9"
)

// luaScript is a script countertop runs in Redis, with its source for
// EVAL: the writes that must be one atomic step (an increment with its
// expiry, a repair with its checks) are scripts.
type luaScript struct {
	*redis.Script
	source string
}

func newScript(source string) luaScript {
	return luaScript{redis.NewScript(source), source}
}

// evalOnce runs s on rdb with EVALSHA, and with EVAL when the server lost
// its script cache (SCRIPT FLUSH, a restart, a failover): NOSCRIPT means
// nothing ran. Neither is sent a second time (see once). In a cluster the
// command goes to the master of keys[0]'s slot.
func evalOnce(ctx context.Context, rdb processor, s luaScript, keys []string, args ...any) *redis.Cmd {
	tail := make([]any, 0, 1+len(keys)+len(args))
	tail = append(tail, len(keys))
	for _, k := range keys {
		tail = append(tail, k)
	}
	tail = append(tail, args...)
	cmd := once(ctx, rdb, append([]any{"evalsha", s.Hash()}, tail...)...)
	if redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		cmd = once(ctx, rdb, append([]any{"eval", s.source}, tail...)...)
	}
	return cmd
}
