package redisclient

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// evictionMeter counts the keys Redis evicts to stay under its maxmemory,
// over the last model.EvictionWindow, for the header: an evicted counter
// is a rate limit reset early, and its row leaves the screen as if it had
// expired. While events are followed it counts the watched keys' evicted
// events, which the subscribers add to pending; otherwise it counts what
// the masters' INFO evicted_keys grew by, which is every key of every
// database there, watched or not (see sampleEvictions). The heartbeat
// folds pending in and reads the count. Its zero value is ready to use.
type evictionMeter struct {
	pending atomic.Int64 // evicted events of watched keys not counted yet
	events  atomic.Bool  // the events watcher is live: its events are the count

	mu       sync.Mutex
	ofEvents bool                         // what the buckets count: events (true), or INFO's evicted_keys
	buckets  [evictionBuckets]evictBucket // by second, a ring
	last     map[string]int64             // each master's evicted_keys when last read
	refused  map[string]bool              // masters that refused INFO: not asked again
}

// evictionBuckets is how many seconds the meter keeps.
const evictionBuckets = int(model.EvictionWindow / time.Second)

// evictBucket is the evictions counted in one second.
type evictBucket struct {
	sec int64 // Unix seconds
	n   int64
}

// sawEvicted counts an evicted event of a watched key; subscribers call
// it, and never wait.
func (m *evictionMeter) sawEvicted() { m.pending.Add(1) }

// following says whether the events watcher is live, so that its events
// are the count (true), or INFO's evicted_keys (false).
func (m *evictionMeter) following(events bool) { m.events.Store(events) }

// count returns the evictions of the last model.EvictionWindow as of now,
// and whether they are of every key on the servers (INFO's) rather than
// the watched keys' evicted events. It takes in the events pending.
func (m *evictionMeter) count(now time.Time) (n int64, all bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	events := m.events.Load()
	m.source(events)
	if p := m.pending.Swap(0); p > 0 && events {
		m.add(now, p)
	}
	from := now.Unix() - int64(evictionBuckets)
	for _, b := range m.buckets {
		if b.sec > from {
			n += b.n
		}
	}
	return n, !events
}

// source makes the buckets count events, or INFO's evicted_keys, as
// events says: counts of the other kind are dropped, since the two do not
// count the same keys, and INFO's start again from the next reading.
// m.mu is held.
func (m *evictionMeter) source(events bool) {
	if m.ofEvents == events {
		return
	}
	m.ofEvents = events
	m.buckets = [evictionBuckets]evictBucket{}
	clear(m.last)
}

// add counts n evictions at now. m.mu is held.
func (m *evictionMeter) add(now time.Time, n int64) {
	sec := now.Unix()
	b := &m.buckets[sec%int64(evictionBuckets)]
	if b.sec != sec {
		*b = evictBucket{sec: sec}
	}
	b.n += n
}

// sampled counts what the master at addr's evicted_keys grew by since the
// last reading, read at now; a first reading only sets where it starts. A
// count that fell means the server restarted (or CONFIG RESETSTAT): all it
// counts now came since. Nothing is counted while events are.
func (m *evictionMeter) sampled(addr string, total int64, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.source(m.events.Load())
	if m.ofEvents {
		return
	}
	if m.last == nil {
		m.last = make(map[string]int64)
	}
	last, seen := m.last[addr]
	m.last[addr] = total
	switch {
	case !seen:
	case total >= last:
		m.add(now, total-last)
	default:
		m.add(now, total)
	}
}

// sampleEvictions reads each master's INFO evicted_keys every every while
// events are not followed, until ctx is done, for the meter: one INFO per
// master each time, which the budget counts. A master that refuses INFO
// is not asked again, so as not to fill its ACL LOG; its evictions go
// uncounted. A master that hangs is not waited for (see onMaster).
func (c *Client) sampleEvictions(ctx context.Context, every time.Duration, m *evictionMeter) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		if !m.events.Load() {
			c.sampleOnce(ctx, every, m)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleOnce reads each master's evicted_keys once, each within every.
func (c *Client) sampleOnce(ctx context.Context, every time.Duration, m *evictionMeter) {
	ctx, cancel := context.WithTimeout(ctx, every)
	defer cancel()
	nodes, err := c.masters(ctx)
	if err != nil {
		return
	}
	for _, n := range nodes {
		addr := n.Options().Addr
		m.mu.Lock()
		refused := m.refused[addr]
		m.mu.Unlock()
		if refused {
			continue
		}
		var info string
		err := c.onMaster(ctx, addr, func() (err error) {
			info, err = n.Info(ctx, "stats").Result()
			return err
		})
		switch {
		case redis.HasErrorPrefix(err, "NOPERM"):
			m.mu.Lock()
			if m.refused == nil {
				m.refused = make(map[string]bool)
			}
			m.refused[addr] = true
			m.mu.Unlock()
		case err == nil:
			if total := infoCount(info, "evicted_keys"); total >= 0 {
				m.sampled(addr, total, time.Now())
			}
		}
	}
}

// Evictions reads, on each master, how many keys it has evicted to stay
// under its maxmemory since it started, its maxmemory-policy and its
// uptime, from one INFO each: for check, which says when a server evicts,
// since an evicted counter is a rate limit reset early. INFO counts every
// key of the server, watched or not. A master that refuses INFO fails it.
func (c *Client) Evictions(ctx context.Context) ([]model.ServerEvictions, error) {
	nodes, err := c.masters(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]model.ServerEvictions, 0, len(nodes))
	for _, n := range nodes {
		addr := n.Options().Addr
		info, err := n.Info(ctx).Result() // the default sections: server, memory and stats among them
		if err != nil {
			return nil, c.explainAt(err, addr)
		}
		out = append(out, serverEvictions(addr, info))
	}
	return out, nil
}

// serverEvictions reads a server's INFO reply: evicted_keys,
// maxmemory_policy and uptime_in_seconds.
func serverEvictions(addr, info string) model.ServerEvictions {
	e := model.ServerEvictions{Addr: addr, Evicted: max(0, infoCount(info, "evicted_keys"))}
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		switch {
		case !ok:
		case k == "maxmemory_policy":
			e.Policy = v
		case k == "uptime_in_seconds":
			if s, err := strconv.ParseInt(v, 10, 64); err == nil {
				e.Uptime = time.Duration(s) * time.Second
			}
		}
	}
	return e
}

// evictedEvent is the keyspace event Redis sends for a key it evicted.
const evictedEvent = "evicted"
