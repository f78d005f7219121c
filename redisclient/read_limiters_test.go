package redisclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/gofiber/fiber/v2"
	fiberlimiter "github.com/gofiber/fiber/v2/middleware/limiter"
	fiberredis "github.com/gofiber/storage/redis/v3"
	"github.com/redis/go-redis/v9"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	limiterredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// The limiters of these tests allow 10 hits a minute, as the rule says.
var limiterRules = model.Rules{
	List:     []model.Rule{{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}},
	Fallback: model.Rule{ExpectTTL: true},
}

// readKey reads key through the dashboard's path and the snapshot's, and
// returns its counter.
func readKey(t *testing.T, s *redistest.Server, key string) model.Counter {
	t.Helper()
	c := connectWithRules(t, s.URL(), s.Password, &limiterRules)
	got := readBoth(t, c, &limiterRules, []string{key})
	return got[key]
}

// go-redis/redis_rate keeps a GCRA theoretical arrival time, in seconds
// since 2017-01-01 with a fraction: no counter, however large the number.
// The key is over exactly while the library refuses a hit.
func TestReadsRedisRate(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	l := redis_rate.NewLimiter(s.Client(t))
	limit := redis_rate.PerMinute(10)
	const key = "rate:user42" // the library's prefix and the limiter's key
	for range 3 {
		if res, err := l.Allow(ctx, "user42", limit); err != nil || res.Allowed != 1 {
			t.Fatalf("Allow = %+v, %v", res, err)
		}
	}
	c := readKey(t, s, key)
	checkReading(t, key, c, wantReading{"gcra", "null", true, "ok"})
	if !c.HasRemaining || c.Remaining != 7 {
		t.Errorf("remaining %v (%v) after 3 of 10 hits; want 7", c.Remaining, c.HasRemaining)
	}
	if free := time.Until(c.At); free < 15*time.Second || free > 18*time.Second {
		t.Errorf("frees in %v; want 18s, 6s a hit", free)
	}

	// Hit until the library refuses.
	for n := 3; ; n++ {
		res, err := l.Allow(ctx, "user42", limit)
		if err != nil {
			t.Fatal(err)
		}
		if res.Allowed == 0 {
			if n != 10 {
				t.Fatalf("refused after %d hits; want 10", n)
			}
			break
		}
	}
	c = readKey(t, s, key)
	checkReading(t, key, c, wantReading{"gcra", "null", true, "over"})
	if c.Remaining != 0 {
		t.Errorf("remaining %v while refusing; want 0", c.Remaining)
	}
}

// throttled/throttled keeps a GCRA theoretical arrival time in ns since
// 1970, 19 digits: not a counter of 1.8e18. Its burst of 9 allows 10 hits
// at once, the limit of the rule.
func TestReadsThrottled(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	store, err := goredisstore.NewCtx(s.Client(t), "throttled:")
	if err != nil {
		t.Fatal(err)
	}
	rl, err := throttled.NewGCRARateLimiterCtx(store, throttled.RateQuota{MaxRate: throttled.PerMin(10), MaxBurst: 9})
	if err != nil {
		t.Fatal(err)
	}
	const key = "throttled:user42"
	hit := func() bool {
		limited, _, err := rl.RateLimitCtx(ctx, "user42", 1)
		if err != nil {
			t.Fatal(err)
		}
		return limited
	}
	for range 9 {
		if hit() {
			t.Fatal("refused before its burst")
		}
	}
	checkReading(t, key, readKey(t, s, key), wantReading{"gcra", "null", true, "ok"})
	if hit() {
		t.Fatal("refused the 10th hit")
	}
	if !hit() {
		t.Fatal("allowed an 11th hit at once")
	}
	checkReading(t, key, readKey(t, s, key), wantReading{"gcra", "null", true, "over"})

	// A key that lost its TTL is no-expiry, not stuck: its number is a
	// time, not hits.
	s.Do(t, "PERSIST", key)
	checkReading(t, key, readKey(t, s, key), wantReading{"gcra", "null", false, "no-expiry"})
}

// ulule/limiter keeps a fixed window's counter (INCRBY, then PEXPIRE on the
// first hit): a counter, over once the next hit is refused, and stuck once
// it has no TTL at the limit.
func TestReadsUluleLimiter(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	store, err := limiterredis.NewStore(s.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	l := limiter.New(store, limiter.Rate{Period: time.Minute, Limit: 10})
	const key = limiter.DefaultPrefix + ":user42"
	for range 4 {
		if _, err := l.Get(ctx, "user42"); err != nil {
			t.Fatal(err)
		}
	}
	c := readKey(t, s, key)
	checkReading(t, key, c, wantReading{"counter", "4", true, "ok"})
	if c.Remaining != 6 {
		t.Errorf("remaining %v after 4 hits; want 6", c.Remaining)
	}
	var lc limiter.Context
	for range 6 {
		if lc, err = l.Get(ctx, "user42"); err != nil {
			t.Fatal(err)
		}
	}
	if lc.Reached || lc.Remaining != 0 {
		t.Fatalf("the 10th hit: reached %v, remaining %d; want allowed, none left", lc.Reached, lc.Remaining)
	}
	c = readKey(t, s, key)
	checkReading(t, key, c, wantReading{"counter", "10", true, "over"})
	if c.Remaining != 0 {
		t.Errorf("remaining %v at the limit; want 0", c.Remaining)
	}
	if lc, _ = l.Get(ctx, "user42"); !lc.Reached {
		t.Errorf("the 11th hit was allowed; the reading said over")
	}
	s.Do(t, "PERSIST", key)
	checkReading(t, key, readKey(t, s, key), wantReading{"counter", "11", false, "stuck"})
}

// watchLimiter watches pattern in poll mode every 100 ms into a Store with
// rules, as the dashboard does, once its first pass is over.
func watchLimiter(t *testing.T, s *redistest.Server, pattern string, rules *model.Rules) *feed {
	t.Helper()
	f := startWatch(t, connect(t, s), redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{pattern}, Interval: 100 * time.Millisecond},
		Mode:        model.WatchPoll,
	})
	f.store = model.NewStore(rules)
	f.waitPassIn(model.WatchPoll, 0)
	return f
}

// every calls hit every period until the test ends, as a client's
// requests come: traffic, not a wait for anything.
func every(t *testing.T, period time.Duration, hit func(now time.Time)) {
	t.Helper()
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			hit(time.Now())
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(func() { close(done); <-stopped })
}

// neverExtending fails the test when a key of keys is extending, and notes
// in first when each was first read.
func neverExtending(t *testing.T, f *feed, first map[string]time.Time, keys ...string) {
	t.Helper()
	for _, key := range keys {
		c, ok := f.store.Get(key)
		if !ok {
			continue
		}
		if _, seen := first[key]; !seen {
			first[key] = c.ObservedAt
		}
		if c.Status == model.StatusExtending {
			t.Fatalf("%s is extending (%s, value %v, TTL %d ms), though its window closes", key, c.Layout, c.Value, c.PTTL)
		}
	}
}

// gofiber's limiter with its Redis storage keeps each client's fixed
// window as msgpack {currHits, prevHits, exp} under the client's key, SET
// again with the whole window's TTL on every request: the window's end is
// in the value, and the count starts again at 1 in the same key once it
// has passed. Its TTL is pushed back on every hit, but its window closes:
// watched for three of its 2 s windows, a hit every 100 ms, it is never
// extending, in its fixed window and its sliding window alike. (Read as
// opaque state here; with msgpack values read, as a counter of currHits.)
func TestReadsGofiberLimiter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		algo fiberlimiter.LimiterHandler
	}{{"fixed", fiberlimiter.FixedWindow{}}, {"sliding", fiberlimiter.SlidingWindow{}}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t)
			key := "fiber:" + tc.name + ":user42"
			app := fiber.New()
			app.Use(fiberlimiter.New(fiberlimiter.Config{
				Max: 5, Expiration: 2 * time.Second, LimiterMiddleware: tc.algo,
				KeyGenerator: func(*fiber.Ctx) string { return key },
				Storage:      fiberredis.NewFromConnection(s.Client(t)),
			}))
			app.Get("/", func(c *fiber.Ctx) error { return c.SendString("ok") })
			rules := &model.Rules{List: []model.Rule{{Pattern: "fiber:*", Limit: 5, Window: 2 * time.Second, ExpectTTL: true}}}
			f := watchLimiter(t, s, "fiber:*", rules)
			var mu sync.Mutex
			refused := 0
			every(t, 100*time.Millisecond, func(time.Time) {
				resp, err := app.Test(httptest.NewRequest("GET", "/", nil), -1)
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				if resp.StatusCode == fiber.StatusTooManyRequests {
					refused++
				}
			})
			first := map[string]time.Time{}
			f.until("three of its windows watched", func() string {
				neverExtending(t, f, first, key)
				c, ok := f.store.Get(key)
				switch {
				case !ok:
					return key + " not read yet"
				case c.Layout != model.LayoutOpaque && c.Layout != model.LayoutCounter:
					t.Fatalf("%s read as %s (%s)", key, c.Layout, c.Clue)
				case c.ObservedAt.Sub(first[key]) < 6500*time.Millisecond:
					return fmt.Sprintf("%s read for %s", key, c.ObservedAt.Sub(first[key]))
				}
				return ""
			})
			mu.Lock()
			defer mu.Unlock()
			if refused == 0 {
				t.Errorf("the limiter refused no request of 20 a window against a limit of 5: it did not limit")
			}
		})
	}
}

// mennanov/limiters could not be had here (the module proxy answers 403 for
// github.com/mennanov/limiters), so its Redis backends are shaped by hand
// below, each as its source writes it (fixedwindow.go, slidingwindow.go,
// tokenbucket.go; redisKey is "{prefix}key").

// mennanovKey is its redisKey.
func mennanovKey(prefix, key string) string { return fmt.Sprintf("{%s}%s", prefix, key) }

// mennanovFixedWindow is FixedWindow.Limit's write through
// FixedWindowRedis.Increment: the window is now truncated to the rate,
// named by its start in ns, INCR and PEXPIRE of the time left in it in
// one pipeline, so that its deadline is the window's end at every hit.
func mennanovFixedWindow(ctx context.Context, c redis.UniversalClient, prefix string, rate time.Duration, now time.Time) error {
	window := now.Truncate(rate)
	key := mennanovKey(prefix, strconv.FormatInt(window.UnixNano(), 10))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, key)
		p.PExpire(ctx, key, rate-now.Sub(window))
		return nil
	})
	return err
}

// mennanovSlidingWindow is SlidingWindow.Limit's write through
// SlidingWindowRedis.Increment: INCR of the current window's key, PEXPIRE
// of the time left in it plus a whole window (the next window reads it as
// its previous), and GET of the previous window's key.
func mennanovSlidingWindow(ctx context.Context, c redis.UniversalClient, prefix string, rate time.Duration, now time.Time) error {
	curr := now.Truncate(rate)
	key := mennanovKey(prefix, strconv.FormatInt(curr.UnixNano(), 10))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Incr(ctx, key)
		p.PExpire(ctx, key, rate-now.Sub(curr)+rate)
		p.Get(ctx, mennanovKey(prefix, strconv.FormatInt(curr.Add(-rate).UnixNano(), 10)))
		return nil
	})
	if err == redis.Nil {
		err = nil
	}
	return err
}

// mennanovBucket is TokenBucket.Take through TokenBucketRedis without
// raceCheck, as it was up to v1.13.0: the state in two strings, the last
// refill in ns ({prefix}last) and the tokens left ({prefix}available),
// MGET, refilled one token per refill, one taken, and both SET with the
// backend's TTL in MULTI/EXEC; a refused take writes nothing. v1.13.1 on
// keeps one JSON {prefix}state instead (mennanovBucketJSON).
func mennanovBucket(ctx context.Context, c redis.UniversalClient, prefix string, capacity int64, refill, ttl time.Duration, now time.Time, asJSON bool) (taken bool, err error) {
	var last, available int64
	if asJSON {
		raw, err := c.Get(ctx, mennanovKey(prefix, "state")).Result()
		if err != nil && err != redis.Nil {
			return false, err
		}
		if err == nil {
			var item struct {
				State struct{ Last, Available int64 } `json:"state"`
			}
			if err := json.Unmarshal([]byte(raw), &item); err != nil {
				return false, err
			}
			last, available = item.State.Last, item.State.Available
		}
	} else {
		vals, err := c.MGet(ctx, mennanovKey(prefix, "last"), mennanovKey(prefix, "available")).Result()
		if err != nil {
			return false, err
		}
		if vals[0] != nil && vals[1] != nil {
			last, _ = strconv.ParseInt(vals[0].(string), 10, 64)
			available, _ = strconv.ParseInt(vals[1].(string), 10, 64)
		}
	}
	if last == 0 && available == 0 {
		available = capacity // initially the bucket is full
	}
	ns := now.UnixNano()
	if add := (ns - last) / int64(refill); add > 0 {
		if add+available < capacity {
			available += add
			last = ns - (ns-last)%int64(refill)
		} else {
			available, last = capacity, ns
		}
	}
	if available < 1 {
		return false, nil
	}
	available--
	if asJSON {
		value, _ := json.Marshal(map[string]any{"state": map[string]int64{"Last": last, "Available": available}, "version": 1})
		return true, c.Set(ctx, mennanovKey(prefix, "state"), value, ttl).Err()
	}
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, mennanovKey(prefix, "last"), last, ttl)
		p.Set(ctx, mennanovKey(prefix, "available"), available, ttl)
		return nil
	})
	return true, err
}

// mennanov/limiters' fixed and sliding windows name each window by its
// start in ns and set its TTL to the window's end (plus a window for the
// sliding one's previous) at every hit: the deadline stays where it is, so
// neither is ever extending, watched for three of their 1 s windows. A
// past window's key whose TTL was lost is a problem (no-expiry here;
// `leak` once a name's nanosecond window start is read as a window).
func TestReadsMennanovWindows(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	const rate = time.Second
	rules := &model.Rules{List: []model.Rule{{Pattern: "{*", Limit: 5, Window: rate, ExpectTTL: true}}}
	f := watchLimiter(t, s, "{*", rules)
	every(t, 100*time.Millisecond, func(now time.Time) {
		if err := mennanovFixedWindow(ctx, c, "fw", rate, now); err != nil {
			t.Error(err)
		}
		if err := mennanovSlidingWindow(ctx, c, "sw", rate, now); err != nil {
			t.Error(err)
		}
	})
	start := time.Now()
	first := map[string]time.Time{}
	f.until("three windows of each watched", func() string {
		now := time.Now()
		var keys []string
		for _, prefix := range []string{"fw", "sw"} {
			for k := range 3 { // this window's key and the two before
				keys = append(keys, mennanovKey(prefix, strconv.FormatInt(now.Truncate(rate).Add(-time.Duration(k)*rate).UnixNano(), 10)))
			}
		}
		neverExtending(t, f, first, keys...)
		if now.Sub(start) < 3*rate+500*time.Millisecond {
			return "watched for " + now.Sub(start).String()
		}
		if cur, ok := f.store.Get(keys[0]); !ok || cur.Layout != model.LayoutCounter && cur.Layout != model.LayoutWindow {
			return fmt.Sprintf("%s read as %s", keys[0], cur.Layout)
		}
		return ""
	})

	// A past window whose PEXPIRE was lost.
	past := mennanovKey("fw", strconv.FormatInt(time.Now().Truncate(rate).Add(-time.Hour).UnixNano(), 10))
	s.Do(t, "SET", past, "4")
	f.until(past+" read", func() string {
		if k, ok := f.store.Get(past); !ok || !k.Status.Problem() {
			return fmt.Sprintf("%s is %s", past, k.Status)
		}
		return ""
	})
}

// mennanov/limiters' token bucket in two strings, as it wrote it up to
// v1.13.0: read as the bucket it is, {prefix}available the tokens left
// (over once drained, as the library refuses) and {prefix}last its clock,
// a timestamp, not a GCRA deadline; in the JSON state of v1.13.1 on, its
// key is no counter of hits either.
func TestReadsMennanovTokenBucket(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx := context.Background()
	c := s.Client(t)
	rules := &model.Rules{List: []model.Rule{{Pattern: "{*", Limit: 5, Window: 5 * time.Second, ExpectTTL: true}}}
	f := watchLimiter(t, s, "{*", rules)
	take := func(asJSON bool) bool {
		t.Helper()
		ok, err := mennanovBucket(ctx, c, "tb", 5, time.Minute, time.Minute, time.Now(), asJSON)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for range 2 {
		if !take(false) {
			t.Fatal("a full bucket of 5 refused a take")
		}
	}
	tokens, clock := mennanovKey("tb", "available"), mennanovKey("tb", "last")
	bucket := func(value float64, status model.Status) func() string {
		return func() string {
			k, ok := f.store.Get(tokens)
			l, _ := f.store.Get(clock)
			if n, _ := k.Value.Number(); !ok || k.Layout != model.LayoutBucket || n != value || k.Status != status || l.Layout != model.LayoutTimestamp {
				return fmt.Sprintf("%s is %s %v %s (%s); %s is %s (%s)", tokens, k.Layout, k.Value, k.Status, k.Clue, clock, l.Layout, l.Clue)
			}
			return ""
		}
	}
	f.until("3 tokens left", bucket(3, model.StatusOK))
	for take(false) {
	}
	f.until("the bucket drained", bucket(0, model.StatusOver))

	if !take(true) {
		t.Fatal("a new bucket in JSON refused a take")
	}
	state := mennanovKey("tb", "state")
	f.until(state+" read", func() string {
		k, ok := f.store.Get(state)
		if !ok || k.Status.Problem() || k.Status == model.StatusOver {
			return fmt.Sprintf("%s is %s %s (%s)", state, k.Layout, k.Status, k.Clue)
		}
		return ""
	})
}
