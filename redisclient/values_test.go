package redisclient_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// valueRules read the keys of valueKeys: 10 hits a minute, and a rule that
// names the field of a JSON object holding the count.
var valueRules = model.Rules{
	List: []model.Rule{
		{Pattern: "json:named:*", Limit: 10, Window: time.Minute, ExpectTTL: true, JSONField: "n"},
		{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true},
	},
	Fallback: model.Rule{ExpectTTL: true},
}

// fiberItem is gofiber/fiber v2's limiter state, as its msgp code writes
// it: currHits, prevHits and exp.
type fiberItem struct {
	CurrHits int    `msgpack:"currHits"`
	PrevHits int    `msgpack:"prevHits"`
	Exp      uint64 `msgpack:"exp"`
}

// valueKeys are the shapes of issue 29's limiters, made by hand: window
// starts in ns and µs, block flags, and counts inside JSON and msgpack.
func valueKeys(t *testing.T, now time.Time) []layoutKey {
	const ttl = time.Minute
	minute := now.Truncate(time.Minute)
	pack := func(v any) string {
		b, err := msgpack.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	ns := func(at time.Time) string { return strconv.FormatInt(at.UnixNano(), 10) }
	us := func(at time.Time) string { return strconv.FormatInt(at.UnixMicro(), 10) }
	return []layoutKey{
		{key: "{fw}" + ns(minute), write: setKey("{fw}"+ns(minute), 3, ttl), want: wantReading{"window", "3", true, "ok"}},
		{key: "{fw}" + ns(minute.Add(-10*time.Minute)), write: setKey("{fw}"+ns(minute.Add(-10*time.Minute)), 4, 0),
			want: wantReading{"window", "4", false, "leak"}},
		{key: "sw@" + us(minute), write: setKey("sw@"+us(minute), 9, ttl), want: wantReading{"window", "9", true, "warn"}},

		{key: "rl:u42:blocked", write: setKey("rl:u42:blocked", 1, 5*time.Minute), want: wantReading{"block", "null", true, "over"}},
		{key: "rl:u43:blocked", write: setKey("rl:u43:blocked", 1, 0), want: wantReading{"block", "null", false, "stuck"}},
		{key: "ban:198.51.100.7", write: setKey("ban:198.51.100.7", now.Add(5*time.Minute).Unix(), 5*time.Minute),
			want: wantReading{"block", "null", true, "over"}},
		{key: "bruteblock:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", write: setKey("bruteblock:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", 1, 30*time.Second),
			want: wantReading{"block", "null", true, "over"}},

		{key: "json:u42", write: setKey("json:u42", `{"count":3,"lastRequest":1796160099000,"firstRequest":1796160050000}`, ttl),
			want: wantReading{"counter", "3", true, "ok"}},
		{key: "json:u43", write: setKey("json:u43", `{"hits":12}`, 0), want: wantReading{"counter", "12", false, "stuck"}},
		{key: "json:bucket", write: setKey("json:bucket", `{"tokens":0,"last":1796160099}`, ttl), want: wantReading{"bucket", "0", true, "over"}},
		{key: "json:named:u42", write: setKey("json:named:u42", `{"count":1,"n":7}`, ttl), want: wantReading{"counter", "7", true, "ok"}},
		{key: "json:session", write: setKey("json:session", `{"user":"ada"}`, ttl), want: wantReading{"other", "null", true, "not-counter"}},
		{key: "json:big", write: setKey("json:big", `{"count":3,"pad":"`+strings.Repeat("x", model.MaxDecoded)+`"}`, ttl),
			want: wantReading{"other", "null", true, "not-counter"}},

		{key: "fiber:127.0.0.1", write: setKey("fiber:127.0.0.1", pack(fiberItem{CurrHits: 3, PrevHits: 9, Exp: uint64(now.Unix() + 60)}), ttl),
			want: wantReading{"counter", "3", true, "ok"}},
		{key: "fiber:127.0.0.2", write: setKey("fiber:127.0.0.2", pack(fiberItem{CurrHits: 10, Exp: uint64(now.Unix() + 60)}), 0),
			want: wantReading{"counter", "10", false, "stuck"}},
		{key: "msgpack:other", write: setKey("msgpack:other", pack(map[string]any{"exp": 1}), ttl), want: wantReading{"opaque", "null", true, "ok"}},
	}
}

// Each of issue 29's hand-shaped keys is read alike by the dashboard's
// path and the snapshot's, with its layout, value and status.
func TestReadsValuesOfTheSecondRound(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	keys := valueKeys(t, time.Now())
	writeKeys(t, s.Client(t), keys)
	c := connectWithRules(t, s.URL(), s.Password, &valueRules)
	got := readBoth(t, c, &valueRules, keyNames(keys))
	checkReadings(t, got, keys)
	if c := got["fiber:127.0.0.1"]; c.Field != "currHits" || c.Type != "string" {
		t.Errorf("gofiber's state read from field %q of a %s; want currHits of a string", c.Field, c.Type)
	}
	if c := got["rl:u42:blocked"]; time.Until(c.At) < 4*time.Minute || time.Until(c.At) > 5*time.Minute {
		t.Errorf("the block frees at %v, %v from now; want its TTL, 5m", c.At, time.Until(c.At))
	}
}
