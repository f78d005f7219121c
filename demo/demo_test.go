package demo

import (
	"context"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// open starts a demo whose own clock never ticks (a tick of an hour): the
// test moves time itself with advance, which makes the traffic
// deterministic. It returns the demo and a client of its server.
func open(t *testing.T, seed int64) (*Demo, *redis.Client) {
	t.Helper()
	d, err := Start(t.Context(), Options{Seed: seed, Tick: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(d.Close)
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr(), DisableIdentity: true})
	t.Cleanup(func() { rdb.Close() })
	return d, rdb
}

// play advances the demo by n ticks of DefaultTick.
func play(t *testing.T, d *Demo, n int) {
	for range n {
		d.advance(t.Context(), DefaultTick)
	}
}

// read returns what the dashboard reads of key: TYPE, the string (strings
// only) and PTTL in milliseconds (-1 no expiry, -2 no such key).
func read(t *testing.T, rdb *redis.Client, key string) (typ, raw string, pttl int64) {
	t.Helper()
	ctx := t.Context()
	typ, err := rdb.Type(ctx, key).Result()
	if err != nil {
		t.Fatal(err)
	}
	if typ == "string" {
		if raw, err = rdb.Get(ctx, key).Result(); err != nil {
			t.Fatal(err)
		}
	}
	if pttl, err = rdb.Do(ctx, "PTTL", key).Int64(); err != nil {
		t.Fatal(err)
	}
	return typ, raw, pttl
}

// ruleFor returns the rule for key: every demo pattern is a prefix and '*'.
func ruleFor(rules []model.Rule, key string) (model.Rule, bool) {
	for _, r := range rules {
		if strings.HasPrefix(key, strings.TrimSuffix(r.Pattern, "*")) {
			return r, true
		}
	}
	return model.Rule{}, false
}

// The dashboard opens on keys in every state it can show.
func TestOpensOnEveryStatus(t *testing.T) {
	d, rdb := open(t, 1)
	play(t, d, 5)

	type key struct {
		name, typ, raw string
		pttl           int64
		rule           model.Rule
		ruled          bool
	}
	var keys []key
	for _, p := range d.Patterns() {
		names, err := rdb.Keys(t.Context(), p).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			typ, raw, pttl := read(t, rdb, name)
			rule, ruled := ruleFor(d.Rules(), name)
			keys = append(keys, key{name, typ, raw, pttl, rule, ruled})
		}
	}

	isInt := func(k key) (float64, bool) {
		n, err := strconv.ParseInt(k.raw, 10, 64)
		return float64(n), k.typ == "string" && err == nil
	}
	limited := func(k key) (v float64, ok bool) {
		v, ok = isInt(k)
		return v, ok && k.rule.Limit > 0
	}
	want := []struct {
		what string
		has  func(k key) bool
	}{
		{"ok: an integer under 80% of its limit, with a TTL", func(k key) bool {
			v, ok := limited(k)
			return ok && k.pttl > 0 && v < model.DefaultWarnAt*k.rule.Limit
		}},
		{"warn: an integer from 80% of its limit, with a TTL", func(k key) bool {
			v, ok := limited(k)
			return ok && k.pttl > 0 && v >= model.DefaultWarnAt*k.rule.Limit && v < k.rule.Limit
		}},
		{"over: an integer at or over its limit, with a TTL", func(k key) bool {
			v, ok := limited(k)
			return ok && k.pttl > 0 && v >= k.rule.Limit
		}},
		{"no-expiry: an integer under its limit, without TTL", func(k key) bool {
			v, ok := limited(k)
			return ok && k.rule.ExpectTTL && k.pttl == -1 && v < k.rule.Limit
		}},
		{"stuck: an integer at or over its limit, without TTL", func(k key) bool {
			v, ok := limited(k)
			return ok && k.rule.ExpectTTL && k.pttl == -1 && v >= k.rule.Limit
		}},
		{"a counter meant to live forever, without TTL", func(k key) bool {
			_, ok := isInt(k)
			return ok && k.ruled && !k.rule.ExpectTTL && k.pttl == -1
		}},
		{"a float counter with a limit and a TTL", func(k key) bool {
			_, isInt := isInt(k)
			_, err := strconv.ParseFloat(k.raw, 64)
			return k.typ == "string" && !isInt && err == nil && k.rule.Limit > 0 && k.pttl > 0
		}},
		{"a hash", func(k key) bool { return k.typ == "hash" }},
		{"a string that is not a number", func(k key) bool {
			_, err := strconv.ParseFloat(k.raw, 64)
			return k.typ == "string" && err != nil
		}},
		{"a name with an escape sequence and a newline", func(k key) bool {
			return strings.Contains(k.name, "\x1b[") && strings.Contains(k.name, "\n")
		}},
	}
	for _, w := range want {
		t.Run(w.what, func(t *testing.T) {
			found := false
			for _, k := range keys {
				if w.has(k) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("no key is %s", w.what)
			}
		})
	}
}

// TTLs count down as the demo's clock moves; nothing else sets them back.
func TestTTLsCountDown(t *testing.T) {
	d, rdb := open(t, 1)
	const key = "billing:credits:acme"
	_, _, before := read(t, rdb, key)
	if before <= 0 {
		t.Fatalf("%s has PTTL %d, want a TTL", key, before)
	}
	play(t, d, 25)
	if _, _, after := read(t, rdb, key); after != before-2500 {
		t.Errorf("after 2.5s, %s has PTTL %d, want %d", key, after, before-2500)
	}
}

// A fixed window ends: the key expires, and the client's next request
// starts a new window at 1 with the whole TTL.
func TestWindowExpiresAndRestarts(t *testing.T) {
	d, rdb := open(t, 1)
	const key = "ratelimit:api:cyberdyne" // calls rarely: its key stays gone a while
	var hadTTL, gone bool
	const patience = 10 * apiWindow
	for range patience / DefaultTick {
		play(t, d, 1)
		_, raw, pttl := read(t, rdb, key)
		switch {
		case gone && pttl != -2:
			if raw != "1" || pttl != apiWindow.Milliseconds() {
				t.Fatalf("%s came back as %q with PTTL %d, want \"1\" with PTTL %d", key, raw, pttl, apiWindow.Milliseconds())
			}
			return
		case hadTTL && pttl == -2:
			gone = true
		case pttl > 0:
			hadTTL = true
		}
	}
	t.Fatalf("in %v, %s never expired and came back (had a TTL: %v, expired: %v)", patience, key, hadTTL, gone)
}

// A counter that lost its TTL keeps growing and never expires.
func TestStuckCounterGrows(t *testing.T) {
	d, rdb := open(t, 1)
	const key = "ratelimit:api:legacy-batch"
	play(t, d, 100)
	_, raw, pttl := read(t, rdb, key)
	if v, err := strconv.Atoi(raw); err != nil || v <= 250 || pttl != -1 {
		t.Errorf("after 10s, %s is %q with PTTL %d, want more than 250 with no TTL (-1)", key, raw, pttl)
	}
}

// A client that sets its window again on every request (EXPIRE without
// NX) keeps its key for longer than a window, growing all the while: the
// window never closes.
func TestPushedWindowNeverCloses(t *testing.T) {
	d, rdb := open(t, 1)
	const key = "ratelimit:api:retry-loop"
	play(t, d, 1)
	_, raw, _ := read(t, rdb, key)
	first, _ := strconv.Atoi(raw)
	for range 3 * apiWindow / DefaultTick {
		play(t, d, 1)
		if _, _, pttl := read(t, rdb, key); pttl <= 0 {
			t.Fatalf("%s expired (PTTL %d): its window closed", key, pttl)
		}
	}
	_, raw, pttl := read(t, rdb, key)
	if v, err := strconv.Atoi(raw); err != nil || v < first+20 || pttl < (apiWindow-time.Second).Milliseconds() {
		t.Errorf("after three windows, %s is %q with PTTL %d; want more than %d, with the TTL set again lately", key, raw, pttl, first+20)
	}
}

// The dashboard proves the retry loop extending once it has grown, its TTL
// pushed back, for longer than its 10 s window: read as the dashboard reads
// it, every tick, it is extending within two windows, well within the
// demo's first minute, and the client with NX beside it never is.
func TestRetryLoopShowsExtendingWithinAMinute(t *testing.T) {
	d, _ := open(t, 1)
	ctx := t.Context()
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: d.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	store := model.NewStore(&model.Rules{List: d.Rules(), Fallback: model.Rule{ExpectTTL: true}})
	const key, nx = "ratelimit:api:retry-loop", "ratelimit:api:acme-web"
	for range 2 * apiWindow / DefaultTick {
		play(t, d, 1)
		obs, err := c.Fetch(ctx, []string{key, nx})
		if err != nil {
			t.Fatal(err)
		}
		for i := range obs {
			obs[i].At = d.clock // the demo's clock, which the test moves
		}
		store.Apply(model.Batch{Observed: obs})
		if k, _ := store.Get(nx); k.Status == model.StatusExtending {
			t.Fatalf("%s, which sets its TTL with NX, is extending", nx)
		}
	}
	if r, _ := store.Get(key); r.Status != model.StatusExtending {
		p, _ := store.Pushback(key)
		t.Errorf("%s is %s after two windows of pushes (%+v), want extending", key, r.Status, p)
	}
}

// Someone else (the dashboard, redis-cli) may break the keys the traffic
// writes; the writes that fail are skipped and the rest carries on.
func TestCarriesOnWhenKeysAreBroken(t *testing.T) {
	d, rdb := open(t, 1)
	ctx := t.Context()
	broken := map[string]string{
		"ratelimit:api:hooli":    "not a number",
		"views:page:home":        "9223372036854775807", // INCR overflows
		"billing:credits:globex": "lots",
	}
	for k, v := range broken {
		if err := rdb.Set(ctx, k, v, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.Del(ctx, "ratelimit:api:acme-web").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.HSet(ctx, "ratelimit:api:acme-web", "owner", "ops").Err(); err != nil {
		t.Fatal(err)
	}
	_, docsBefore, _ := read(t, rdb, "views:page:docs")

	play(t, d, 20)

	for k, v := range broken {
		if _, raw, _ := read(t, rdb, k); raw != v {
			t.Errorf("%s is %q, want it left as %q", k, raw, v)
		}
	}
	if typ, _, _ := read(t, rdb, "ratelimit:api:acme-web"); typ != "hash" {
		t.Errorf("ratelimit:api:acme-web is a %s, want it left a hash", typ)
	}
	if _, docs, _ := read(t, rdb, "views:page:docs"); docs == docsBefore {
		t.Errorf("views:page:docs stayed at %s: the other writes stopped", docs)
	}
}

// The dashboard's writes work on the demo server: an atomic increment as a
// Lua script (EVALSHA, EVAL on NOSCRIPT) and a repair with EXPIRE NX.
func TestAcceptsCountertopWrites(t *testing.T) {
	_, rdb := open(t, 1)
	ctx := t.Context()
	incr := redis.NewScript(`
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {v, ttl}`)
	got, err := incr.Run(ctx, rdb, []string{"ratelimit:api:new"}, 3, 10000).Int64Slice()
	if err != nil || len(got) != 2 || got[0] != 3 || got[1] != 10000 {
		t.Errorf("increment script returned %v, %v; want [3 10000]", got, err)
	}

	cmds, err := rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		pipe.ExpireNX(ctx, "ratelimit:api:legacy-batch", apiWindow)
		pipe.ExpireNX(ctx, "ratelimit:api:legacy-batch", time.Hour) // already has one: no-op
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if a, b := cmds[0].(*redis.BoolCmd).Val(), cmds[1].(*redis.BoolCmd).Val(); !a || b {
		t.Errorf("EXPIRE NX twice answered %v, %v; want true, false", a, b)
	}
	if _, _, pttl := read(t, rdb, "ratelimit:api:legacy-batch"); pttl != apiWindow.Milliseconds() {
		t.Errorf("repaired key has PTTL %d, want %d", pttl, apiWindow.Milliseconds())
	}
}

// The dashboard's repair runs on the demo server as on Redis: the script
// gives a stuck counter its window and leaves a hash alone.
func TestAcceptsCountertopRepairs(t *testing.T) {
	d, rdb := open(t, 1)
	ctx := t.Context()
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: d.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for key, want := range map[string]model.ExpiryOutcome{
		"ratelimit:api:legacy-batch": model.ExpirySet,
		"ratelimit:config":           model.ExpiryChanged, // a hash
		"ratelimit:api:acme-web":     model.ExpiryHadTTL,
		"ratelimit:api:nobody":       model.ExpiryGone,
	} {
		t.Run(key, func(t *testing.T) {
			before, _, _ := read(t, rdb, key)
			got, obs, err := c.Expire(ctx, model.Expiry{Key: key, Window: apiWindow, Shape: model.ShapeCounter})
			if err != nil || got != want || obs.Type != before {
				t.Errorf("repair of %s = %v, %+v, %v; want %v", key, got, obs, err, want)
			}
		})
	}
	if _, _, pttl := read(t, rdb, "ratelimit:api:legacy-batch"); pttl != apiWindow.Milliseconds() {
		t.Errorf("repaired key has PTTL %d, want %d", pttl, apiWindow.Milliseconds())
	}
	if _, _, pttl := read(t, rdb, "ratelimit:config"); pttl != model.PTTLNoExpiry {
		t.Errorf("the hash got PTTL %d; want it left alone", pttl)
	}
}

// The dashboard's + on the demo's hash field counter runs on the demo
// server as on Redis: HINCRBY of the rule's field, in the same script as
// the hash's expiry.
func TestAcceptsCountertopFieldIncrements(t *testing.T) {
	d, rdb := open(t, 1)
	ctx := t.Context()
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: d.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const key = "ratelimit:quota:acme"
	before, err := rdb.HGet(ctx, key, quotaField).Int64()
	if err != nil {
		t.Fatal(err)
	}
	r, err := c.IncrField(ctx, key, quotaField, model.Amount{Int: 3}, quotaWindow)
	if err != nil || r.Command != "HINCRBY" || r.FieldValue != strconv.FormatInt(before+3, 10) {
		t.Fatalf("IncrField: %+v, %v; want HINCRBY to %d", r, err, before+3)
	}
	if _, _, pttl := read(t, rdb, key); pttl <= 0 || pttl > quotaWindow.Milliseconds() {
		t.Errorf("the hash has PTTL %d, want its window kept", pttl)
	}
}

// Started for real, the demo's clock follows the wall clock; Close stops the
// traffic, shuts the server and leaves no goroutine behind.
func TestRunsUntilClosed(t *testing.T) {
	goroutines := runtime.NumGoroutine()
	d, err := Start(t.Context(), Options{Seed: 1, Tick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: d.Addr(), DisableIdentity: true})
	_, _, before := read(t, rdb, "billing:credits:acme")
	waitFor(t, "the TTL of billing:credits:acme to count down", func() bool {
		_, _, pttl := read(t, rdb, "billing:credits:acme")
		return pttl < before
	})
	rdb.Close()

	d.Close()
	d.Close()
	if c, err := net.Dial("tcp", d.Addr()); err == nil {
		c.Close()
		t.Error("the server still accepts connections after Close")
	}
	waitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
}

// The traffic stops when the context given to Start is done.
func TestStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	d, err := Start(ctx, Options{Tick: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	cancel()
	select {
	case <-d.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the traffic goroutine still runs after its context was cancelled")
	}
}

func TestStartRejectsNegativeTick(t *testing.T) {
	_, err := Start(t.Context(), Options{Tick: -time.Second})
	if err == nil || !strings.Contains(err.Error(), "tick must be positive") {
		t.Errorf("Start with a negative tick returned %v, want an error saying the tick must be positive", err)
	}
}

// waitFor polls cond until it holds, failing after a deadline generous
// enough for a loaded CI machine.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Among the simulated clients is every layout a limiter library writes,
// read as the dashboard's Store reads it, with the status that means the
// right thing for it: a GCRA key that refuses hits is over, one that lets
// them through ok; a past window's key without a TTL is a leak (not a
// lock-out), a log without one no-expiry; a hash field counts in the
// rule's field, not the larger one beside it; a bucket's number is tokens
// left; a time and opaque state have no number; a block flag is over while
// it refuses its client and stuck without a TTL; a count kept in JSON or
// gofiber's msgpack is that count; a window's start in ns names a window.
func TestShowsEveryLayout(t *testing.T) {
	d, rdb := open(t, 1)
	play(t, d, 50)
	ctx := t.Context()
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: d.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	names, err := rdb.Keys(ctx, "ratelimit:*").Result()
	if err != nil {
		t.Fatal(err)
	}
	obs, err := c.Fetch(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	for i := range obs {
		// The test moved the demo's clock 5s in no time: read as of that
		// clock, the time its clients wrote in.
		obs[i].At = d.clock
	}
	store := model.NewStore(&model.Rules{List: d.Rules(), Fallback: model.Rule{ExpectTTL: true}})
	store.Apply(model.Batch{Observed: obs})
	// A window's name is its number: find the keys by what comes before.
	named := func(prefix string) string {
		for _, n := range names {
			if strings.HasPrefix(n, prefix) {
				return n
			}
		}
		return prefix + "…"
	}
	current, leaked := named("ratelimit:win:acme:"), named("ratelimit:win:legacy:")
	nsWindow := named("ratelimit:state:nswin:{acme}")
	seen := map[model.Layout]bool{}
	for _, want := range []struct {
		key    string
		layout model.Layout
		status model.Status
		typ    string
		value  bool   // it has a number compared with the limit
		field  string // the hash field read
	}{
		{"ratelimit:api:legacy-batch", model.LayoutCounter, model.StatusStuck, "string", true, ""},
		{current, model.LayoutWindow, model.StatusOK, "string", true, ""},
		{leaked, model.LayoutWindow, model.StatusLeak, "string", true, ""},
		{"ratelimit:log:acme", model.LayoutLog, model.StatusOK, "zset", true, ""},
		{"ratelimit:log:forgotten", model.LayoutLog, model.StatusNoExpiry, "zset", true, ""},
		{"ratelimit:list:acme", model.LayoutLog, model.StatusOK, "list", true, ""},
		{"ratelimit:bucket:acme", model.LayoutBucket, model.StatusOK, "hash", true, "tokens"},
		{"ratelimit:tb:acme.tokens", model.LayoutBucket, model.StatusOK, "string", true, ""},
		{"ratelimit:tb:acme.timestamp", model.LayoutTimestamp, model.StatusOK, "string", false, ""},
		{"ratelimit:gcra:acme", model.LayoutGCRA, model.StatusOK, "string", false, ""},
		{"ratelimit:gcra:scraper", model.LayoutGCRA, model.StatusOver, "string", false, ""},
		{"ratelimit:block:198.51.100.66:until", model.LayoutTimestamp, model.StatusOK, "string", false, ""},
		{"ratelimit:bucket4j:acme", model.LayoutOpaque, model.StatusOK, "string", false, ""},
		{"ratelimit:quota:acme", model.LayoutCounter, model.StatusOK, "hash", true, quotaField},
		{"ratelimit:brute:203.0.113.7", model.LayoutCounter, model.StatusOver, "string", true, ""},
		{"ratelimit:brute:203.0.113.7:blocked", model.LayoutBlock, model.StatusOver, "string", false, ""},
		{"ratelimit:brute:198.51.100.23:blocked", model.LayoutBlock, model.StatusStuck, "string", false, ""},
		{"ratelimit:state:json:acme", model.LayoutCounter, model.StatusOK, "string", true, "count"},
		{"ratelimit:state:fiber:203.0.113.9", model.LayoutCounter, model.StatusOK, "string", true, "currHits"},
		{nsWindow, model.LayoutWindow, model.StatusOK, "string", true, ""},
	} {
		t.Run(want.key, func(t *testing.T) {
			k, ok := store.Get(want.key)
			if !ok {
				t.Errorf("no key %s among %v", model.Printable(want.key), names)
				return
			}
			_, hasValue := k.Value.Number()
			if k.Layout != want.layout || k.Status != want.status || k.Type != want.typ || hasValue != want.value || k.Field != want.field {
				t.Errorf("%s reads as %s %s, %s, a number %v, field %q; want %s %s, %s, a number %v, field %q (%s)",
					want.key, k.Type, k.Layout, k.Status, hasValue, k.Field, want.typ, want.layout, want.status, want.value, want.field, k.Clue)
			}
			seen[k.Layout] = true
		})
	}
	for _, l := range []model.Layout{model.LayoutCounter, model.LayoutWindow, model.LayoutLog, model.LayoutBucket, model.LayoutGCRA, model.LayoutTimestamp, model.LayoutOpaque, model.LayoutBlock} {
		if !seen[l] {
			t.Errorf("no demo key reads as %s", l)
		}
	}
	if k, _ := store.Get(current); k.Window.Identity != "ratelimit:win:acme" {
		t.Errorf("the live window's key %s has identity %q, want ratelimit:win:acme", current, k.Window.Identity)
	}
	// The hash's rule reads requests, a count under the limit, not bytes.
	if k, _ := store.Get("ratelimit:quota:acme"); k.Value.Int < 1 || k.Value.Int >= quotaLimit {
		t.Errorf("ratelimit:quota:acme counts %v in %s, want the requests, between 1 and %d", k.Value, k.Field, quotaLimit)
	}
}

// The logs and the bucket are written as their libraries write them: a
// sorted set and a list of hit times in ms with PEXPIRE the window on each
// hit, a hash of tokens and refilledAt; and the forgotten log has no TTL.
func TestWritesLogsAndBucketsAsLibrariesDo(t *testing.T) {
	d, rdb := open(t, 1)
	play(t, d, 50)
	ctx := t.Context()
	nowMs := float64(d.clock.UnixMilli())
	recent := func(score float64) bool { return score <= nowMs && score > nowMs-float64(logWindow.Milliseconds()) }

	for key, wantTTL := range map[string]bool{"ratelimit:log:acme": true, "ratelimit:log:forgotten": false} {
		t.Run(key, func(t *testing.T) {
			typ, _, pttl := read(t, rdb, key)
			hits, err := rdb.ZRangeWithScores(ctx, key, 0, -1).Result()
			if err != nil || typ != "zset" || len(hits) == 0 || (pttl > 0) != wantTTL || wantTTL && pttl > logWindow.Milliseconds() {
				t.Fatalf("%s: type %s, %d hits, PTTL %d, %v", key, typ, len(hits), pttl, err)
			}
			if wantTTL && !recent(hits[len(hits)-1].Score) {
				t.Errorf("%s: newest hit at %v, not within the window before %v", key, hits[len(hits)-1].Score, nowMs)
			}
		})
	}

	typ, _, pttl := read(t, rdb, "ratelimit:list:acme")
	entries, err := rdb.LRange(ctx, "ratelimit:list:acme", 0, -1).Result()
	if err != nil || typ != "list" || len(entries) == 0 || len(entries) > logLimit || pttl <= 0 {
		t.Fatalf("list log: type %s, %d entries, PTTL %d, %v", typ, len(entries), pttl, err)
	}
	if newest := model.ParseScore(entries[0]); !recent(newest) {
		t.Errorf("list log: newest entry %q, not a time in ms within the window", entries[0])
	}

	fields, err := rdb.HGetAll(ctx, "ratelimit:bucket:acme").Result()
	tokens, terr := strconv.ParseFloat(fields["tokens"], 64)
	if err != nil || terr != nil || tokens < 0 || tokens > bucketSize || !recent(model.ParseScore(fields["refilledAt"])) {
		t.Fatalf("bucket: %v, %v", fields, err)
	}
	if _, _, pttl := read(t, rdb, "ratelimit:bucket:acme"); pttl <= 0 {
		t.Errorf("bucket: PTTL %d, want the window set on each hit", pttl)
	}
}

// The demo's per-endpoint limiter keeps a field per endpoint, each with a
// TTL of its own, and one field whose HEXPIRE was lost: the embedded
// server has field TTLs (HEXPIRE, HPTTL; HPEXPIRE the demo adds), so
// countertop reads the hash field by field, names the lost field
// no-expiry, and its repair and increments give fields their own TTL,
// never the hash.
func TestShowsAFieldThatLostItsTTL(t *testing.T) {
	d, rdb := open(t, 1)
	play(t, d, 50)
	ctx := t.Context()
	rules := model.Rules{List: d.Rules(), Fallback: model.Rule{ExpectTTL: true}}
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: d.URL(), Rules: &rules})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	const key = "ratelimit:fields:acme"
	obs, err := c.Fetch(ctx, []string{key})
	if err != nil {
		t.Fatal(err)
	}
	if !obs[0].FieldTTLs {
		t.Fatalf("%s is not read field by field: %+v", key, obs[0])
	}
	got := map[string]model.Status{}
	for _, row := range model.Rows(&obs[0]) {
		c := model.NewCounter(&row, &rules)
		got[c.Name()] = c.Status
		if row.Field != lostField && (row.PTTL <= 0 || row.PTTL > fieldsWindow.Milliseconds()) {
			t.Errorf("%s: TTL %dms, want its own, at most %v", c.Name(), row.PTTL, fieldsWindow)
		}
	}
	want := map[string]model.Status{key + " › " + lostField: model.StatusNoExpiry}
	for _, f := range fieldsEndpoints {
		want[key+" › "+f] = model.StatusOK
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("rows %v, want %v", got, want)
	}

	e := model.Expiry{Key: key, Window: fieldsWindow, Shape: model.Shape{Layout: model.LayoutCounter, Type: "hash", Number: true}, Field: lostField}
	if outcome, _, err := c.Expire(ctx, e); err != nil || outcome != model.ExpirySet {
		t.Fatalf("repair %s = %v, %v; want set", e, outcome, err)
	}
	r, err := c.IncrField(ctx, key, "report", model.Amount{Int: 1}, fieldsWindow)
	if err != nil || !r.FieldTTL || len(r.Expire) == 0 {
		t.Fatalf("IncrField of a new field: %+v, %v; want HPEXPIRE with it", r, err)
	}
	for _, f := range []string{lostField, "report"} {
		if ttl := rdb.Do(ctx, "HPTTL", key, "FIELDS", 1, f).Val(); fmt.Sprint(ttl) != fmt.Sprintf("[%d]", fieldsWindow.Milliseconds()) {
			t.Errorf("%s's TTL is %v, want the window, %v", f, ttl, fieldsWindow)
		}
	}
	if _, _, pttl := read(t, rdb, key); pttl != model.PTTLNoExpiry {
		t.Errorf("the hash got PTTL %d: every field would go with it", pttl)
	}
}

// The demo's HPEXPIRE gives a field its TTL in milliseconds, rounded up to
// whole seconds, and refuses one too large to hold (it wrapped to a TTL of
// a second or two), leaving the field as it was.
func TestHPEXPIREUnitsAndBounds(t *testing.T) {
	_, rdb := open(t, 1)
	ctx := t.Context()
	rdb.HSet(ctx, "h", "f", 1)
	if err := rdb.Do(ctx, "HPEXPIRE", "h", "9223372036854775807", "FIELDS", "1", "f").Err(); err == nil {
		t.Error("HPEXPIRE of the largest int64 ms: no error")
	}
	if ttl := fmt.Sprint(rdb.Do(ctx, "HPTTL", "h", "FIELDS", "1", "f").Val()); ttl != "[-1]" {
		t.Errorf("after a refused HPEXPIRE the field's TTL is %s, want [-1] (none)", ttl)
	}
	if got := fmt.Sprint(rdb.Do(ctx, "HPEXPIRE", "h", "1500", "FIELDS", "1", "f").Val()); got != "[1]" {
		t.Errorf("HPEXPIRE h 1500: %s, want [1] (set)", got)
	}
	if ttl := fmt.Sprint(rdb.Do(ctx, "HPTTL", "h", "FIELDS", "1", "f").Val()); ttl != "[2000]" {
		t.Errorf("HPEXPIRE 1500 ms gave the TTL %s, want [2000]: rounded up to whole seconds", ttl)
	}
}
