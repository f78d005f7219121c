package redisclient

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// flushed reports whether keys the watcher knows were taken without a
// keyspace event: FLUSHDB, FLUSHALL and SWAPDB send none, and their rows
// would stay on screen until the next full pass. A master's count of those
// commands (INFO commandstats) says one ran since it was last asked; as
// INFO cannot say on which database, nor whether it failed, the masters'
// DBSIZE must also have fallen below the keys known. (DBSIZE alone would
// not do: keys whose expiry events are on the way keep it short.)
//
// A master that does not answer in time is asked again next interval; one
// that refuses INFO (NOPERM) is not asked again, so as not to fill its ACL
// LOG, and leaves flushes to the full passes. Either way each master is
// sent a command every interval, which is how a hang shows while nothing
// changes (see heartbeat).
func (w *eventWatcher) flushed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, w.o.Interval/2) // the events wait meanwhile
	defer cancel()
	counts := make(map[string]int64, len(w.subs))
	ran := false
	for addr, s := range w.subs {
		last, asked := w.flushes[addr]
		if last < 0 { // refused: a PING, so that a hang still shows (see heartbeat)
			_ = w.c.onMaster(ctx, addr, func() error { return s.client.Ping(ctx).Err() })
			continue
		}
		var n int64
		err := w.c.onMaster(ctx, addr, func() (err error) { // a master that hangs is not waited for
			n, err = flushes(ctx, s.client)
			return err
		})
		switch {
		case redis.HasErrorPrefix(err, "NOPERM"):
			w.flushes[addr] = -1
		case err != nil:
		default:
			ran = ran || asked && n != last
			counts[addr] = n
		}
	}
	pass := false
	if ran {
		var size int64
		for addr, s := range w.subs {
			var n int64
			err := w.c.onMaster(ctx, addr, func() (err error) {
				n, err = s.client.DBSize(ctx).Result()
				return err
			})
			switch {
			case isReply(err):
				pass = true // the keys cannot be counted: a pass is the safe side
			case err != nil:
				return false // no answer in time: ask again next interval
			}
			size += n
		}
		pass = pass || size < int64(len(w.known))
	}
	maps.Copy(w.flushes, counts)
	return pass
}

// flushes returns how many FLUSHDB, FLUSHALL and SWAPDB commands node has run,
// from INFO commandstats (failed calls too: flushed checks the keys).
func flushes(ctx context.Context, node *redis.Client) (int64, error) {
	info, err := node.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var n int64
	for line := range strings.Lines(info) {
		for _, name := range []string{"cmdstat_flushdb:calls=", "cmdstat_flushall:calls=", "cmdstat_swapdb:calls="} {
			if rest, ok := strings.CutPrefix(line, name); ok {
				calls, _, _ := strings.Cut(rest, ",")
				c, err := strconv.ParseInt(calls, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: %q", line)
				}
				n += c
			}
		}
	}
	return n, nil
}
