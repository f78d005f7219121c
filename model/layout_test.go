package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"
)

// now is when the layout tests read their keys: 1796160100 s, so that
// floor(now / 60 s) is 29936001 and go-redis/redis_rate's
// 312931303.11663097 (seconds since 2017-01-01) is 3.1 s ahead.
var now = time.Date(2026, 12, 1, 21, 21, 40, 0, time.UTC)

const ttl = 30_000 // a TTL in ms, for keys that have one

// str is a string key as redisclient reads it.
func str(key, raw string) Observation {
	return Observation{Key: key, Type: "string", Raw: raw, PTTL: ttl, At: now, Newest: math.NaN(), Oldest: math.NaN(), InWindow: -1}
}

// hash is a hash read whole (HGETALL), fields given as name, value, ...
func hash(key string, nv ...string) Observation {
	o := Observation{Key: key, Type: "hash", PTTL: ttl, At: now, Newest: math.NaN(), Oldest: math.NaN(), InWindow: -1}
	for i := 0; i+1 < len(nv); i += 2 {
		o.Fields = append(o.Fields, Field{Name: nv[i], Value: nv[i+1]})
	}
	o.Len = int64(len(o.Fields))
	return o
}

// logOf is a sorted set or list of n entries from oldest to newest, of
// which inWindow (-1: not counted) are inside the window.
func logOf(typ, key string, n int64, oldest, newest float64, inWindow int64) Observation {
	return Observation{Key: key, Type: typ, PTTL: ttl, At: now, Len: n, Newest: newest, Oldest: oldest, InWindow: inWindow}
}

func secs(s float64) time.Time { return unixUTC(int64(s * 1e9)) }

// layoutCase is a key of one shape, the rule it is read under, and what
// Read should make of it at now.
type layoutCase struct {
	name   string
	o      Observation
	rule   Rule
	layout Layout
	value  string    // the Value as FormatFloat writes it; "" for none
	at     time.Time // Reading.At (to the microsecond)
	field  string
	guess  bool
	clue   string // part of the clue
	window *WindowName
}

// layoutCases are the shapes the limiters write, and their look-alikes.
func layoutCases() []layoutCase {
	limit := Rule{Pattern: "*", Limit: 10, ExpectTTL: true}
	minute := Rule{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}
	field := Rule{Pattern: "*", Limit: 10, ExpectTTL: true, Field: "count"}
	javaBlob := "\xac\xed\x00\x05sr\x00\x27io.github.bucket4j.grid.GridBucketState\x00\x00\x00\x00\x00\x00\x00\x01\x02\x00"
	long := strings.Repeat("x", MaxRaw-1) + "é" // cut in the middle of its last character
	many := hash("rl:big")
	many.Len = 1000 // HMGET of the known names found none of them
	return []layoutCase{
		// The libraries' own shapes.
		{name: "go-redis/redis_rate v10: seconds since 2017-01-01 with a fraction",
			o: str("rate:user42", "312931303.11663097"), rule: limit, layout: LayoutGCRA,
			at: secs(1796160103.11663097), guess: true, clue: "go-redis/redis_rate"},
		{name: "throttled/throttled v2: nanoseconds since 1970",
			o: str("throttled:user42", "1796160103117100000"), rule: limit, layout: LayoutGCRA,
			at: unixUTC(1796160103117100000), guess: true, clue: "throttled/throttled"},
		{name: "ulule/limiter v3: a plain integer with a TTL",
			o: str("limiter:127.0.0.1", "7"), rule: limit, layout: LayoutCounter, value: "7", clue: "INCR"},
		{name: "a float counter (INCRBYFLOAT)", o: str("rl:cost", "2.5"), rule: limit, layout: LayoutCounter, value: "2.5"},
		{name: "a large count that is no time near now", o: str("rl:bytes", "5000000000"), rule: limit, layout: LayoutCounter, value: "5e+09"},

		// Windows in the name.
		{name: "floor(now / 60 s), no rule window: the current minute",
			o: str("rl:user42:29936001", "3"), rule: limit, layout: LayoutWindow, value: "3", guess: true, clue: "floor(time / window)",
			window: &WindowName{Identity: "rl:user42", Part: "29936001", Start: secs(1796160060), Length: time.Minute}},
		{name: "floor(now / 60 s), the rule's window: a past minute",
			o: str("rl:user42:29935000", "3"), rule: minute, layout: LayoutWindow, value: "3", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "29935000", Start: secs(29935000 * 60), Length: time.Minute, Past: true}},
		{name: "the previous minute is still read by a sliding window",
			o: str("rl:user42:29936000", "3"), rule: minute, layout: LayoutWindow, value: "3", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "29936000", Start: secs(29936000 * 60), Length: time.Minute}},
		{name: "an old minute with no rule window is more likely an id",
			o: str("rl:user42:29935000", "3"), rule: limit, layout: LayoutCounter, value: "3"},
		{name: "floor(now / 1 h)",
			o: str("rl-user42-498933", "3"), rule: limit, layout: LayoutWindow, value: "3", guess: true,
			window: &WindowName{Identity: "rl-user42", Part: "498933", Start: secs(498933 * 3600), Length: time.Hour}},
		{name: "floor(now / 1 day)",
			o: str("rl.user42.20788", "3"), rule: limit, layout: LayoutWindow, value: "3", guess: true,
			window: &WindowName{Identity: "rl.user42", Part: "20788", Start: secs(20788 * 86400), Length: 24 * time.Hour}},
		{name: "a window's start in epoch seconds, a year ago: past",
			o: str("rl:user42_1764620400", "9"), rule: limit, layout: LayoutWindow, value: "9", guess: true, clue: "epoch",
			window: &WindowName{Identity: "rl:user42", Part: "1764620400", Start: secs(1764620400), Length: 10 * time.Minute, Past: true}},
		{name: "a window's start in epoch seconds, this minute",
			o: str("rl:user42_1796160060", "9"), rule: limit, layout: LayoutWindow, value: "9", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "1796160060", Start: secs(1796160060), Length: time.Minute}},
		{name: "a window's start in epoch ms, with the rule's window",
			o: str("rl:user42|1796160060000", "9"), rule: minute, layout: LayoutWindow, value: "9", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "1796160060000", Start: secs(1796160060), Length: time.Minute}},
		{name: "an hour stamp, this hour",
			o: str("rl:user42:2026120121", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true, clue: "stamp",
			window: &WindowName{Identity: "rl:user42", Part: "2026120121", Start: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), Length: time.Hour}},
		{name: "an hour stamp seven hours back may be local time: not past",
			o: str("rl:user42:2026120114", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "2026120114", Start: time.Date(2026, 12, 1, 14, 0, 0, 0, time.UTC), Length: time.Hour}},
		{name: "an hour stamp of yesterday morning: past in any time zone",
			o: str("rl:user42:2026113008", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "2026113008", Start: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC), Length: time.Hour, Past: true}},
		{name: "a minute stamp",
			o: str("rl:user42:202612012121", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "202612012121", Start: time.Date(2026, 12, 1, 21, 21, 0, 0, time.UTC), Length: time.Minute}},
		{name: "a date stamp, today",
			o: str("rl:user42:20261201", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "20261201", Start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Length: 24 * time.Hour}},
		{name: "a date stamp, last week: past",
			o: str("rl:user42:20261125", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "20261125", Start: time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC), Length: 24 * time.Hour, Past: true}},
		{name: "a dashed date",
			o: str("rl:user42:2026-12-01", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "2026-12-01", Start: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Length: 24 * time.Hour}},
		{name: "a dashed hour",
			o: str("rl:user42:2026-12-01T21", "4"), rule: limit, layout: LayoutWindow, value: "4", guess: true,
			window: &WindowName{Identity: "rl:user42", Part: "2026-12-01T21", Start: time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC), Length: time.Hour}},
		{name: "no date: February 30", o: str("rl:user42:20260230", "4"), rule: limit, layout: LayoutCounter, value: "4"},
		{name: "digits with no separator are part of the name", o: str("rl:user29936001", "4"), rule: limit, layout: LayoutCounter, value: "4"},

		// Logs: a sorted set or list of hit times, in each unit.
		{name: "a sorted-set log in seconds, counted inside the window",
			o: logOf("zset", "log:u42", 12, 1796160050.25, 1796160099.5, 5), rule: minute, layout: LayoutLog, value: "5", guess: true, clue: "seconds since 1970"},
		{name: "a sorted-set log in ms",
			o: logOf("zset", "log:u42", 12, 1796160050250, 1796160099500, 5), rule: minute, layout: LayoutLog, value: "5", guess: true, clue: "milliseconds"},
		{name: "a sorted-set log in µs",
			o: logOf("zset", "log:u42", 12, 1796160050250000, 1796160099500000, 5), rule: minute, layout: LayoutLog, value: "5", guess: true, clue: "microseconds"},
		{name: "a sorted-set log in ns",
			o: logOf("zset", "log:u42", 12, 1796160050250000000, 1796160099500000000, 5), rule: minute, layout: LayoutLog, value: "5", guess: true, clue: "nanoseconds"},
		{name: "a list log (LPUSH: the head is the newest), in ms",
			o: logOf("list", "log:u42", 8, 1796160099500, 1796160010000, 6), rule: minute, layout: LayoutLog, value: "6", guess: true, clue: "LINDEX"},
		{name: "a list log in µs",
			o: logOf("list", "log:u42", 8, 1796160099500000, 1796160010000000, 6), rule: minute, layout: LayoutLog, value: "6", guess: true, clue: "microseconds"},
		{name: "a list log in ns",
			o: logOf("list", "log:u42", 8, 1796160099500000000, 1796160010000000000, 6), rule: minute, layout: LayoutLog, value: "6", guess: true, clue: "nanoseconds"},
		{name: "a list log (RPUSH: the head is the oldest), in seconds",
			o: logOf("list", "log:u42", 8, 1796160010, 1796160099, 6), rule: minute, layout: LayoutLog, value: "6", guess: true},
		{name: "a log with no window known counts every entry",
			o: logOf("zset", "log:u42", 12, 1796160050.25, 1796160099.5, -1), rule: limit, layout: LayoutLog, value: "12", guess: true, clue: "no window known"},
		{name: "a long list's hits were not counted: every entry counts",
			o: logOf("list", "log:u42", 5000, 1796160010, 1796160099, -1), rule: minute, layout: LayoutLog, value: "5000", guess: true, clue: "too many"},
		{name: "a log nobody wrote to for a month is still a log",
			o: logOf("zset", "log:u42", 3, 1793500000, 1793500010, 0), rule: minute, layout: LayoutLog, value: "0", guess: true},
		{name: "a leaderboard's scores are no times", o: logOf("zset", "board", 40, 20, 1500, -1), rule: limit, layout: LayoutOther},
		{name: "seconds and ms mixed are no log", o: logOf("zset", "mixed", 2, 1796160099, 1796160099000, -1), rule: limit, layout: LayoutOther},
		{name: "a list of words is no log", o: logOf("list", "queue", 3, math.NaN(), math.NaN(), -1), rule: limit, layout: LayoutOther},

		// Buckets.
		{name: "a hash bucket: tokens and refilledAt (ms)",
			o: hash("bucket:u42", "tokens", "4", "refilledAt", "1796160099000"), rule: limit, layout: LayoutBucket, value: "4",
			at: secs(1796160099), field: "tokens", guess: true, clue: "token bucket"},
		{name: "a hash bucket: tokens and last (seconds with a fraction)",
			o: hash("bucket:u42", "last", "1796160099.25", "tokens", "0.5"), rule: limit, layout: LayoutBucket, value: "0.5",
			at: secs(1796160099.25), field: "tokens", guess: true},
		{name: "a hash bucket: tokens_left and updated_at",
			o: hash("bucket:u42", "tokens_left", "9", "updated_at", "1796160099"), rule: limit, layout: LayoutBucket, value: "9",
			at: secs(1796160099), field: "tokens_left", guess: true},
		{name: "a bucket in two strings: the tokens (Spring Cloud Gateway)",
			o: str("request_rate_limiter.{u42}.tokens", "7"), rule: limit, layout: LayoutBucket, value: "7", guess: true, clue: ".tokens"},
		{name: "a bucket in two strings: the timestamp",
			o: str("request_rate_limiter.{u42}.timestamp", "1796160099"), rule: limit, layout: LayoutTimestamp, at: secs(1796160099), guess: true},
		{name: "tokens used (an LLM's quota), an integer: a counter",
			o: str("usage:u42:tokens", "4500"), rule: limit, layout: LayoutCounter, value: "4500"},
		{name: "tokens with a fraction: a bucket", o: str("bucket_u42_tokens", "4.5"), rule: limit, layout: LayoutBucket, value: "4.5", guess: true},

		// Hash-field counters.
		{name: "the rule's field", o: hash("hits:u42", "count", "42", "note", "vip"), rule: field, layout: LayoutCounter, value: "42", field: "count", clue: "the rule's field"},
		{name: "the rule's field, not written yet: 0", o: hash("hits:u42", "other", "42"), rule: field, layout: LayoutCounter, value: "0", field: "count"},
		{name: "the rule's field holding text", o: hash("hits:u42", "count", "many"), rule: field, layout: LayoutCounter, field: "count"},
		{name: "every field an integer: the largest",
			o: hash("hits:u42", "/login", "3", "/api", "17", "/home", "5"), rule: limit, layout: LayoutCounter, value: "17", field: "/api", guess: true, clue: "largest"},
		{name: "a tie goes to the first name", o: hash("hits:u42", "b", "5", "a", "5"), rule: limit, layout: LayoutCounter, value: "5", field: "a", guess: true},
		{name: "a hash with text in it", o: hash("user:42", "name", "Ada", "visits", "3"), rule: limit, layout: LayoutOther},
		{name: "a hash too large to read whole, none of the known names", o: many, rule: limit, layout: LayoutOther, clue: "more than 16"},
		{name: "a hash with a tat field", o: hash("gcra:u42", "tat", "312931303.5"), rule: limit, layout: LayoutGCRA, at: secs(1796160103.5), field: "tat", guess: true},

		// Times.
		{name: "epoch seconds near now: a timestamp", o: str("rl:user42:started", "1796160160"), rule: limit, layout: LayoutTimestamp, at: secs(1796160160), guess: true},
		{name: "epoch ms near now", o: str("rl:user42:first", "1796160099123"), rule: limit, layout: LayoutTimestamp, at: secs(1796160099.123), guess: true},
		{name: "epoch µs near now", o: str("rl:user42:first", "1796160099123456"), rule: limit, layout: LayoutTimestamp, at: unixUTC(1796160099123456000), guess: true},
		{name: "a name that says a time may hold an old one",
			o: str("ban:user42:blocked_until", "1790000000"), rule: limit, layout: LayoutTimestamp, at: secs(1790000000), guess: true, clue: "the name says a time"},
		{name: "a name with a tat part", o: str("rl:tat:user42", "1796160103117"), rule: limit, layout: LayoutGCRA, at: secs(1796160103.117), guess: true, clue: "tat part"},
		{name: "stats is no tat", o: str("stats:user42", "5"), rule: limit, layout: LayoutCounter, value: "5"},

		// Neither counts nor times.
		{name: "a Java-serialised bucket (bucket4j)", o: str("bucket4j:u42", javaBlob), rule: limit, layout: LayoutOpaque, clue: "Java"},
		{name: "other binary", o: str("state:u42", "\x00\x01\x02\xff"), rule: limit, layout: LayoutOpaque, clue: "not text"},
		{name: "a control byte in text", o: str("state:u42", "ok\x1b[31m"), rule: limit, layout: LayoutOpaque},
		{name: "text", o: str("session:u42", "hello world\n"), rule: limit, layout: LayoutOther, clue: "text"},
		{name: "inf is text to a limiter", o: str("rl:inf", "inf"), rule: limit, layout: LayoutOther},
		{name: "a set", o: Observation{Key: "members", Type: "set", Len: 3, PTTL: ttl, At: now, InWindow: -1}, rule: limit, layout: LayoutOther},
		{name: "a stream", o: Observation{Key: "events", Type: "stream", Len: 3, PTTL: ttl, At: now, InWindow: -1}, rule: limit, layout: LayoutOther},

		// What a rule says wins, and is no guess.
		{name: "layout = counter on a GCRA-looking value",
			o: str("rate:user42", "312931303.11663097"), rule: Rule{Limit: 10, Layout: LayoutCounter}, layout: LayoutCounter, value: "3.12931303116631e+08", clue: `the rule's layout = "counter"`},
		{name: "layout = gcra", o: str("k", "1796160103117100000"), rule: Rule{Layout: LayoutGCRA}, layout: LayoutGCRA, at: unixUTC(1796160103117100000)},
		{name: "layout = gcra, seconds since 2017", o: str("k", "5"), rule: Rule{Layout: LayoutGCRA}, layout: LayoutGCRA, at: secs(gcraEpoch + 5)},
		{name: "layout = timestamp", o: str("k", "1796160099"), rule: Rule{Layout: LayoutTimestamp}, layout: LayoutTimestamp, at: secs(1796160099)},
		{name: "layout = timestamp on text", o: str("k", "soon"), rule: Rule{Layout: LayoutTimestamp}, layout: LayoutOther, clue: "does not hold"},
		{name: "layout = window, no window in the name",
			o: str("rl:x", "3"), rule: Rule{Layout: LayoutWindow}, layout: LayoutWindow, value: "3", clue: "no window part", window: &WindowName{Identity: "rl:x"}},
		{name: "layout = window reads a window of any age",
			o: str("rl:x:10000", "3"), rule: Rule{Layout: LayoutWindow, Window: time.Minute}, layout: LayoutWindow, value: "3",
			window: &WindowName{Identity: "rl:x", Part: "10000", Start: secs(600000), Length: time.Minute, Past: true}},
		{name: "layout = log on a string", o: str("k", "3"), rule: Rule{Layout: LayoutLog}, layout: LayoutOther, clue: `layout = "log"`},
		{name: "layout = log on a list of numbers", o: logOf("list", "k", 4, 1, 2, -1), rule: Rule{Layout: LayoutLog}, layout: LayoutLog, value: "4"},
		{name: "layout = opaque on a number", o: str("k", "3"), rule: Rule{Layout: LayoutOpaque}, layout: LayoutOpaque},
		{name: "layout = bucket on a hash without a time field", o: hash("k", "value", "3"), rule: Rule{Layout: LayoutBucket}, layout: LayoutBucket, value: "3", field: "value"},
		{name: "layout = bucket with the rule's field", o: hash("k", "left", "3", "tokens", "9"), rule: Rule{Layout: LayoutBucket, Field: "left"}, layout: LayoutBucket, value: "3", field: "left"},
		{name: "layout = counter on a sorted set", o: logOf("zset", "k", 4, 1, 2, -1), rule: Rule{Layout: LayoutCounter}, layout: LayoutOther},

		// Cut at MaxRaw: never a number.
		{name: "text cut at MaxRaw, mid-character", o: func() Observation { o := str("k", long[:MaxRaw]); o.RawCut = true; return o }(), rule: limit, layout: LayoutOther, clue: "65536 bytes or more, of which the first 65536 are read"},
		{name: "binary cut at MaxRaw", o: func() Observation { o := str("k", javaBlob); o.RawCut = true; return o }(), rule: limit, layout: LayoutOpaque, clue: "Java"},
	}
}

func TestReadDetectsLayouts(t *testing.T) {
	tests := layoutCases()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Read(&tt.o, tt.rule, now)
			if r.Layout != tt.layout {
				t.Errorf("%s: layout %v, want %v (clue: %s)", tt.name, r.Layout, tt.layout, r.Clue)
				return
			}
			value := ""
			if n, ok := r.Value.Number(); ok {
				value = strconv.FormatFloat(n, 'g', -1, 64)
			}
			if value != tt.value {
				t.Errorf("%s: value %q, want %q", tt.name, value, tt.value)
			}
			if d := r.At.Sub(tt.at); r.At.IsZero() != tt.at.IsZero() || d > time.Microsecond || d < -time.Microsecond {
				t.Errorf("%s: at %v, want %v", tt.name, r.At, tt.at)
			}
			if r.Field != tt.field {
				t.Errorf("%s: field %q, want %q", tt.name, r.Field, tt.field)
			}
			if r.Guess != tt.guess {
				t.Errorf("%s: guess %v, want %v (clue: %s)", tt.name, r.Guess, tt.guess, r.Clue)
			}
			if !strings.Contains(r.Clue, tt.clue) || r.Clue == "" {
				t.Errorf("%s: clue %q does not say %q", tt.name, r.Clue, tt.clue)
			}
			if want := tt.o.RawCut; r.RawCut() != want {
				t.Errorf("%s: RawCut %v, want %v", tt.name, r.RawCut(), want)
			}
			var w WindowName
			if tt.window != nil {
				w = *tt.window
			}
			if r.Window != w {
				t.Errorf("%s: window %+v\nwant %+v", tt.name, r.Window, w)
			}
		})
	}
}

// The clue says how the key was read, in the commands redisclient sends
// for its type.
func TestReadClueNamesTheCommands(t *testing.T) {
	for _, tt := range []struct {
		o    Observation
		cmds string
	}{
		{str("k", "1"), "GETRANGE 0 65535 and PTTL"},
		{hash("k", "a", "1"), "HGETALL"},
		{logOf("zset", "k", 1, 1796160099, 1796160099, 1), "ZCOUNT"},
		{logOf("list", "k", 1, 1796160099, 1796160099, 1), "LRANGE"},
		{Observation{Key: "k", Type: "set"}, "SCARD"},
	} {
		t.Run(tt.o.Type, func(t *testing.T) {
			if r := Read(&tt.o, Rule{}, now); !strings.HasPrefix(r.Clue, tt.cmds) && !strings.Contains(r.Clue, tt.cmds+" ") {
				t.Errorf("%s: clue %q does not name %s", tt.o.Type, r.Clue, tt.cmds)
			}
		})
	}
}

// Detection never hides a real counter: a string holding an integer below
// 1e9, whatever its name (a window part, a time word, tat, tokens after a
// ':'), is read as a counter or a window, both of which show its value and
// compare it with the limit. The exceptions are a name ending in
// ".tokens", the tokens left of a bucket kept in two strings, whose value
// is shown as well, and a 1 under a name that says block, a block flag.
func TestReadNeverHidesASmallInteger(t *testing.T) {
	names := []string{
		"rl:user42", "rl:user42:29936001", "rl:user42_1796160060", "rl:user42:2026120121", "rl:20261201",
		"rl:user42:ts", "rl:user42:until", "rl:tat:user42", "tat", "usage:u42:tokens", "bucket_tokens",
		"rl:user42:timestamp", "x:1796160100", "1796160100", "rate:user42",
	}
	values := []int64{0, 1, 7, 99, 100, 12345, 20788, 498933, 29936001, 312931303, 999999999}
	rules := []Rule{
		{Limit: 10, ExpectTTL: true},
		{Limit: 10, Window: time.Minute, ExpectTTL: true},
		{Window: time.Hour},
	}
	for _, name := range append(names, "request_rate_limiter.{u42}.tokens", "rl:user42:blocked") {
		for _, v := range values {
			for _, rule := range rules {
				for _, neg := range []bool{false, true} {
					raw := strconv.FormatInt(v, 10)
					if neg && v != 0 {
						raw = "-" + raw
					}
					o := str(name, raw)
					r := Read(&o, rule, now)
					n, ok := r.Value.Number()
					want := r.Layout == LayoutCounter || r.Layout == LayoutWindow
					switch {
					case strings.HasSuffix(name, ".tokens"):
						want = r.Layout == LayoutBucket
					case strings.HasSuffix(name, ":blocked") && raw == "1":
						want, ok, n = r.Layout == LayoutBlock, true, 1
					}
					if !want || !ok || n != float64(ParseValue(raw).Int) {
						t.Errorf("%s = %s (rule window %v): read as %v, value %v %v (%s)", name, raw, rule.Window, r.Layout, n, ok, r.Clue)
					}
				}
			}
		}
	}
}

func TestParseLayout(t *testing.T) {
	for l := LayoutAuto; l < LayoutOther; l++ {
		if got, err := ParseLayout(l.String()); got != l || err != nil {
			t.Errorf("ParseLayout(%q) = %v, %v", l.String(), got, err)
		}
	}
	if got, err := ParseLayout("GCRA"); got != LayoutGCRA || err != nil {
		t.Errorf(`ParseLayout("GCRA") = %v, %v`, got, err)
	}
	for _, bad := range []string{"other", "", "tokens"} {
		t.Run(caseName(bad), func(t *testing.T) {
			_, err := ParseLayout(bad)
			if err == nil || !strings.Contains(err.Error(), "use auto, counter, window, log, bucket, gcra, timestamp, opaque or block") {
				t.Errorf("ParseLayout(%q): error %v, want one that lists the layouts", bad, err)
			}
		})
	}
	want := []string{"auto", "counter", "window", "log", "bucket", "gcra", "timestamp", "opaque", "block", "other"}
	for l := range NumLayouts {
		if l.String() != want[l] {
			t.Errorf("Layout(%d) = %q, want %q", l, l.String(), want[l])
		}
	}
}

func TestLogWindowStart(t *testing.T) {
	for _, tt := range []struct {
		newest float64
		want   float64
	}{
		{1796160099.5, 1796160040},
		{1796160099500, 1796160040000},
		{1796160099500000, 1796160040000000},
		{1796160099500000000, 1796160040000000000},
	} {
		t.Run(fmt.Sprint(tt.newest), func(t *testing.T) {
			got, ok := LogWindowStart(tt.newest, time.Minute, now)
			if !ok || math.Abs(got-tt.want) > tt.want*1e-15 {
				t.Errorf("LogWindowStart(%v) = %v, %v; want %v", tt.newest, got, ok, tt.want)
			}
		})
	}
	if _, ok := LogWindowStart(1500, time.Minute, now); ok {
		t.Error("a score of 1500 has a window start")
	}
	if _, ok := LogWindowStart(1796160099, 0, now); ok {
		t.Error("no window, yet a window start")
	}
	start, _ := LogWindowStart(1796160099500, time.Minute, now)
	entries := []string{"1796160099500", "1796160070000", "1796160040000", "1796160039999", "1796160000000", "not a time", "1796160050000.5"}
	if got := CountInWindow(entries, start); got != 3 {
		t.Errorf("CountInWindow = %d, want 3 (an entry at the window's start is outside it)", got)
	}
	if !math.IsNaN(ParseScore("x")) || !math.IsNaN(ParseScore("inf")) || ParseScore("1.5") != 1.5 {
		t.Error("ParseScore reads no number as NaN, a number as itself")
	}
}

func TestKnownHashFields(t *testing.T) {
	known := KnownHashFields("")
	for _, f := range []string{"tokens", "refilledAt", "last", "tat"} {
		if !contains(known, f) {
			t.Errorf("KnownHashFields lacks %q", f)
		}
	}
	if got := KnownHashFields("count"); got[0] != "count" || len(got) != len(known)+1 {
		t.Errorf(`KnownHashFields("count") = %q`, got)
	}
	// Appending to the shared slice must not change it.
	_ = append(known, "x")
	if KnownHashFields("")[len(known)-1] != known[len(known)-1] || len(KnownHashFields("")) != len(known) {
		t.Error("KnownHashFields' slice changed")
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestReadRemaining(t *testing.T) {
	gcra := Rule{Limit: 10, Window: time.Minute}
	for _, tt := range []struct {
		name string
		o    Observation
		rule Rule
		want float64
		ok   bool
	}{
		{"a counter under the limit", str("rl:a", "7"), Rule{Limit: 10}, 3, true},
		{"a counter past the limit", str("rl:a", "12"), Rule{Limit: 10}, 0, true},
		{"a float counter", str("rl:a", "8.5"), Rule{Limit: 10}, 1, true},
		{"no limit", str("rl:a", "7"), Rule{}, 0, false},
		{"a log", logOf("zset", "log:a", 9, 1796160050, 1796160099, 4), Rule{Limit: 10}, 6, true},
		{"a bucket: whole tokens", hash("b", "tokens", "4.5", "ts", "1796160099"), Rule{}, 4, true},
		{"an empty bucket", hash("b", "tokens", "-1", "ts", "1796160099"), Rule{Limit: 10}, 0, true},
		// emission = 6 s; 3.1 s ahead leaves (60 - 3.1) / 6 = 9.48 hits.
		{"a GCRA key 3 s ahead", str("rate:a", "312931303.11663097"), gcra, 9, true},
		{"a GCRA key that has freed", str("rate:a", "312931200.5"), gcra, 10, true},
		{"a GCRA key a window ahead", str("rate:a", "312931360.5"), gcra, 0, true},
		{"a GCRA key with no window", str("rate:a", "312931303.11663097"), Rule{Limit: 10}, 0, false},
		{"a timestamp", str("rl:a:ts", "1796160099"), Rule{Limit: 10}, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := Read(&tt.o, tt.rule, now)
			if r.Remaining != tt.want || r.HasRemaining != tt.ok {
				t.Errorf("%s: remaining %v, %v; want %v, %v", tt.name, r.Remaining, r.HasRemaining, tt.want, tt.ok)
			}
		})
	}
}

// FuzzRead: whatever a key holds and whatever the rule says, Read does not
// panic, gives a layout of its own (never auto), a finite value, and a
// reading the Store holds as NewCounter does.
func FuzzRead(f *testing.F) {
	for _, tc := range layoutCases() {
		var fields strings.Builder
		for _, fl := range tc.o.Fields {
			fields.WriteString(fl.Name + "=" + fl.Value + "\n")
		}
		f.Add(tc.o.Key, tc.o.Type, tc.o.Raw, tc.o.RawCut, tc.o.PTTL, tc.o.Len, tc.o.Newest, tc.o.Oldest, tc.o.InWindow,
			fields.String(), uint8(tc.rule.Layout), tc.rule.Field, int64(tc.rule.Window), tc.rule.Limit, now.UnixNano())
	}
	f.Add("rate:u42", "string", "312931303.11663097", false, int64(ttl), int64(0), 0.0, 0.0, int64(-1), "", uint8(0), "", int64(time.Minute), math.NaN(), now.UnixNano())
	f.Add("rl:a", "string", "3", false, int64(ttl), int64(0), 0.0, 0.0, int64(-1), "", uint8(0), "", int64(time.Minute), math.Inf(1), int64(math.MaxInt64))
	f.Add("log", "zset", "", false, int64(ttl), int64(3), 1e18, 9.2e18, int64(2), "", uint8(0), "", int64(-1), 1e308, int64(math.MinInt64))
	f.Fuzz(func(t *testing.T, key, typ, raw string, cut bool, pttl, n int64, newest, oldest float64, inWindow int64,
		fields string, layout uint8, field string, window int64, limit float64, at int64) {
		o := Observation{Key: key, Type: typ, Raw: raw, RawCut: cut, PTTL: pttl, At: time.Unix(0, at).UTC(),
			Len: n, Newest: newest, Oldest: oldest, InWindow: inWindow}
		for line := range strings.Lines(fields) {
			name, value, _ := strings.Cut(strings.TrimSuffix(line, "\n"), "=")
			o.Fields = append(o.Fields, Field{Name: name, Value: value})
		}
		rule := Rule{Limit: limit, Window: time.Duration(window), ExpectTTL: true, Layout: Layout(layout % uint8(LayoutOther)), Field: field, JSONField: field}
		r := Read(&o, rule, o.At)
		if r.Layout == LayoutAuto || r.Layout >= NumLayouts {
			t.Fatalf("layout %v", r.Layout)
		}
		if num, ok := r.Value.Number(); ok && (math.IsNaN(num) || math.IsInf(num, 0)) || math.IsNaN(r.Remaining) || math.IsInf(r.Remaining, 0) {
			t.Fatalf("value %v, remaining %v", r.Value, r.Remaining)
		}
		if r.Clue == "" {
			t.Fatal("no clue")
		}
		if st := Evaluate(&r, pttl, rule, o.At); st >= NumStatuses {
			t.Fatalf("status %v", st)
		}
		if o.PTTL == PTTLMissing || o.Type == "none" {
			return // the Store takes it for a removal
		}
		rules := &Rules{Fallback: rule}
		s := NewStore(rules)
		s.Apply(Batch{Observed: []Observation{o}})
		want, got := NewCounter(&o, rules), mustGet(t, s, key)
		if !got.ObservedAt.Equal(want.ObservedAt) {
			t.Fatalf("observed at %v, the Store says %v", want.ObservedAt, got.ObservedAt)
		}
		got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
		if got != want && !(math.IsNaN(got.Remaining) && math.IsNaN(want.Remaining)) {
			t.Fatalf("\nNewCounter %+v\nthe Store  %+v", want, got)
		}
	})
}

// BenchmarkRead is what reading a key's layout adds to each observation the
// Store applies, for the common shapes.
func BenchmarkRead(b *testing.B) {
	rule := Rule{Limit: 100, Window: time.Minute, ExpectTTL: true}
	for _, bc := range []struct {
		name string
		o    Observation
	}{
		{"counter", str("ratelimit:user:00012345:login", "57")},
		{"window", str("ratelimit:user:00012345:29936001", "57")},
		{"gcra", str("rate:user:00012345", "312931303.11663097")},
		{"bucket", hash("bucket:user:00012345", "tokens", "4", "refilledAt", "1796160099000")},
		{"log", logOf("zset", "log:user:00012345", 12, 1796160050250, 1796160099500, 5)},
		{"nswindow", str("ratelimit:{user:00012345}1796160060000000000", "57")},
		{"block", str("ratelimit:user:00012345:blocked", "1")},
		{"json", str("ratelimit:user:00012345", `{"count":57,"firstRequest":1796160050250,"lastRequest":1796160099500}`)},
		{"msgpack", str("ratelimit:user:00012345", "\x83\xa8currHits\x39\xa8prevHits\x09\xa3exp\xce\x6b\x0e\x3a\xf8")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r := Read(&bc.o, rule, now)
				_ = Evaluate(&r, bc.o.PTTL, rule, now)
			}
		})
	}
}
