package redisclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// behindAfter is how far behind Redis the changes that events or tracking
// follow may fall before the header says so: less is the ordinary cost of
// gathering and reading them, and too brief for a person to see.
const behindAfter = 500 * time.Millisecond

// lagMeter measures how far behind Redis a watch that follows events or
// invalidations is: how far its subscriptions' pings come back behind
// everything Redis had queued for them, plus how long the oldest change
// they told has waited to be read. The heartbeat asks it (see behind),
// apart from the reader, which may be the one busy reading.
type lagMeter struct {
	mu    sync.Mutex
	conns map[*subConn]struct{} // the subscriptions draining now
	set   *changeSet            // the watcher's changes not read yet; nil while polling
}

// watch counts conn's lag, until unwatch.
func (m *lagMeter) watch(conn *subConn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.conns == nil {
		m.conns = make(map[*subConn]struct{})
	}
	m.conns[conn] = struct{}{}
}

// unwatch stops counting conn's lag.
func (m *lagMeter) unwatch(conn *subConn) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.conns, conn)
}

// follow counts the changes of set as not read yet; nil stops.
func (m *lagMeter) follow(set *changeSet) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.set = set
}

// behind returns how far behind Redis the watch is as of now: the most a
// subscription lags, plus how long the oldest change not read yet has
// waited; 0 under behindAfter.
func (m *lagMeter) behind(now time.Time) time.Duration {
	if m == nil {
		return 0
	}
	m.mu.Lock()
	var lag time.Duration
	for c := range m.conns {
		lag = max(lag, c.behind(now))
	}
	set := m.set
	m.mu.Unlock()
	if set != nil {
		lag += set.waited(now)
	}
	if lag < behindAfter {
		return 0
	}
	return lag
}

// errOverflow marks the error of a subscription that Redis closed because
// its output buffer passed client-output-buffer-limit pubsub.
var errOverflow = errors.New("the subscription's output buffer passed its limit")

// overflowStat is the INFO stats field that counts the clients Redis
// closed for their output buffer (Redis 7.4 and later).
const overflowStat = "client_output_buffer_limit_disconnections"

// overflowCount returns node's count of clients closed for their output
// buffer (-1 when its INFO has none), and whether node answered INFO.
func (w *pushWatcher) overflowCount(ctx context.Context, node *redis.Client) (n int64, answered bool) {
	addr := node.Options().Addr
	if _, no := w.noInfo.Load(addr); no {
		return -1, false
	}
	ctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	defer cancel()
	info, err := node.Info(ctx, "stats").Result()
	if redis.HasErrorPrefix(err, "NOPERM") {
		w.noInfo.Store(addr, true)
	}
	if err != nil {
		return -1, false
	}
	return infoCount(info, overflowStat), true
}

// infoCount returns the integer field of an INFO reply; -1 when it has
// none.
func infoCount(info, field string) int64 {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				return n
			}
		}
	}
	return -1
}

// floodMessages is how many messages a subscription must have received in
// about the second before Redis closed it for the close to be taken for
// its output buffer, when Redis does not count such closes: a flood.
const floodMessages = 1000

// overflowed returns the sentence that says Redis closed sub, the
// subscription of s, because its output buffer passed
// client-output-buffer-limit pubsub, and what to change; "" when it did
// not, or when the server is not there to ask (a restart). err is what
// ended the drain, behind how far behind it was, and busy how many
// messages it received in about its last second. A server that counts
// such closes (Redis 7.4 and later) is asked. Before that, a server that
// runs on and closed a subscription in the middle of a flood, or far
// behind, most likely did it for its buffer; a quiet one may have too, or
// been killed, and the sentence says both.
func (w *pushWatcher) overflowed(ctx context.Context, s *subscriber, sub *subscription, err error, behind time.Duration, busy uint64) string {
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, syscall.ECONNRESET) {
		return "" // not closed by the server
	}
	now, up := w.overflowCount(ctx, s.client)
	return overflowSentence(w.kind.message, s.node, sub.overflows, now, up, behind, busy)
}

// overflowSentence is overflowed's sentence on the what ("notification"
// or "invalidation") connection to node, from the server's count of
// output buffer closes before and now (-1 when it has none), whether it
// answered (up), how far behind the subscription was and how busy.
func overflowSentence(what, node string, before, now int64, up bool, behind time.Duration, busy uint64) string {
	fix := `; countertop re-reads every key; raise the limit with CONFIG SET client-output-buffer-limit "pubsub 64mb 16mb 60", or watch fewer keys`
	switch {
	case !up:
		return ""
	case before >= 0 && now >= 0:
		if now <= before {
			return ""
		}
		return fmt.Sprintf("Redis closed the %s connection to %s because countertop fell behind (its pubsub output buffer passed client-output-buffer-limit pubsub)%s", what, node, fix)
	case behind >= behindAfter:
		return fmt.Sprintf("Redis closed the %s connection to %s while countertop was %s behind, most likely because its pubsub output buffer passed client-output-buffer-limit pubsub%s", what, node, model.FormatDuration(behind), fix)
	case busy >= floodMessages:
		return fmt.Sprintf("Redis closed the %s connection to %s in the middle of a flood, most likely because countertop fell behind and its pubsub output buffer passed client-output-buffer-limit pubsub%s", what, node, fix)
	}
	// Quiet and not behind: a burst too short to be seen as one, or a
	// CLIENT KILL; both are said, the setting with the first.
	return fmt.Sprintf("Redis closed the %s connection to %s and runs on: either a burst of changes passed client-output-buffer-limit pubsub "+
		`(this Redis does not count such closes; if it happens under load, raise the limit with CONFIG SET client-output-buffer-limit "pubsub 64mb 16mb 60", or watch fewer keys), `+
		"or someone ran CLIENT KILL; countertop re-reads every key", what, node)
}
