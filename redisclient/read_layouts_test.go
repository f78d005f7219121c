package redisclient_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// layoutRules are the rules the layout tests read under: a limit of 10
// hits per minute, as the limiters of the tests are set up, and a rule
// that reads one hash field as the counter.
var layoutRules = model.Rules{
	List: []model.Rule{
		{Pattern: "field:*", Limit: 10, Window: time.Minute, ExpectTTL: true, Field: "hits"},
		{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true},
	},
	Fallback: model.Rule{ExpectTTL: true},
}

// wantReading is what countertop must read of one key: its layout, its
// value ("null" when it has none, else as the JSON would write it),
// whether it has a TTL, and its status.
type wantReading struct {
	layout, value string
	ttl           bool
	status        string
}

// layoutKey is a key the tests write, as a limiter would, and what must be
// read of it.
type layoutKey struct {
	key   string
	write func(ctx context.Context, p redis.Pipeliner)
	want  wantReading
	big   bool // 100,000 entries: written to a single server only
}

// timeUnits are the units a log's entries are written in, with how a
// limiter writes a time in each: seconds with a fraction (a float, as
// time.time() gives), and whole ms, µs and ns.
var timeUnits = []struct {
	name   string
	format func(t time.Time) string
}{
	{"s", func(t time.Time) string { return strconv.FormatFloat(float64(t.UnixMicro())/1e6, 'f', 6, 64) }},
	{"ms", func(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }},
	{"us", func(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }},
	{"ns", func(t time.Time) string { return strconv.FormatInt(t.UnixNano(), 10) }},
}

// zlog writes a sorted-set log of hits at the given times, one member
// each (the time and its index, as sliding-window limiters add them).
func zlog(key string, format func(time.Time) string, times []time.Time, ttl time.Duration) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) {
		for i, at := range times {
			s := format(at)
			score, _ := strconv.ParseFloat(s, 64)
			p.ZAdd(ctx, key, redis.Z{Score: score, Member: s + "-" + strconv.Itoa(i)})
		}
		if ttl > 0 {
			p.PExpire(ctx, key, ttl)
		}
	}
}

// llog writes a list log: LPUSH of each hit's time, oldest first, so that
// the head is the newest.
func llog(key string, format func(time.Time) string, times []time.Time, ttl time.Duration) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) {
		for _, at := range times {
			p.LPush(ctx, key, format(at))
		}
		if ttl > 0 {
			p.PExpire(ctx, key, ttl)
		}
	}
}

// ago returns the times now - d for each d, oldest first.
func ago(now time.Time, ds ...time.Duration) []time.Time {
	ts := make([]time.Time, len(ds))
	for i, d := range ds {
		ts[i] = now.Add(-d)
	}
	slices.SortFunc(ts, func(a, b time.Time) int { return a.Compare(b) })
	return ts
}

// seconds returns n durations a second apart from from on.
func seconds(from time.Duration, n int) []time.Duration {
	ds := make([]time.Duration, n)
	for i := range ds {
		ds[i] = from + time.Duration(i)*time.Second
	}
	return ds
}

func setKey(key string, value any, ttl time.Duration) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) { p.Set(ctx, key, value, ttl) }
}

func hashKey(key string, ttl time.Duration, fields ...any) func(context.Context, redis.Pipeliner) {
	return func(ctx context.Context, p redis.Pipeliner) {
		p.HSet(ctx, key, fields...)
		if ttl > 0 {
			p.Expire(ctx, key, ttl)
		}
	}
}

// handMadeKeys are the shapes limiters of every ecosystem write, made by
// hand: logs in each time unit (sorted set and list, with and without a
// TTL, and two of 100,000 entries), buckets in a hash and in two strings,
// each shape of window name (a past one without a TTL among them), hash
// fields, and binary state.
func handMadeKeys(now time.Time) []layoutKey {
	const ttl = time.Minute
	// 3 hits inside the minute and 2 before it.
	mixed := ago(now, 5*time.Second, 10*time.Second, 20*time.Second, 90*time.Second, 200*time.Second)
	var keys []layoutKey
	for _, u := range timeUnits {
		keys = append(keys,
			layoutKey{key: "log:z:" + u.name + ":ttl", write: zlog("log:z:"+u.name+":ttl", u.format, mixed, ttl),
				want: wantReading{"log", "3", true, "ok"}},
			layoutKey{key: "log:z:" + u.name + ":forever", write: zlog("log:z:"+u.name+":forever", u.format, ago(now, seconds(time.Second, 12)...), 0),
				want: wantReading{"log", "12", false, "stuck"}},
			layoutKey{key: "log:l:" + u.name + ":ttl", write: llog("log:l:"+u.name+":ttl", u.format, mixed, ttl),
				want: wantReading{"log", "3", true, "ok"}},
			layoutKey{key: "log:l:" + u.name + ":forever", write: llog("log:l:"+u.name+":forever", u.format, ago(now, seconds(time.Second, 4)...), 0),
				want: wantReading{"log", "4", false, "no-expiry"}},
		)
	}
	// 100,000 hits: half in the last 30 seconds, half 100 to 130 seconds
	// ago, so that the count inside the minute does not move while the test
	// reads. A sorted set that large is counted with ZCOUNT; a list that
	// long is not counted, and shows every entry.
	bigTimes := make([]time.Duration, 100_000)
	for i := range bigTimes {
		from, j := time.Second, i
		if i >= len(bigTimes)/2 {
			from, j = 100*time.Second, i-len(bigTimes)/2
		}
		bigTimes[i] = from + time.Duration(j)*600*time.Microsecond
	}
	ms := timeUnits[1].format
	keys = append(keys,
		layoutKey{key: "log:z:big", write: zlog("log:z:big", ms, ago(now, bigTimes...), ttl), big: true,
			want: wantReading{"log", "50000", true, "over"}},
		layoutKey{key: "log:l:big", write: llog("log:l:big", ms, ago(now, bigTimes...), ttl), big: true,
			want: wantReading{"log", "100000", true, "over"}},
	)

	// Token buckets: a hash of tokens and a refill time (in ms, or in
	// seconds), and Spring Cloud Gateway's two strings.
	keys = append(keys,
		layoutKey{key: "bucket:h:refilled", write: hashKey("bucket:h:refilled", ttl, "tokens", 3, "refilledAt", now.UnixMilli()),
			want: wantReading{"bucket", "3", true, "ok"}},
		layoutKey{key: "bucket:h:empty", write: hashKey("bucket:h:empty", ttl, "tokens", 0, "last", now.Unix()),
			want: wantReading{"bucket", "0", true, "over"}},
		layoutKey{key: "bucket:h:forever", write: hashKey("bucket:h:forever", 0, "tokens", 5, "last", now.Unix()),
			want: wantReading{"bucket", "5", false, "no-expiry"}},
		layoutKey{key: "request_rate_limiter.{u42}.tokens", write: setKey("request_rate_limiter.{u42}.tokens", 4, ttl),
			want: wantReading{"bucket", "4", true, "ok"}},
		layoutKey{key: "request_rate_limiter.{u42}.timestamp", write: setKey("request_rate_limiter.{u42}.timestamp", now.Unix(), ttl),
			want: wantReading{"timestamp", "null", true, "ok"}},
	)
	// A hash of more fields than HGETALL is sent for: HMGET of the known
	// names finds the bucket among them.
	wide := []any{"tokens", 2, "refilled_at", now.UnixMilli()}
	for i := range model.MaxHashFields + 4 {
		wide = append(wide, fmt.Sprintf("meta%02d", i), "x")
	}
	keys = append(keys, layoutKey{key: "bucket:h:wide", write: hashKey("bucket:h:wide", ttl, wide...),
		want: wantReading{"bucket", "2", true, "warn"}})

	// Windows, each shape of name; two keys of one client make a sliding
	// window (the current and the previous), and a window left behind
	// without a TTL is a leak.
	minute := now.Unix() / 60
	keys = append(keys,
		layoutKey{key: fmt.Sprintf("win:floor:%d", minute), write: setKey(fmt.Sprintf("win:floor:%d", minute), 5, ttl),
			want: wantReading{"window", "5", true, "ok"}},
		layoutKey{key: fmt.Sprintf("win:floor:%d", minute-1), write: setKey(fmt.Sprintf("win:floor:%d", minute-1), 8, ttl),
			want: wantReading{"window", "8", true, "warn"}},
		layoutKey{key: fmt.Sprintf("win:epoch_%d", minute*60), write: setKey(fmt.Sprintf("win:epoch_%d", minute*60), 9, ttl),
			want: wantReading{"window", "9", true, "warn"}},
		layoutKey{key: "win:hour:" + now.UTC().Format("2006010215"), write: setKey("win:hour:"+now.UTC().Format("2006010215"), 2, time.Hour),
			want: wantReading{"window", "2", true, "ok"}},
		layoutKey{key: "win:day:" + now.UTC().Format("2006-01-02"), write: setKey("win:day:"+now.UTC().Format("2006-01-02"), 10, 24*time.Hour),
			want: wantReading{"window", "10", true, "over"}},
		layoutKey{key: fmt.Sprintf("win:past:%d", minute-10), write: setKey(fmt.Sprintf("win:past:%d", minute-10), 4, 0),
			want: wantReading{"window", "4", false, "leak"}},
		layoutKey{key: fmt.Sprintf("win:current:%d", minute), write: setKey(fmt.Sprintf("win:current:%d", minute), 4, 0),
			want: wantReading{"window", "4", false, "no-expiry"}},
	)

	// Hash fields (HINCRBY per field): the rule's field, one not there
	// yet, and with no rule the largest of integer fields.
	keys = append(keys,
		layoutKey{key: "field:a", write: hashKey("field:a", ttl, "hits", 7, "other", 100),
			want: wantReading{"counter", "7", true, "ok"}},
		layoutKey{key: "field:b", write: hashKey("field:b", ttl, "other", 1),
			want: wantReading{"counter", "0", true, "ok"}},
		layoutKey{key: "hf:c", write: hashKey("hf:c", 0, "login", 3, "api", 11),
			want: wantReading{"counter", "11", false, "stuck"}},
	)

	// Binary state: shown by its size, and longer than what is read of it.
	java := "\xac\xed\x00\x05sr\x00\x1aio.github.bucket4j.Bucket"
	keys = append(keys,
		layoutKey{key: "opaque:java", write: setKey("opaque:java", java, ttl),
			want: wantReading{"opaque", "null", true, "ok"}},
		layoutKey{key: "opaque:long", write: setKey("opaque:long", java+strings.Repeat("\x00", model.MaxRaw), 0),
			want: wantReading{"opaque", "null", false, "no-expiry"}},
	)
	return keys
}

// writeKeys writes each key as its limiter would, in pipelines.
func writeKeys(t *testing.T, rdb redis.Cmdable, keys []layoutKey) {
	t.Helper()
	ctx := context.Background()
	for _, k := range keys {
		if _, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { k.write(ctx, p); return nil }); err != nil {
			t.Fatalf("writing %s: %v", k.key, err)
		}
	}
}

// readBoth reads keys with c as the dashboard does (Fetch, which polling
// and events use) and as a snapshot does (Snapshot of "*"), checks that
// both read each key alike, and returns the counters, by key, as the
// Store classifies them.
func readBoth(t *testing.T, c *redisclient.Client, rules *model.Rules, keys []string) map[string]model.Counter {
	t.Helper()
	fetched, err := c.Fetch(context.Background(), keys)
	if err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	snap := map[string]model.Observation{}
	for _, o := range mustSnapshot(t, c, []string{"*"}, 0) {
		snap[o.Key] = o
	}
	counters := map[string]model.Counter{}
	for _, o := range fetched {
		s, ok := snap[o.Key]
		if !ok {
			t.Errorf("%s: the snapshot did not read it", o.Key)
		} else if a, b := comparable(o), comparable(s); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: the dashboard and the snapshot read it apart:\nFetch    %+v\nSnapshot %+v", o.Key, a, b)
		}
		counters[o.Key] = model.NewCounter(&o, rules)
	}
	return counters
}

// comparable is o without what differs between two reads of an unchanged
// key: when it was read and how much of its TTL was left; and with NaN,
// which equals nothing, as a number that does.
func comparable(o model.Observation) model.Observation {
	o.At = time.Time{}
	o.PTTL = min(o.PTTL, 0)
	for _, f := range []*float64{&o.Newest, &o.Oldest, &o.InWindowFrom} {
		if math.IsNaN(*f) {
			*f = -42
		}
	}
	return o
}

// checkReadings checks each key's counter against what it must read.
func checkReadings(t *testing.T, got map[string]model.Counter, keys []layoutKey) {
	t.Helper()
	for _, k := range keys {
		c, ok := got[k.key]
		if !ok {
			t.Errorf("%s: not read", k.key)
			continue
		}
		checkReading(t, k.key, c, k.want)
	}
}

func checkReading(t *testing.T, key string, c model.Counter, want wantReading) {
	t.Helper()
	value := "null"
	if n, ok := c.Value.Number(); ok {
		value = strconv.FormatFloat(n, 'f', -1, 64)
	}
	if c.Layout.String() != want.layout || value != want.value || c.HasTTL() != want.ttl || c.Status.String() != want.status {
		t.Errorf("%s: read as layout %s, value %s, TTL %v, status %s\nwant layout %s, value %s, TTL %v, status %s\n(clue: %s)",
			model.Printable(key), c.Layout, value, c.HasTTL(), c.Status, want.layout, want.value, want.ttl, want.status, c.Clue)
	}
}

// connectWithRules connects to url with rules.
func connectWithRules(t *testing.T, url, password string, rules *model.Rules) *redisclient.Client {
	t.Helper()
	return connectURL(t, redisclient.Options{URL: url, Password: password, Rules: rules})
}

// keyNames returns the names of keys.
func keyNames(keys []layoutKey) []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.key
	}
	return names
}

func TestReadsEachLayout(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	keys := handMadeKeys(time.Now())
	writeKeys(t, s.Client(t), keys)
	c := connectWithRules(t, s.URL(), s.Password, &layoutRules)
	got := readBoth(t, c, &layoutRules, keyNames(keys))
	checkReadings(t, got, keys)

	if c := got["opaque:long"]; !c.RawCut || len(c.Raw) != model.MaxRaw || !strings.Contains(c.Clue, strconv.Itoa(model.MaxRaw)+" bytes or more") {
		t.Errorf("opaque:long: %d bytes read, cut %v, clue %q; want the first %d, and the clue to say so", len(c.Raw), c.RawCut, c.Clue, model.MaxRaw)
	}
	if c := got["log:l:big"]; !strings.Contains(c.Clue, "too many to count") {
		t.Errorf("log:l:big: clue %q; want it to say its entries were not counted inside the window", c.Clue)
	}
	if c := got["field:a"]; c.Field != "hits" {
		t.Errorf("field:a: read field %q; want the rule's, hits", c.Field)
	}
	if c := got["hf:c"]; c.Field != "api" || !c.Guess {
		t.Errorf("hf:c: read field %q (guess %v); want the largest, api, as a guess", c.Field, c.Guess)
	}
}

// Without a window, no log is counted inside one: every entry counts, and
// the clue says why.
func TestReadsALogWithoutAWindow(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	now := time.Now()
	write := zlog("log:z", timeUnits[1].format, ago(now, 5*time.Second, 90*time.Second, time.Hour), time.Minute)
	writeKeys(t, s.Client(t), []layoutKey{{key: "log:z", write: write}})
	rules := model.Rules{Fallback: model.Rule{ExpectTTL: true, Limit: 10}}
	c := connectWithRules(t, s.URL(), s.Password, &rules)
	got := readBoth(t, c, &rules, []string{"log:z"})
	checkReading(t, "log:z", got["log:z"], wantReading{"log", "3", true, "ok"})
	if clue := got["log:z"].Clue; !strings.Contains(clue, "no window known") {
		t.Errorf("clue %q; want it to say no window was known", clue)
	}
}

// Each layout costs a few commands per key, whatever the size of the key:
// a log of 100,000 entries costs what one of 3 does, and no command reads
// more than a bounded part of it.
func TestReadCostsBoundedCommandsPerKey(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	keys := handMadeKeys(time.Now())
	writeKeys(t, s.Client(t), keys)
	c := connectWithRules(t, s.URL(), s.Password, &layoutRules)
	// The connection's own set-up, and what the client learns once of the
	// server: whether it knows HPTTL (a server that does not is asked once,
	// and a wide hash read before it said so would be listed once).
	if _, err := c.Fetch(context.Background(), []string{"warm-up", "bucket:h:refilled"}); err != nil {
		t.Fatal(err)
	}
	notString := map[string]int64{"getrange": 1, "pttl": 1, "type": 1}
	with := func(more ...map[string]int64) map[string]int64 {
		m := maps.Clone(notString)
		for _, more := range more {
			maps.Copy(m, more)
		}
		return m
	}
	// A server with TTLs per hash field is asked for the fields' TTLs too
	// (Redis 7.4 and later); one without is not, once it has said so.
	// A hash too large to read whole is listed there, a page of HSCAN
	// (all its fields, which fit in one), to see whether its fields do.
	hashFields, wideFields := map[string]int64{}, map[string]int64{}
	if s.Kind(t).FieldTTL {
		hashFields["hpttl"] = 1
		wideFields["hpttl"], wideFields["hscan"] = 1, 1
	}
	for key, want := range map[string]map[string]int64{
		"log:z:big":                         with(map[string]int64{"zcard": 1, "zrange": 2, "zcount": 1}),
		"log:z:ms:ttl":                      with(map[string]int64{"zcard": 1, "zrange": 2, "zcount": 1}),
		"log:l:big":                         with(map[string]int64{"llen": 1, "lindex": 2}),
		"log:l:ms:ttl":                      with(map[string]int64{"llen": 1, "lindex": 2, "lrange": 1}),
		"bucket:h:refilled":                 with(map[string]int64{"hlen": 1, "hgetall": 1}, hashFields),
		"bucket:h:wide":                     with(map[string]int64{"hlen": 1, "hmget": 1}, wideFields),
		"request_rate_limiter.{u42}.tokens": {"getrange": 1, "pttl": 1},
		"win:floor:1":                       {"getrange": 1, "pttl": 1}, // missing, as a key deleted since SCAN
	} {
		t.Run(key, func(t *testing.T) {
			before := s.CommandCalls(t)
			if _, err := c.Fetch(context.Background(), []string{key}); err != nil {
				t.Fatal(err)
			}
			after := s.CommandCalls(t)
			got := map[string]int64{}
			for cmd, n := range after {
				if d := n - before[cmd]; d > 0 && cmd != "info" {
					got[cmd] = d
				}
			}
			if !maps.Equal(got, want) {
				t.Errorf("%s cost %v; want %v", key, got, want)
			}
		})
	}
}

// A cluster's keys read as a single server's: the reads of each master's
// keys go to it, in the same rounds.
func TestReadsEachLayoutInACluster(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0)
	keys := slices.DeleteFunc(handMadeKeys(time.Now()), func(k layoutKey) bool { return k.big })
	cc := rc.Client(t)
	writeKeys(t, cc, keys)
	c := connectURL(t, redisclient.Options{URL: rc.URL(), Cluster: true, Rules: &layoutRules})
	checkReadings(t, readBoth(t, c, &layoutRules, keyNames(keys)), keys)
}
