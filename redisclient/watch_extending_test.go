package redisclient_test

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// extendingRules: rate limits of 2 s, which the clients below keep or
// push back: extending is proven once a key has grown with its deadline
// pushed back for longer than its window, and a test watches past it.
func extendingRules() *model.Rules {
	return &model.Rules{
		List:     []model.Rule{{Pattern: "rl:*", Limit: 1000, Window: 2 * time.Second, ExpectTTL: true}},
		Fallback: model.Rule{ExpectTTL: true},
	}
}

// watchExtending watches rl:* in mode (poll every 200 ms; no periodic
// re-scan in events and tracking, so that only what they follow counts)
// into a Store with extendingRules, and waits for the first full pass.
func watchExtending(t *testing.T, s *redistest.Server, mode model.WatchMode) *feed {
	t.Helper()
	return startWatchInto(t, connect(t, s), extendingRules(), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: 200 * time.Millisecond},
		Mode:        mode,
		ResyncEvery: time.Hour,
	})
}

// startWatchInto is startWatch into a Store with rules, waiting for the
// first full pass in o.Mode.
func startWatchInto(t *testing.T, c *redisclient.Client, rules *model.Rules, o redisclient.WatchOptions) *feed {
	t.Helper()
	f := startWatch(t, c, o)
	f.store = model.NewStore(rules) // before the first batch is applied
	f.waitPassIn(o.Mode, 0)
	return f
}

// logHit is a sorted-set log's hit, as a sliding-window limiter sends it
// in one script: the hit at the server's time in ms, the hits older than
// the window dropped, and the key's TTL set to the window again, which is
// right for a log (its oldest hit is what must expire).
func logHit(key string) []any {
	const script = `local t = redis.call('TIME')
local ms = t[1] * 1000 + math.floor(t[2] / 1000)
redis.call('ZADD', KEYS[1], ms, t[1] .. '.' .. t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], 0, ms - 10000)
redis.call('EXPIRE', KEYS[1], 10)
return 1`
	return []any{"EVAL", script, "1", key}
}

// A client that sends INCR then EXPIRE 2 without NX every 200 ms is
// extending once it has grown so for longer than its 2 s window, within
// 6 s, in every mode, and not before; the same client with NX is not, nor
// is a log whose TTL is set again on each hit, watched as long.
func TestExtendingInEveryMode(t *testing.T) {
	t.Parallel()
	for _, mode := range []model.WatchMode{model.WatchPoll, model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
			f := watchExtending(t, s, mode)
			const every = 200 * time.Millisecond
			s.Repeat(t, every, []any{"INCR", "rl:pushed"}, []any{"EXPIRE", "rl:pushed", "2"})
			s.Repeat(t, every, []any{"INCR", "rl:nx"}, []any{"EXPIRE", "rl:nx", "2", "NX"})
			s.Repeat(t, every, logHit("rl:log"))

			never := func() {
				for _, key := range []string{"rl:nx", "rl:log"} {
					if c, ok := f.store.Get(key); ok && c.Status == model.StatusExtending {
						t.Fatalf("%s is extending (value %v, TTL %d ms), whose deadline is kept or moves by design", key, c.Value, c.PTTL)
					}
				}
			}
			var first time.Time
			f.untilWithin(6*time.Second, "rl:pushed extending", func() string {
				never()
				c, ok := f.store.Get("rl:pushed")
				if !ok {
					return "rl:pushed not read yet"
				}
				if first.IsZero() {
					first = c.ObservedAt
				}
				if c.Status == model.StatusExtending && c.ObservedAt.Sub(first) < 2*time.Second {
					t.Fatalf("rl:pushed extending %s after it was first read, before it outgrew its 2 s window", c.ObservedAt.Sub(first))
				}
				if c.Status != model.StatusExtending {
					return fmt.Sprintf("rl:pushed is %s, value %v, TTL %d ms, %d readings kept", c.Status, c.Value, c.PTTL, len(f.store.History("rl:pushed")))
				}
				return ""
			})
			// Every mode feeds the key's trend, which TREND draws.
			if tr, ok := f.store.Trend("rl:pushed", time.Now()); !ok || tr.Readings == 0 || math.IsNaN(tr.Values[model.TrendBuckets-1]) {
				t.Errorf("rl:pushed has no trend of its readings in %s mode: %+v", mode, tr)
			}
			// The others, read as often for as long again, never are.
			f.until("rl:nx and rl:log read for 3 s more", func() string {
				never()
				nx, _ := f.store.Get("rl:nx")
				log, _ := f.store.Get("rl:log")
				switch pushed, _ := f.store.Get("rl:pushed"); {
				case log.Layout != model.LayoutLog:
					return fmt.Sprintf("rl:log read as %s, not a log", log.Layout)
				case pushed.ObservedAt.Sub(first) < 8*time.Second || len(f.store.History("rl:nx")) < 2 || len(f.store.History("rl:log")) < 2:
					return fmt.Sprintf("rl:nx at %v, rl:pushed read %s after it was first, %d and %d readings kept", nx.Value, pushed.ObservedAt.Sub(first), len(f.store.History("rl:nx")), len(f.store.History("rl:log")))
				}
				return ""
			})
			if c, _ := f.store.Get("rl:pushed"); c.Status != model.StatusExtending {
				t.Errorf("rl:pushed is %s after 8 s of pushes, want extending still", c.Status)
			}
		})
	}
}

// In events mode an EXPIRE alone, with no write to the value, is re-read
// at once: the notification the expire sends, not a later pass, moves the
// TTL and keeps the reading before it in the key's history.
func TestEventsReadAnExpireAtOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
	s.Do(t, "SET", "rl:k", "5", "EX", "100")
	f := startWatch(t, connect(t, s), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: slowPoll},
		Mode:        model.WatchEvents,
		ResyncEvery: time.Hour,
	})
	f.store = model.NewStore(extendingRules())
	f.waitSynced()
	passes := f.passes
	s.Do(t, "EXPIRE", "rl:k", "1000")
	f.untilWithin(2*time.Second, "the pushed TTL read", func() string {
		c, _ := f.store.Get("rl:k")
		h := f.store.History("rl:k")
		if c.PTTL < 900_000 || len(h) != 1 || h[0].TTL > 100*time.Second {
			return fmt.Sprintf("TTL %d ms, history %v", c.PTTL, h)
		}
		return ""
	})
	if f.passes != passes {
		t.Errorf("a full pass ran (%d, was %d): the expire was not read from its notification alone", f.passes, passes)
	}
}

// A DECR on a key that had expired makes it again at -1 without a TTL:
// no-expiry like any other, with the likely cause named.
func TestDecrementAfterExpiry(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
	f := watchExtending(t, s, model.WatchEvents)
	s.Do(t, "SET", "rl:undo", "3", "PX", "300")
	f.waitValue("rl:undo", "3")
	f.waitGone("rl:undo")
	s.Do(t, "DECR", "rl:undo") // the limiter gives back a hit it counted in a window now gone
	c := f.waitValue("rl:undo", "-1")
	note := model.Note(&c, time.Minute)
	if c.Status != model.StatusNoExpiry || !strings.Contains(note, "likely a decrement after the key expired") {
		t.Errorf("status %s, note %q; want no-expiry and the likely cause", c.Status, note)
	}
}

// A TTL of a day under a rule of 60 s is not a problem, but is noted.
func TestTTLFarLongerThanTheWindowIsNoted(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:day", "4", "EX", "86400")
	f := watchExtending(t, s, model.WatchPoll)
	c := f.waitValue("rl:day", "4")
	note := model.Note(&c, extendingRules().WindowOf(extendingRules().List[0]))
	if c.Status != model.StatusOK || !strings.HasPrefix(note, "TTL 23h59m ") || !strings.Contains(note, "more than twice its rule's window of 2.0s") {
		t.Errorf("status %s, note %q; want ok, and the TTL noted against the window", c.Status, note)
	}
}
