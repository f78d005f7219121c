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
// keyspace event or an invalidation: FLUSHDB, FLUSHALL and SWAPDB send no
// event, SWAPDB no invalidation either (Redis 7.0), and their rows would
// stay on screen until the next full pass. A master's count of those
// commands (INFO commandstats) says one ran since it was last asked.
//
// INFO cannot say on which database. A flush can only take keys away, so
// after one the masters' DBSIZE must also have fallen below the keys known
// (DBSIZE alone would not do: keys whose expiry events are on the way keep
// it short). A SWAPDB may bring in a database holding as many keys or more,
// and its keys are not known: one that succeeded (from Redis 7.0,
// commandstats count the failed apart) always brings a full pass. SWAPDB is
// rare, and a pass within the budget is gentle.
//
// A master that does not answer in time is asked again next interval; one
// that refuses INFO (NOPERM) is not asked again, so as not to fill its ACL
// LOG, and leaves flushes to the full passes. Either way each master is
// sent a command every interval, which is how a hang shows while nothing
// changes (see heartbeat).
func (w *pushWatcher) flushed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, w.o.Interval/2) // the events wait meanwhile
	defer cancel()
	counts := make(map[string]flushCount, len(w.subs))
	flushed, swapped := false, false
	for addr, s := range w.subs {
		last, asked := w.flushes[addr]
		if _, no := w.noInfo.Load(addr); last.refused || no { // refused: a PING, so that a hang still shows (see heartbeat)
			_ = w.c.onMaster(ctx, addr, func() error { return s.client.Ping(ctx).Err() })
			continue
		}
		var n flushCount
		err := w.c.onMaster(ctx, addr, func() (err error) { // a master that hangs is not waited for
			n, err = flushes(ctx, s.client)
			return err
		})
		switch {
		case redis.HasErrorPrefix(err, "NOPERM"):
			w.flushes[addr] = flushCount{refused: true}
			w.noInfo.Store(addr, true)
		case err != nil:
		default:
			flushed = flushed || asked && n.flushes != last.flushes
			swapped = swapped || asked && n.swaps != last.swaps
			counts[addr] = n
		}
	}
	pass := swapped
	if flushed && !swapped {
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

// flushCount is what a master's INFO commandstats says of the commands that
// take keys without an event.
type flushCount struct {
	flushes int64 // FLUSHDB and FLUSHALL calls, failed ones too: flushed checks the keys
	swaps   int64 // SWAPDB calls that succeeded (all calls before Redis 7.0)
	refused bool  // the master refused INFO: it is not asked again
}

// flushes returns how many FLUSHDB, FLUSHALL and SWAPDB commands node has
// run, from INFO commandstats.
func flushes(ctx context.Context, node *redis.Client) (flushCount, error) {
	info, err := node.Info(ctx, "commandstats").Result()
	if err != nil {
		return flushCount{}, err
	}
	var n flushCount
	for line := range strings.Lines(info) {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_flushdb" && name != "cmdstat_flushall" && name != "cmdstat_swapdb") {
			continue
		}
		calls, failed, err := callCounts(stats)
		if err != nil {
			return flushCount{}, fmt.Errorf("INFO commandstats: %q", line)
		}
		if name == "cmdstat_swapdb" {
			n.swaps += calls - failed
		} else {
			n.flushes += calls
		}
	}
	return n, nil
}

// callCounts returns the calls and failed_calls of a commandstats line's
// fields ("calls=3,usec=9,...,failed_calls=1"); failed_calls is 0 where
// Redis does not report it.
func callCounts(stats string) (calls, failed int64, err error) {
	seen := false
	for field := range strings.SplitSeq(stats, ",") {
		k, v, _ := strings.Cut(field, "=")
		var dst *int64
		switch k {
		case "calls":
			dst, seen = &calls, true
		case "failed_calls":
			dst = &failed
		default:
			continue
		}
		if *dst, err = strconv.ParseInt(v, 10, 64); err != nil {
			return 0, 0, err
		}
	}
	if !seen {
		return 0, 0, fmt.Errorf("no calls")
	}
	return calls, failed, nil
}
