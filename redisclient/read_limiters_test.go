package redisclient_test

import (
	"context"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/throttled/throttled/v2"
	goredisstore "github.com/throttled/throttled/v2/store/goredisstore.v9"
	"github.com/ulule/limiter/v3"
	limiterredis "github.com/ulule/limiter/v3/drivers/store/redis"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
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
