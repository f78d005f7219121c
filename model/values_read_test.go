package model

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// valueCase is a key the second round of limiters writes, the rule it is
// read under, and what Read and Evaluate make of it at now.
type valueCase struct {
	name   string
	o      Observation
	rule   Rule
	layout Layout
	value  string    // the Value as FormatFloat writes it; "" for none
	status Status    // Evaluate's, with the observation's PTTL
	at     time.Time // Reading.At
	field  string
	clue   string // part of the clue
	window *WindowName
}

// noTTL is o without an expiry.
func noTTL(o Observation) Observation {
	o.PTTL = PTTLNoExpiry
	return o
}

// gofiberItem is gofiber/fiber v2's limiter state as its msgp code writes
// it: a map of currHits, prevHits and exp, in that order.
type gofiberItem struct {
	CurrHits int    `msgpack:"currHits"`
	PrevHits int    `msgpack:"prevHits"`
	Exp      uint64 `msgpack:"exp"`
}

// packed is v in msgpack.
func packed(v any) string {
	b, err := msgpack.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// valueCases are item 1, 3, 4 and 5 of issue 29: window starts in ns and
// µs, block flags, and counts inside JSON and msgpack.
func valueCases() []valueCase {
	limit := Rule{Pattern: "*", Limit: 10, ExpectTTL: true}
	minute := Rule{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}
	forever := Rule{Pattern: "*", Limit: 10, ExpectTTL: false}
	named := Rule{Pattern: "*", Limit: 10, ExpectTTL: true, JSONField: "n"}
	ruled := func(l Layout) Rule {
		return Rule{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true, Layout: l}
	}
	deadline := now.Add(ttl * time.Millisecond)
	bigJSON := `{"count":3,"pad":"` + strings.Repeat("x", MaxDecoded) + `"}`
	fiber := packed(gofiberItem{CurrHits: 3, PrevHits: 9, Exp: 1796160120})
	return []valueCase{
		// 1. Window starts in ns and µs in the name, as s and ms are.
		{name: "ns start after a hash tag (mennanov/limiters), this minute",
			o: str("{fw}1796160060000000000", "3"), rule: limit, layout: LayoutWindow, value: "3", status: StatusOK, clue: "epoch",
			window: &WindowName{Identity: "{fw}", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "ns start after @, the rule's window",
			o: str("key@1796160060000000000", "9"), rule: minute, layout: LayoutWindow, value: "9", status: StatusWarn,
			window: &WindowName{Identity: "key", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "µs start, this minute",
			o: str("rl:u42:1796160060000000", "4"), rule: limit, layout: LayoutWindow, value: "4", status: StatusOK,
			window: &WindowName{Identity: "rl:u42", Part: "1796160060000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "a past ns window without a TTL leaks",
			o: noTTL(str("{fw}1796150000000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusLeak,
			window: &WindowName{Identity: "{fw}", Part: "1796150000000000000", Start: secs(1796150000), Length: time.Minute, Past: true}},
		{name: "a past µs window without a TTL leaks",
			o: noTTL(str("rl:u42|1796150000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusLeak,
			window: &WindowName{Identity: "rl:u42", Part: "1796150000000000", Start: secs(1796150000), Length: time.Minute, Past: true}},
		{name: "the current ns window without a TTL is no-expiry",
			o: noTTL(str("{fw}1796160060000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusNoExpiry,
			window: &WindowName{Identity: "{fw}", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "19 digits that are no time near now (a snowflake id) are part of the name",
			o: str("order:1996160060000000000", "4"), rule: limit, layout: LayoutCounter, value: "4", status: StatusOK},
		{name: "digits right after a name, no hash tag, are part of it",
			o: str("fw1796160060000000000", "4"), rule: limit, layout: LayoutCounter, value: "4", status: StatusOK},

		// 3. Block flags: over while they live, stuck without a TTL.
		{name: "…:blocked = 1 with a TTL refuses its client until it expires",
			o: str("rl:user42:blocked", "1"), rule: limit, layout: LayoutBlock, status: StatusOver, at: deadline, clue: "block"},
		{name: "…:blocked = 1 without a TTL refuses it for good",
			o: noTTL(str("rl:user42:blocked", "1")), rule: limit, layout: LayoutBlock, status: StatusStuck},
		{name: "a block holding when it began",
			o: str("rl:user42:blocked", "1796160040"), rule: limit, layout: LayoutBlock, status: StatusOver, at: deadline},
		{name: "a ban holding when it ends, in ms",
			o: str("ban:198.51.100.7", "1796160400000"), rule: limit, layout: LayoutBlock, status: StatusOver, at: deadline},
		{name: "rate-limiter-flexible's ExpressBruteFlexible block key",
			o: str("bruteblock:n4bQgYhMfWWaL+qgxVrQFaO/TxsrC4Is0V1sFbDwCgg=", "1"), rule: limit, layout: LayoutBlock, status: StatusOver, at: deadline},
		{name: "…_lockout = 1, no limit known",
			o: str("login_user42_lockout", "1"), rule: Rule{ExpectTTL: true}, layout: LayoutBlock, status: StatusOver, at: deadline},
		{name: "a rule that expects no TTL: over for as long as it exists",
			o: noTTL(str("rl:user42:banned", "1")), rule: forever, layout: LayoutBlock, status: StatusOver},
		{name: "a block word holding 2 is a count",
			o: str("rl:user42:blocked", "2"), rule: limit, layout: LayoutCounter, value: "2", status: StatusOK},
		{name: "a block word holding text",
			o: str("rl:user42:blocked", "true"), rule: limit, layout: LayoutOther, status: StatusNotCounter},
		{name: "a name that says the time a block ends is a timestamp",
			o: str("rl:user42:blocked_until", "1796160400"), rule: limit, layout: LayoutTimestamp, status: StatusOK, at: secs(1796160400)},
		{name: "unblocked is no block",
			o: str("rl:user42:unblocked", "1"), rule: limit, layout: LayoutCounter, value: "1", status: StatusOK},
		{name: "layout = block on any string",
			o: str("flags:u42", "yes"), rule: ruled(LayoutBlock), layout: LayoutBlock, status: StatusOver, at: deadline, clue: `layout = "block"`},
		{name: "layout = block on a hash",
			o: hash("flags:u42", "blocked", "1"), rule: ruled(LayoutBlock), layout: LayoutOther, status: StatusNotCounter},

		// 4. JSON objects holding a count.
		{name: "a JSON object with a count",
			o: str("rl:login:u42", `{"count":3,"lastRequest":1796160099000,"firstRequest":1796160050000}`), rule: limit,
			layout: LayoutCounter, value: "3", status: StatusOK, field: "count", clue: "JSON object"},
		{name: "a JSON count at the limit without a TTL",
			o: noTTL(str("rl:login:u42", `{"hits": 12, "resetAt": "2026-12-01T21:22:00Z"}`)), rule: limit,
			layout: LayoutCounter, value: "12", status: StatusStuck, field: "hits"},
		{name: "a JSON count in a window's key",
			o: str("rl:u42:29936001", `{"current":9}`), rule: limit, layout: LayoutWindow, value: "9", status: StatusWarn, field: "current",
			clue:   "ends in its window",
			window: &WindowName{Identity: "rl:u42", Part: "29936001", Start: secs(1796160060), Length: time.Minute}},
		{name: "a JSON bucket's tokens, empty",
			o: str("bucket:u42", `{"tokens":0,"last":1796160099}`), rule: limit, layout: LayoutBucket, value: "0", status: StatusOver, field: "tokens"},
		{name: "spelled otherwise, and a count before what is left",
			o: str("rl:u42", `{"remaining":4,"Total_Hits":6}`), rule: limit, layout: LayoutCounter, value: "6", status: StatusOK, field: "Total_Hits"},
		{name: "a float count",
			o: str("rl:u42", `{"count":2.5e0}`), rule: limit, layout: LayoutCounter, value: "2.5", status: StatusOK, field: "count"},
		{name: "the rule's json_field",
			o: str("rl:u42", `{"count":1,"n":7}`), rule: named, layout: LayoutCounter, value: "7", status: StatusOK, field: "n"},
		{name: "the rule's json_field missing",
			o: str("rl:u42", `{"count":1}`), rule: named, layout: LayoutOther, status: StatusNotCounter, clue: "json_field"},
		{name: "a count held as a string is no number",
			o: str("rl:u42", `{"count":"3"}`), rule: limit, layout: LayoutOther, status: StatusNotCounter, clue: "text"},
		{name: "a JSON object without a count stays other",
			o: str("session:u42", `{"user":"ada","visits":3}`), rule: limit, layout: LayoutOther, status: StatusNotCounter},
		{name: "a JSON array stays other",
			o: str("rl:u42", `[3]`), rule: limit, layout: LayoutOther, status: StatusNotCounter},
		{name: "broken JSON stays other",
			o: str("rl:u42", `{"count":3`), rule: limit, layout: LayoutOther, status: StatusNotCounter},
		{name: "JSON over MaxDecoded is not parsed",
			o: str("rl:u42", bigJSON), rule: limit, layout: LayoutOther, status: StatusNotCounter},
		{name: "layout = counter on JSON",
			o: str("rl:u42:29936001", `{"count":4}`), rule: ruled(LayoutCounter), layout: LayoutCounter, value: "4", status: StatusOK, field: "count"},
		{name: "layout = window on JSON with no window in the name",
			o: str("rl:u42", `{"count":4}`), rule: ruled(LayoutWindow), layout: LayoutWindow, value: "4", status: StatusOK, field: "count",
			clue: "no window part", window: &WindowName{Identity: "rl:u42"}},
		{name: "layout = gcra on JSON",
			o: str("rl:u42", `{"count":4}`), rule: ruled(LayoutGCRA), layout: LayoutOther, status: StatusNotCounter, clue: `layout = "gcra"`},

		// 5. msgpack maps holding a count.
		{name: "gofiber's limiter: currHits is the count",
			o: str("127.0.0.1", fiber), rule: limit, layout: LayoutCounter, value: "3", status: StatusOK, field: "currHits", clue: "msgpack map"},
		{name: "gofiber's limiter over its limit, in a window's key",
			o: str("rl:u42:29936001", packed(gofiberItem{CurrHits: 11, PrevHits: 2, Exp: 1796160120})), rule: limit,
			layout: LayoutWindow, value: "11", status: StatusOver, field: "currHits",
			window: &WindowName{Identity: "rl:u42", Part: "29936001", Start: secs(1796160060), Length: time.Minute}},
		{name: "a msgpack bucket with float tokens, nested fields skipped",
			o: str("bucket:u42", packed(map[string]any{"meta": map[string]any{"a": []any{1, "x", nil}}, "tokens": 1.5})), rule: limit,
			layout: LayoutBucket, value: "1.5", status: StatusWarn, field: "tokens"},
		{name: "a msgpack count beyond int64",
			o: str("rl:u42", packed(map[string]any{"count": uint64(math.MaxUint64)})), rule: Rule{ExpectTTL: true},
			layout: LayoutCounter, value: "1.8446744073709552e+19", status: StatusOK, field: "count"},
		{name: "a msgpack map without a count stays opaque",
			o: str("rl:u42", packed(map[string]any{"exp": 1796160120})), rule: limit, layout: LayoutOpaque, status: StatusOK},
		{name: "a msgpack map cut short stays opaque",
			o: str("127.0.0.1", fiber[:len(fiber)-2]), rule: limit, layout: LayoutOpaque, status: StatusOK},
		{name: "a msgpack map with bytes after it stays opaque",
			o: str("127.0.0.1", fiber+"\x00"), rule: limit, layout: LayoutOpaque, status: StatusOK},
		{name: "a msgpack map claiming 2^32 entries stays opaque",
			o: str("127.0.0.1", "\xdf\xff\xff\xff\xff\xa5count\x03"), rule: limit, layout: LayoutOpaque, status: StatusOK},
		{name: "a msgpack string claiming 4 GiB stays opaque",
			o: str("127.0.0.1", "\x81\xdb\xff\xff\xff\xffcount"), rule: limit, layout: LayoutOpaque, status: StatusOK},
		{name: "the rule's json_field missing from msgpack",
			o: str("127.0.0.1", fiber), rule: named, layout: LayoutOpaque, status: StatusOK, clue: "json_field"},
	}
}

func TestReadValues(t *testing.T) {
	for _, tt := range valueCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := Read(&tt.o, tt.rule, now)
			if r.Layout != tt.layout {
				t.Fatalf("layout %v, want %v (clue: %s)", r.Layout, tt.layout, r.Clue)
			}
			value := ""
			if n, ok := r.Value.Number(); ok {
				value = strconv.FormatFloat(n, 'g', -1, 64)
			}
			if value != tt.value {
				t.Errorf("value %q, want %q", value, tt.value)
			}
			if st := Evaluate(&r, tt.o.PTTL, tt.rule, now); st != tt.status {
				t.Errorf("status %v, want %v", st, tt.status)
			}
			if d := r.At.Sub(tt.at); r.At.IsZero() != tt.at.IsZero() || d > time.Microsecond || d < -time.Microsecond {
				t.Errorf("at %v, want %v", r.At, tt.at)
			}
			if r.Field != tt.field {
				t.Errorf("field %q, want %q", r.Field, tt.field)
			}
			if !strings.Contains(r.Clue, tt.clue) {
				t.Errorf("clue %q does not say %q", r.Clue, tt.clue)
			}
			var w WindowName
			if tt.window != nil {
				w = *tt.window
			}
			if r.Window != w {
				t.Errorf("window %+v\nwant %+v", r.Window, w)
			}
			// The Store holds what NewCounter reads, the stored string
			// included (a decoded count is not its text).
			rules := &Rules{Fallback: tt.rule}
			s := NewStore(rules)
			s.Apply(Batch{Observed: []Observation{tt.o}})
			got, want := mustGet(t, s, tt.o.Key), NewCounter(&tt.o, rules)
			if got.Raw != tt.o.Raw {
				t.Errorf("the Store's raw %q, stored %q", got.Raw, tt.o.Raw)
			}
			got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
			if got != want {
				t.Errorf("\nNewCounter %+v\nthe Store  %+v", want, got)
			}
		})
	}
}

// A block flag allows no more hits while it lives; the layouts that hold a
// decoded count are refused the dashboard's writes, which would fail on
// the JSON or corrupt the msgpack.
func TestReadValuesRemainingAndWrites(t *testing.T) {
	o := str("rl:user42:blocked", "1")
	if r := Read(&o, Rule{Limit: 10}, now); r.Remaining != 0 || !r.HasRemaining {
		t.Errorf("a block's remaining %v, %v; want 0, true", r.Remaining, r.HasRemaining)
	}
	for _, tt := range []struct {
		o    Observation
		want string
	}{
		{str("rl:u42", `{"count":3}`), "JSON object or msgpack map"},
		{str("bucket:u42", `{"tokens":3}`), "JSON object or msgpack map"},
		{str("rl:user42:blocked", "1"), "block flag"},
		{str("rl:u42", "3"), ""},
	} {
		t.Run(tt.o.Key+"="+tt.o.Raw, func(t *testing.T) {
			c := NewCounter(&tt.o, &Rules{Fallback: Rule{Limit: 10}})
			why := c.Layout.Spec().Refusal(c.Type, c.Field, "INCRBY")
			if tt.want == "" && why != "" || !strings.Contains(why, tt.want) {
				t.Errorf("%s (%s): + refused with %q, want %q", tt.o.Key, c.Layout, why, tt.want)
			}
		})
	}
}

// The window keys of an identity ending in a hash tag are siblings, as
// those after a separator are.
func TestWindowSiblingsAfterAHashTag(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
	keys := []string{"{fw}1796160060000000000", "{fw}1796160000000000000", "{fw}x:1796160000000000000", "{fwx}1796160000000000000"}
	var obs []Observation
	for _, k := range keys {
		obs = append(obs, str(k, "1"))
	}
	s.Apply(Batch{Observed: obs})
	c := mustGet(t, s, keys[0])
	got, more := s.WindowSiblings(c.Server, c.Key, c.Window.Identity, 5)
	if len(got) != 1 || more != 0 || got[0].Key != keys[1] {
		t.Errorf("siblings of %s (identity %q): %v and %d more; want only %s", c.Key, c.Window.Identity, got, more, keys[1])
	}
}

// Among several servers the keys beside a block flag that count its
// client's hits are its own server's only: the same names on another
// server count another limiter's hits.
func TestBlockHitsOnServer(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
	s.Apply(Batch{Server: "eu-1", Observed: []Observation{str("rl:user42:blocked", "1"), str("rl:user42", "7")}})
	s.Apply(Batch{Server: "us-1", Observed: []Observation{str("rl:user42:blocked", "1"), str("rl:user42", "9"), str("rl:user42:29936001", "3")}})
	s.Apply(Batch{Server: "ap-1", Observed: []Observation{str("rl:user42", "2")}})
	for _, tt := range []struct {
		server string
		want   []string // each one's key@server
	}{
		{"eu-1", []string{"rl:user42@eu-1"}},
		{"us-1", []string{"rl:user42@us-1", "rl:user42:29936001@us-1"}},
		{"sa-1", nil},
	} {
		t.Run(tt.server, func(t *testing.T) {
			hits, more := s.BlockHits(tt.server, "rl:user42:blocked", 5)
			var got []string
			for _, c := range hits {
				got = append(got, c.Key+"@"+c.Server)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") || more != 0 {
				t.Errorf("BlockHits on %s = %q and %d more; want %q", tt.server, got, more, tt.want)
			}
		})
	}
}

// FuzzDecodeCount: whatever a string holds, decoding it never panics, a
// count found is a finite number in a field the rule or the known names
// take, the same every time, and JSON read as a count is valid JSON.
func FuzzDecodeCount(f *testing.F) {
	for _, tc := range valueCases() {
		f.Add(tc.o.Raw, tc.rule.JSONField)
	}
	f.Add(`{"count":1,"Count":2,"COUNT":3}`, "")
	f.Add("\x82\xa5count\x01\xa5count\x02", "")
	f.Add("\x81\xa5count\xcb\x7f\xf0\x00\x00\x00\x00\x00\x00", "") // +Inf
	f.Fuzz(func(t *testing.T, raw, field string) {
		enc := encodingOf(raw)
		if len(raw) > MaxDecoded && enc != encodedNot {
			t.Fatalf("%d bytes decoded as %v", len(raw), enc)
		}
		d, ok := decodeCount(raw, enc, field)
		if !ok {
			return
		}
		n, isNum := d.value.Number()
		if !isNum || math.IsInf(n, 0) || math.IsNaN(n) {
			t.Fatalf("count %+v", d.value)
		}
		if !wantedField(d.field, field) {
			t.Fatalf("field %q, rule's %q", d.field, field)
		}
		if again, _ := decodeCount(raw, enc, field); again != d {
			t.Fatalf("decoded %+v, then %+v", d, again)
		}
		if enc == encodedJSON && !json.Valid([]byte(raw)) {
			t.Fatalf("invalid JSON %q read as %+v", raw, d)
		}
	})
}

// A block flag's detail names the keys beside it that count its client's
// hits: the name without its block part and that name's windows, or the
// name with another part in its place; never another flag, a key of
// another client, nor text.
func TestBlockHits(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
	var obs []Observation
	for key, raw := range map[string]string{
		"rl:user42:blocked":  "1",
		"rl:user42":          "7",
		"rl:user42:29936001": "3",
		"rl:user42:ban":      "1",
		"rl:user4":           "2",
		"rl:user42:note":     "hello",
		"bruteblock:h4sh=":   "1",
		"brutefree:h4sh=":    "4",
		"brutecounter:h4sh=": "1",
		"brutefree:0ther=":   "4",
		"login_u7_lockout":   "1",
		"login_u7":           "5",
	} {
		obs = append(obs, str(key, raw))
	}
	s.Apply(Batch{Observed: obs})
	for _, tt := range []struct {
		key  string
		n    int
		want []string
		more int
	}{
		{"rl:user42:blocked", 5, []string{"rl:user42", "rl:user42:29936001"}, 0},
		{"rl:user42:blocked", 1, []string{"rl:user42"}, 1},
		{"bruteblock:h4sh=", 5, []string{"brutecounter:h4sh=", "brutefree:h4sh="}, 0},
		{"login_u7_lockout", 5, []string{"login_u7"}, 0},
		{"rl:user4", 5, nil, 0},
	} {
		t.Run(tt.key+" n"+strconv.Itoa(tt.n), func(t *testing.T) {
			hits, more := s.BlockHits("", tt.key, tt.n)
			var got []string
			for _, c := range hits {
				got = append(got, c.Key)
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") || more != tt.more {
				t.Errorf("BlockHits = %q and %d more; want %q and %d more", got, more, tt.want, tt.more)
			}
		})
	}
}
