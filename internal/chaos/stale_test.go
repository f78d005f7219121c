package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// The windows of the logs the scenarios write: rl:log:* lose their hits
// within a test, rl:hour:* keep them.
const (
	shortWindow = 3 * time.Second
	hourWindow  = time.Hour
)

// liveRules give the logs their windows, as a config file would.
func liveRules() *model.Rules {
	return &model.Rules{List: []model.Rule{
		{Pattern: "rl:log:*", Limit: 100, Window: shortWindow, ExpectTTL: true},
		{Pattern: "rl:hour:*", Limit: 100, Window: hourWindow, ExpectTTL: true},
	}, Fallback: model.Rule{ExpectTTL: true}}
}

// liveView watches srv in mode with no periodic pass within the test's
// time: a value that changes on screen was read because an event, an
// invalidation or countertop's own schedule said to, not by a full pass.
func liveView(t *testing.T, srv *redistest.Server, mode model.WatchMode, enable bool) *view {
	t.Helper()
	o := watchOptions(mode)
	o.ResyncEvery = time.Hour
	o.EnableEvents = enable
	return startRuledView(t, srv.URL(), false, o, liveRules())
}

// value returns the number key's row shows, and whether there is a row
// with a number.
func (v *view) value(key string) (int64, bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, ok := v.store.Get(key)
	if !ok {
		return 0, false
	}
	n, isNum := c.Value.Number()
	return int64(n), isNum
}

// passes counts the full passes the feed has begun: a state that says
// it scans after one that did not.
func (v *view) passes() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	n, scanning := 0, false
	for _, s := range v.states {
		if s.Scanning && !scanning {
			n++
		}
		scanning = s.Scanning
	}
	return n
}

// waitValue waits until key's row shows want, and fails the test if a full
// pass begins first: a pass reads every key, and the value must come from
// what follows the key between passes (the test asks for none, but a
// subscription that is lost brings one).
func (v *view) waitValue(key string, want int64, why string) {
	v.t.Helper()
	passes := v.passes()
	waitUntil(v.t, fmt.Sprintf("%s: %s to show %d", why, key, want), func() bool {
		got, ok := v.value(key)
		return ok && got == want || v.passes() > passes
	}, func() model.FeedState {
		got, _ := v.value(key)
		s := v.feedState()
		s.Note += fmt.Sprintf(" [%s shows %d]", key, got)
		return s
	})
	if v.passes() > passes {
		got, _ := v.value(key)
		v.t.Fatalf("%s: a full pass began before %s showed %d (it shows %d): nothing else read it", why, key, want, got)
	}
}

// hits writes n hits to the log key (a sorted set, or a list when list is
// set), their times in milliseconds spread over the span before now.
func hits(t *testing.T, rdb *redis.Client, key string, list bool, n int, span time.Duration) {
	t.Helper()
	ctx := context.Background()
	now := time.Now()
	for i := range n {
		at := now.Add(-span + span*time.Duration(i)/time.Duration(n)).UnixMilli()
		var err error
		if list {
			err = rdb.LPush(ctx, key, at).Err()
		} else {
			err = rdb.ZAdd(ctx, key, redis.Z{Score: float64(at), Member: fmt.Sprintf("%d-%d", at, i)}).Err()
		}
		if err != nil {
			t.Fatalf("a hit on %s: %v", key, err)
		}
	}
}

// inWindow is the true count of a log's hits inside window, as of now.
func inWindow(t *testing.T, rdb *redis.Client, key string, window time.Duration) int64 {
	t.Helper()
	ctx := context.Background()
	start := strconv.FormatInt(time.Now().Add(-window).UnixMilli(), 10)
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if typ == "list" {
		entries, err := rdb.LRange(ctx, key, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, e := range entries {
			if e > start { // same number of digits: text order is number order
				n++
			}
		}
		return n
	}
	n, err := rdb.ZCount(ctx, key, "("+start, "+inf").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// writeEveryLayout writes a hash-field counter, a sorted-set log and a
// list log (windows of an hour).
func writeEveryLayout(t *testing.T, rdb *redis.Client) {
	t.Helper()
	if err := rdb.HSet(context.Background(), "rl:h:1", "hits", 1).Err(); err != nil {
		t.Fatal(err)
	}
	hits(t, rdb, "rl:hour:z", false, 3, time.Second)
	hits(t, rdb, "rl:hour:l", true, 3, time.Second)
}

// waitEveryLayout waits until the view shows writeEveryLayout's keys,
// read in any way.
func (v *view) waitEveryLayout() {
	v.t.Helper()
	for key, want := range map[string]int64{"rl:h:1": 1, "rl:hour:z": 3, "rl:hour:l": 3} {
		waitUntil(v.t, key+" to show "+strconv.FormatInt(want, 10), func() bool {
			got, ok := v.value(key)
			return ok && got == want
		}, v.feedState)
	}
}

// followEveryLayout changes each of writeEveryLayout's keys as a limiter
// would (HINCRBY, ZADD, LPUSH) and waits until the view shows each change.
func followEveryLayout(t *testing.T, v *view, rdb *redis.Client, why string) {
	t.Helper()

	if err := rdb.HIncrBy(context.Background(), "rl:h:1", "hits", 10).Err(); err != nil {
		t.Fatal(err)
	}
	hits(t, rdb, "rl:hour:z", false, 2, time.Second)
	hits(t, rdb, "rl:hour:l", true, 1, time.Second)
	v.waitValue("rl:h:1", 11, why+", after HINCRBY")
	v.waitValue("rl:hour:z", 5, why+", after ZADD")
	v.waitValue("rl:hour:l", 4, why+", after LPUSH")
}

// TestEventsFollowEveryLayout: keyspace events that countertop turns on
// itself (--enable-events) cover hashes, sorted sets and lists, so that a
// hash-field counter, a sorted-set log and a list log follow their writes
// as strings do, without a periodic pass.
func TestEventsFollowEveryLayout(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--notify-keyspace-events", "")
	rdb := srv.Client(t)
	v := liveView(t, srv, model.WatchEvents, true)
	waitUntil(t, "the feed to be live", func() bool { return watchingIn(v.feedState(), model.WatchEvents) }, v.feedState)
	writeEveryLayout(t, rdb) // told by the events of their types
	v.waitEveryLayout()
	followEveryLayout(t, v, rdb, "events turned on by countertop")
	flags := srv.Do(t, "CONFIG", "GET", "notify-keyspace-events")
	for _, class := range "hzl" {
		if !strings.ContainsRune(fmt.Sprint(flags), class) {
			t.Errorf("notify-keyspace-events is %v: countertop did not turn on the class %c", flags, class)
		}
	}
}

// TestTypesWithoutEventsArePolled: on a server whose setting sends the
// events of strings only (K$gxe, which countertop asked for before), and
// which countertop may not change, hashes, sorted sets and lists are read
// again on the poll schedule, and the header says so.
func TestTypesWithoutEventsArePolled(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
	rdb := srv.Client(t)
	writeEveryLayout(t, rdb) // before the first pass: no event tells a new hash here
	v := liveView(t, srv, model.WatchEvents, false)
	v.waitEveryLayout()
	followEveryLayout(t, v, rdb, "a setting without their classes")
	const polled = "hashes, sorted sets and lists re-read every 0.2s: notify-keyspace-events lacks hzl"
	if s := v.feedState(); !watchingIn(s, model.WatchEvents) || !strings.HasPrefix(s.Note, polled) {
		t.Errorf("the header says %q (%s), not first %q", s.Note, s.Mode, polled)
	}
	// Their rows do not claim to be live: they are true as of their read.
	for _, key := range []string{"rl:h:1", "rl:hour:z", "rl:hour:l"} {
		if c := v.counter(key); c.KnownUntil.IsZero() || c.KnownUntil.After(c.ObservedAt) {
			t.Errorf("%s, read at %v, is vouched for until %v", key, c.ObservedAt, c.KnownUntil)
		}
	}
	if got := srv.Do(t, "CONFIG", "GET", "notify-keyspace-events"); !strings.Contains(fmt.Sprint(got), "g$xeK") {
		t.Errorf("notify-keyspace-events is %v: countertop changed it unasked", got)
	}
}

// counter returns key's row.
func (v *view) counter(key string) model.Counter {
	v.mu.Lock()
	defer v.mu.Unlock()
	c, _ := v.store.Get(key)
	return c
}

// TestLogCountFallsWithoutWrites: a log's hits leave its window with no
// write at all, which neither events nor invalidations tell; its count on
// screen falls to the true count in the window all the same.
func TestLogCountFallsWithoutWrites(t *testing.T) {
	for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchTracking} {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t, serverArgs...)
			rdb := srv.Client(t)
			v := liveView(t, srv, mode, false)
			waitUntil(t, "the feed to be live", func() bool {
				s := v.feedState()
				return watchingIn(s, mode) && s.LastError == "" && !s.Scanning
			}, v.feedState)
			const n = 20
			hits(t, rdb, "rl:log:z", false, n, time.Second)
			hits(t, rdb, "rl:log:l", true, n, time.Second)
			for _, key := range []string{"rl:log:z", "rl:log:l"} {
				waitUntil(t, key+" to show its hits", func() bool { got, _ := v.value(key); return got > 0 }, v.feedState)
				// Its count is vouched for until its first hit leaves,
				// not only as of its read: the log is read when that
				// hit leaves, not every interval.
				if c := v.counter(key); c.Value.Int > 0 && !c.KnownUntil.After(c.ObservedAt) {
					t.Errorf("%s shows %d hits, vouched for until %v, read at %v", key, c.Value.Int, c.KnownUntil, c.ObservedAt)
				}
			}
			for _, key := range []string{"rl:log:z", "rl:log:l"} {
				v.waitValue(key, 0, "every hit out of the window, without a write")
				if got := inWindow(t, rdb, key, shortWindow); got != 0 {
					t.Fatalf("%s holds %d hits in its window", key, got)
				}
				// With no hit left to leave, events vouch for it again.
				if c := v.counter(key); !c.KnownUntil.IsZero() {
					t.Errorf("%s, with no hit in its window, is vouched for only until %v", key, c.KnownUntil)
				}
			}
		})
	}
}
