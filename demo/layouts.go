package demo

import (
	"context"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/countertop/countertop/model"
)

// The limits of the demo's clients that store more than a count.
const (
	gcraLimit     = 10
	gcraPeriod    = 10 * time.Second
	logLimit      = 30
	logWindow     = 10 * time.Second
	bucketSize    = 20
	bucketRefill  = 2 // tokens per second
	bucketWindow  = 10 * time.Second
	windowLimit   = 50
	windowLength  = time.Minute
	leakedWindows = 30 // how many windows ago the leaked key's window was
	quotaLimit    = 60
	quotaWindow   = time.Minute
	quotaField    = "requests" // the field the rule reads; "bytes" beside it is larger
	blockLength   = 5 * time.Minute
	opaqueTTL     = time.Minute
	bruteLimit    = 5 // sign-in attempts a minute before the block flag is set
	bruteWindow   = time.Minute
	bruteBlock    = 2 * time.Minute
	stateLimit    = 30 // hits a minute of the clients whose state is JSON or msgpack
	stateWindow   = time.Minute
	fieldsLimit   = 20 // hits of one endpoint a window, each endpoint a field with a TTL of its own
	fieldsWindow  = 30 * time.Second
)

// fieldsEndpoints are the fields the per-endpoint limiter counts in, one
// after the other; lostField is the one whose HEXPIRE was lost.
var fieldsEndpoints = []string{"search", "upload", "export"}

const lostField = "login"

// gcraEpoch is where go-redis/redis_rate counts its arrival times from.
var gcraEpoch = time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)

// layoutRules are the rules of the clients below, each its own layout.
func layoutRules() []model.Rule {
	return []model.Rule{
		{Pattern: "ratelimit:gcra:*", Limit: gcraLimit, Window: gcraPeriod, ExpectTTL: true},
		{Pattern: "ratelimit:log:*", Limit: logLimit, Window: logWindow, ExpectTTL: true},
		{Pattern: "ratelimit:list:*", Limit: logLimit, Window: logWindow, ExpectTTL: true},
		{Pattern: "ratelimit:bucket:*", Limit: bucketSize, Window: bucketWindow, ExpectTTL: true},
		{Pattern: "ratelimit:win:*", Limit: windowLimit, Window: windowLength, ExpectTTL: true},
		{Pattern: "ratelimit:tb:*", Limit: bucketSize, Window: bucketWindow, ExpectTTL: true},
		{Pattern: "ratelimit:quota:*", Limit: quotaLimit, Window: quotaWindow, ExpectTTL: true, Field: quotaField},
		{Pattern: "ratelimit:block:*", Window: blockLength, ExpectTTL: true},
		{Pattern: "ratelimit:brute:*", Limit: bruteLimit, Window: bruteWindow, ExpectTTL: true},
		{Pattern: "ratelimit:state:*", Limit: stateLimit, Window: stateWindow, ExpectTTL: true},
		{Pattern: "ratelimit:fields:*", Limit: fieldsLimit, Window: fieldsWindow, ExpectTTL: true, FieldTTLs: true},
	}
}

// A limiter is one simulated client of a limiter library that stores more
// than a count: hit queues the writes the library makes for one request
// at now, the library's own state kept here so nothing is read back.
type limiter struct {
	key  string
	rate float64 // requests per second
	// calm is, for a GCRA key, how far ahead of now its arrival time may
	// get before the client slows down to stay under its limit (0: never).
	calm time.Duration
	hit  func(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time)

	tat    time.Time // gcra: the theoretical arrival time
	tokens float64   // bucket: tokens left
	filled time.Time // bucket: when tokens was last refilled
	seq    int       // log: makes each member unique; the count of a window kept in one value
	until  time.Time // brute: when its block ends; state: when its window ends
}

// limiters is each layout's simulated clients.
func limiters() []*limiter {
	return []*limiter{
		{key: "ratelimit:gcra:acme", rate: 4, calm: 5 * time.Second, hit: gcraHit}, // busy, never refused
		{key: "ratelimit:gcra:scraper", rate: 30, hit: gcraHit},                    // hammers it, refused: over
		{key: "ratelimit:log:acme", rate: 1.5, hit: zsetLogHit},                    // a sorted set, PEXPIRE per hit
		{key: "ratelimit:list:acme", rate: 1, hit: listLogHit},                     // LPUSH and LTRIM
		{key: "ratelimit:bucket:acme", rate: 1.5, hit: bucketHit},                  // tokens + refilledAt
		{key: "ratelimit:win:acme", rate: 0.5, hit: windowHit},                     // name ends in floor(now / 60s)
		{key: "ratelimit:tb:acme", rate: 1, hit: stringBucketHit},                  // ….tokens and ….timestamp
		{key: "ratelimit:quota:acme", rate: 0.5, hit: fieldHit},                    // HINCRBY of a field per hit
		{key: "ratelimit:block:198.51.100.66:until", rate: 0.05, hit: blockHit},    // when its block ends
		{key: "ratelimit:bucket4j:acme", rate: 0.5, hit: opaqueHit},                // a Java-serialised bucket
		{key: "ratelimit:brute:203.0.113.7", rate: 3, hit: bruteHit},               // INCR, then a …:blocked flag
		{key: "ratelimit:state:json:acme", rate: 0.3, hit: jsonHit},                // {"count":…} in one string
		{key: "ratelimit:state:fiber:203.0.113.9", rate: 0.3, hit: fiberHit},       // gofiber's msgpack state
		{key: "ratelimit:state:nswin:{acme}", rate: 0.3, hit: nsWindowHit},         // name ends in its start in ns
		{key: "ratelimit:fields:acme", rate: 1, hit: fieldsHit},                    // a field per endpoint, each its own TTL
	}
}

// gcraHit is go-redis/redis_rate's write: the arrival time in seconds since
// 2017 with a fraction, its TTL the time until it frees; a refused request
// writes nothing.
func gcraHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	emission := gcraPeriod / gcraLimit
	tat := l.tat
	if tat.Before(now) {
		tat = now
	}
	if tat.Add(emission).Sub(now) > gcraPeriod || l.calm > 0 && tat.Sub(now) >= l.calm {
		return // refused, or a calm client holding back
	}
	l.tat = tat.Add(emission)
	secs := l.tat.Sub(gcraEpoch).Seconds()
	pipe.Set(ctx, l.key, strconv.FormatFloat(secs, 'f', -1, 64), l.tat.Sub(now))
}

// zsetLogHit is a sorted-set log: one member per hit scored in ms, the
// hits older than the window removed, and PEXPIRE the window on each hit.
func zsetLogHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	ms := now.UnixMilli()
	l.seq++
	pipe.ZAdd(ctx, l.key, redis.Z{Score: float64(ms), Member: strconv.FormatInt(ms, 10) + "-" + strconv.Itoa(l.seq)})
	pipe.ZRemRangeByScore(ctx, l.key, "-inf", "("+strconv.FormatInt(ms-logWindow.Milliseconds(), 10))
	pipe.PExpire(ctx, l.key, logWindow)
}

// listLogHit is a list log: LPUSH the time in ms, LTRIM to the limit.
func listLogHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	pipe.LPush(ctx, l.key, now.UnixMilli())
	pipe.LTrim(ctx, l.key, 0, logLimit-1)
	pipe.PExpire(ctx, l.key, logWindow)
}

// bucketHit is a token bucket in a hash: refilled for the time since its
// last request, less one token when it has one.
func bucketHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	if l.filled.IsZero() {
		l.tokens, l.filled = bucketSize, now
	}
	l.tokens = math.Min(bucketSize, l.tokens+now.Sub(l.filled).Seconds()*bucketRefill)
	l.filled = now
	if l.tokens >= 1 {
		l.tokens--
	}
	pipe.HSet(ctx, l.key, "tokens", strconv.FormatFloat(l.tokens, 'f', 3, 64), "refilledAt", now.UnixMilli())
	pipe.PExpire(ctx, l.key, bucketWindow)
}

// stringBucketHit is a token bucket in two strings, as Spring Cloud
// Gateway's script writes it: `….tokens` and `….timestamp` (seconds), both
// expiring after twice the time the bucket takes to fill.
func stringBucketHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	if l.filled.IsZero() {
		l.tokens, l.filled = bucketSize, now
	}
	l.tokens = math.Min(bucketSize, l.tokens+math.Floor(now.Sub(l.filled).Seconds()*bucketRefill))
	l.filled = now
	if l.tokens >= 1 {
		l.tokens--
	}
	ttl := 2 * time.Duration(bucketSize/bucketRefill) * time.Second
	pipe.Set(ctx, l.key+".tokens", strconv.FormatFloat(l.tokens, 'f', -1, 64), ttl)
	pipe.Set(ctx, l.key+".timestamp", now.Unix(), ttl)
}

// fieldHit counts in a field of a hash (HINCRBY), the hash expiring with
// the window (EXPIRE NX); a second field, larger, counts bytes.
func fieldHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, _ time.Time) {
	pipe.HIncrBy(ctx, l.key, quotaField, 1)
	pipe.HIncrBy(ctx, l.key, "bytes", 1500)
	pipe.ExpireNX(ctx, l.key, quotaWindow)
}

// fieldsHit counts a request in its endpoint's field (HINCRBY) and gives
// that field its window if it has none (HEXPIRE ... NX FIELDS 1), the
// fields taking turns: each field is a window of its own, and the hash
// lives as long as its fields do.
func fieldsHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, _ time.Time) {
	field := fieldsEndpoints[l.seq%len(fieldsEndpoints)]
	l.seq++
	pipe.HIncrBy(ctx, l.key, field, 1)
	pipe.Do(ctx, "HEXPIRE", l.key, int64(fieldsWindow/time.Second), "NX", "FIELDS", 1, field)
}

// blockHit blocks an address: the key holds the epoch second its block
// ends, and expires then.
func blockHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	pipe.Set(ctx, l.key, now.Add(blockLength).Unix(), blockLength)
}

// bruteHit counts sign-in attempts (INCR, EXPIRE NX) and, past the limit,
// sets the flag that refuses the client for bruteBlock: `….:blocked` = 1
// with its own TTL, which outlives the count's. A refused attempt writes
// nothing.
func bruteHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	if now.Before(l.until) {
		return
	}
	if !now.Before(l.filled.Add(bruteWindow)) {
		l.filled, l.seq = now, 0
	}
	l.seq++
	pipe.Incr(ctx, l.key)
	pipe.ExpireNX(ctx, l.key, bruteWindow)
	if l.seq > bruteLimit {
		l.until = now.Add(bruteBlock)
		pipe.Set(ctx, l.key+":blocked", 1, bruteBlock)
	}
}

// countInWindow counts a hit of a client that keeps its window's count in
// one value, and returns the count and how long its window has left.
func countInWindow(l *limiter, now time.Time) (int, time.Duration) {
	if !now.Before(l.until) {
		l.until, l.seq = now.Add(stateWindow), 0
	}
	l.seq++
	return l.seq, l.until.Sub(now)
}

// jsonHit keeps a window's count in a JSON object, as Node limiters do,
// expiring with the window.
func jsonHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	n, left := countInWindow(l, now)
	state := `{"count":` + strconv.Itoa(n) + `,"firstRequest":` + strconv.FormatInt(l.until.Add(-stateWindow).UnixMilli(), 10) +
		`,"lastRequest":` + strconv.FormatInt(now.UnixMilli(), 10) + `}`
	pipe.Set(ctx, l.key, state, left)
}

// fiberHit is gofiber's limiter (fixed window) with its Redis storage: a
// msgpack map of currHits, prevHits and exp (seconds), expiring with the
// window.
func fiberHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	n, left := countInWindow(l, now)
	state, err := msgpack.Marshal(struct {
		CurrHits int    `msgpack:"currHits"`
		PrevHits int    `msgpack:"prevHits"`
		Exp      uint64 `msgpack:"exp"`
	}{n, 0, uint64(l.until.Unix())})
	if err == nil {
		pipe.Set(ctx, l.key, state, left)
	}
}

// nsWindowHit is a fixed window named by its start in nanoseconds after a
// hash tag, as mennanov/limiters names them, counted with INCR and
// EXPIRE NX.
func nsWindowHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	key := l.key + strconv.FormatInt(now.Truncate(stateWindow).UnixNano(), 10)
	pipe.Incr(ctx, key)
	pipe.ExpireNX(ctx, key, stateWindow)
}

// opaqueHit writes a bucket as a Java library serialises it: binary state
// countertop can only show by its size.
func opaqueHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	l.seq++
	state := "\xac\xed\x00\x05sr\x00\x1eio.github.bucket4j.BucketState\x00\x00\x00\x01" + strconv.Itoa(l.seq%7) + "\x00" + strconv.FormatInt(now.UnixNano(), 16)
	pipe.Set(ctx, l.key, state, opaqueTTL)
}

// windowHit is a fixed window named by its number, floor(now / 60s),
// counted with INCR and EXPIRE NX.
func windowHit(ctx context.Context, pipe redis.Pipeliner, l *limiter, now time.Time) {
	key := windowKey(l.key, now, 0)
	pipe.Incr(ctx, key)
	pipe.ExpireNX(ctx, key, windowLength)
}

// windowKey is base's key for the window ago windows before now's.
func windowKey(base string, now time.Time, ago int64) string {
	return base + ":" + strconv.FormatInt(now.Unix()/int64(windowLength/time.Second)-ago, 10)
}

// seedLayouts writes the keys of other layouts the dashboard opens on: a
// leaked past window and a log without a TTL, which no client writes again.
func seedLayouts(ctx context.Context, pipe redis.Pipeliner, now time.Time) {
	pipe.Set(ctx, windowKey("ratelimit:win:legacy", now, leakedWindows), 12, 0)
	var hits []redis.Z
	for i := range 8 {
		ms := now.Add(-time.Duration(i) * time.Second).UnixMilli()
		hits = append(hits, redis.Z{Score: float64(ms), Member: "h" + strconv.Itoa(i)})
	}
	pipe.ZAdd(ctx, "ratelimit:log:forgotten", hits...)
	pipe.Set(ctx, "ratelimit:brute:198.51.100.23:blocked", 1, 0) // its EXPIRE was lost: blocked for good
	// The per-endpoint limiter's client died between HINCRBY and HEXPIRE
	// once: its login field never resets, and keeps the whole hash alive.
	pipe.HSet(ctx, "ratelimit:fields:acme", lostField, 7)
}
