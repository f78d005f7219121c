package model

import (
	"testing"
	"time"
)

func TestEvaluate(t *testing.T) {
	limited := Rule{Pattern: "rl:*", Limit: 100, ExpectTTL: true}
	forever := Rule{Pattern: "views:*", Limit: 100, ExpectTTL: false}
	noLimit := Rule{ExpectTTL: true}
	custom := Rule{Limit: 10, WarnAt: 0.5, ExpectTTL: true}
	num := func(raw string) Value { return ParseValue(raw) }
	const ttl = 30_000

	tests := []struct {
		name string
		typ  string
		v    Value
		pttl int64
		rule Rule
		want Status
	}{
		{"under the limit with a TTL", "string", num("10"), ttl, limited, StatusOK},
		{"at warn_at", "string", num("80"), ttl, limited, StatusWarn},
		{"just under warn_at", "string", num("79.9"), ttl, limited, StatusOK},
		{"at the limit", "string", num("100"), ttl, limited, StatusOver},
		{"past the limit", "string", num("250"), ttl, limited, StatusOver},
		{"no TTL, under the limit", "string", num("3"), PTTLNoExpiry, limited, StatusNoExpiry},
		{"no TTL, at the limit", "string", num("100"), PTTLNoExpiry, limited, StatusStuck},
		{"no TTL, a float past the limit", "string", num("100.5"), PTTLNoExpiry, limited, StatusStuck},
		{"a TTL of 0 ms left is a TTL", "string", num("1"), 0, limited, StatusOK},
		{"no TTL expected: never no-expiry", "string", num("3"), PTTLNoExpiry, forever, StatusOK},
		{"no TTL expected: never stuck", "string", num("500"), PTTLNoExpiry, forever, StatusOver},
		{"no TTL expected: warn", "string", num("90"), PTTLNoExpiry, forever, StatusWarn},
		{"no limit: no TTL is still no-expiry", "string", num("1000000"), PTTLNoExpiry, noLimit, StatusNoExpiry},
		{"no limit: never over", "string", num("1000000"), ttl, noLimit, StatusOK},
		{"custom warn_at", "string", num("5"), ttl, custom, StatusWarn},
		{"custom warn_at, under", "string", num("4"), ttl, custom, StatusOK},
		{"negative values are under the limit", "string", num("-5"), ttl, limited, StatusOK},
		// Redis refuses to increment an infinite value, and one beyond
		// float64 has no number here: neither is over a limit or stuck.
		{"inf is no counter", "string", num("inf"), ttl, limited, StatusNotCounter},
		{"inf without TTL is not stuck", "string", num("inf"), PTTLNoExpiry, limited, StatusNotCounter},
		{"-inf without TTL is not no-expiry", "string", num("-INFINITY"), PTTLNoExpiry, limited, StatusNotCounter},
		{"nan", "string", num("nan"), PTTLNoExpiry, limited, StatusNotCounter},
		{"beyond float64 is no counter", "string", num("1e400"), PTTLNoExpiry, limited, StatusNotCounter},
		{"the largest float64 is stuck", "string", num("1.7976931348623157e308"), PTTLNoExpiry, limited, StatusStuck},
		{"text", "string", num("hello"), ttl, limited, StatusNotCounter},
		{"text without TTL is not no-expiry", "string", num("hello"), PTTLNoExpiry, limited, StatusNotCounter},
		{"a hash", "hash", Value{}, PTTLNoExpiry, limited, StatusNotCounter},
		{"a list with a number-looking value", "list", num("5"), ttl, limited, StatusNotCounter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A string's number is a counter's value; any other type is read as other.
			r := Reading{Layout: LayoutCounter, Value: tt.v}
			if tt.typ != "string" {
				r = Reading{Layout: LayoutOther}
			}
			if got := Evaluate(&r, tt.pttl, tt.rule, t0); got != tt.want {
				t.Errorf("%s: Evaluate = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}

func TestStatusNames(t *testing.T) {
	for s := range NumStatuses {
		got, ok := ParseStatus(s.String())
		if !ok || got != s {
			t.Errorf("ParseStatus(%q) = %v, %v", s.String(), got, ok)
		}
	}
	if _, ok := ParseStatus("fine"); ok {
		t.Error(`ParseStatus("fine") succeeded`)
	}
	for st := range NumStatuses {
		want := st == StatusStuck || st == StatusExtending || st == StatusNoExpiry || st == StatusLeak
		if st.Problem() != want {
			t.Errorf("%v.Problem() = %v: only stuck, extending, no-expiry and leak fail a check", st, st.Problem())
		}
	}
	// The order is the severity: the dashboard and check list the worst first.
	order := []Status{StatusStuck, StatusExtending, StatusNoExpiry, StatusLeak, StatusOver, StatusWarn, StatusOK, StatusNotCounter}
	for i := 1; i < len(order); i++ {
		if order[i-1] >= order[i] {
			t.Errorf("%v is not more severe than %v", order[i-1], order[i])
		}
	}
}

// Each layout's statuses mean what they say for it: a bucket is over when
// empty, a GCRA key only while it refuses hits, a past window's key with no
// TTL is a leak, and only the expiry checks apply to opaque state.
func TestEvaluateLayouts(t *testing.T) {
	limited := Rule{Limit: 10, ExpectTTL: true}
	minute := Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}
	noLimit := Rule{ExpectTTL: true}
	past := "rl:u42:29935000"    // with the rule's minute: a window from hours ago
	current := "rl:u42:29936001" // this minute
	bucket := func(tokens string) Observation { return hash("b:u42", "tokens", tokens, "refilledAt", "1796160099000") }
	zlog := func(inWindow int64) Observation {
		return logOf("zset", "log:u42", 20, 1796160000, 1796160099, inWindow)
	}
	const none = PTTLNoExpiry
	tests := []struct {
		name string
		o    Observation
		pttl int64
		rule Rule
		want Status
	}{
		{"counter: at the limit, no TTL", str("rl:a", "10"), none, limited, StatusStuck},
		{"counter: under it, no TTL", str("rl:a", "3"), none, limited, StatusNoExpiry},
		{"counter: at the limit", str("rl:a", "10"), ttl, limited, StatusOver},
		{"counter: near it", str("rl:a", "8"), ttl, limited, StatusWarn},
		{"counter: under it", str("rl:a", "3"), ttl, limited, StatusOK},
		{"counter: text", str("rl:a", "x"), none, limited, StatusNotCounter},

		{"window: a past one with no TTL leaks", str(past, "3"), none, minute, StatusLeak},
		{"window: a past one at the limit leaks (nobody reads it)", str(past, "10"), none, minute, StatusLeak},
		{"window: a past one with a TTL", str(past, "3"), ttl, minute, StatusOK},
		{"window: the current one at the limit, no TTL", str(current, "10"), none, minute, StatusStuck},
		{"window: the current one, no TTL", str(current, "3"), none, minute, StatusNoExpiry},
		{"window: the current one at the limit", str(current, "10"), ttl, minute, StatusOver},
		{"window: a past hour stamp, no TTL", str("rl:u42:2026113008", "3"), none, limited, StatusLeak},

		{"log: at the limit, no TTL", zlog(10), none, minute, StatusStuck},
		{"log: under it, no TTL", zlog(3), none, minute, StatusNoExpiry},
		{"log: at the limit", zlog(12), ttl, minute, StatusOver},
		{"log: near it", zlog(9), ttl, minute, StatusWarn},
		{"log: under it", zlog(2), ttl, minute, StatusOK},

		{"bucket: empty, no TTL", bucket("0"), none, limited, StatusStuck},
		{"bucket: empty", bucket("0"), ttl, limited, StatusOver},
		{"bucket: less than a token is empty", bucket("0.4"), ttl, limited, StatusOver},
		{"bucket: empty, with no limit known", bucket("0"), ttl, noLimit, StatusOver},
		{"bucket: nearly empty", bucket("2"), ttl, limited, StatusWarn},
		{"bucket: full is fine, not over", bucket("10"), ttl, limited, StatusOK},
		{"bucket: tokens left, no TTL", bucket("5"), none, limited, StatusNoExpiry},
		{"bucket: two strings' tokens, empty", str("rl.{u42}.tokens", "0"), ttl, limited, StatusOver},

		// 312931303.11663097 is 3.1 s ahead: with 10 a minute (one each 6 s)
		// a burst of 10 is allowed while it is less than 54 s ahead.
		{"gcra: a number of 3e8 is not over 10", str("rate:u42", "312931303.11663097"), ttl, minute, StatusOK},
		{"gcra: refusing hits", str("rate:u42", "312931358.5"), ttl, minute, StatusOver},
		{"gcra: just allows one more", str("rate:u42", "312931353.5"), ttl, minute, StatusOK},
		{"gcra: with no limit known, never over", str("rate:u42", "312931358.5"), ttl, noLimit, StatusOK},
		{"gcra: nanoseconds, refusing", str("throttled:u42", "1796160158000000000"), ttl, minute, StatusOver},
		{"gcra: no TTL", str("rate:u42", "312931358.5"), none, minute, StatusNoExpiry},

		{"timestamp: past, no TTL: leak", str("ban:u42:until", "1796160000"), none, limited, StatusLeak},
		{"timestamp: ahead, no TTL", str("ban:u42:until", "1796160999"), none, limited, StatusNoExpiry},
		{"timestamp: past, with a TTL", str("ban:u42:until", "1796160000"), ttl, limited, StatusOK},

		{"opaque: no TTL", str("bucket4j:u42", "\xac\xed\x00\x05"), none, limited, StatusNoExpiry},
		{"opaque: with a TTL", str("bucket4j:u42", "\xac\xed\x00\x05"), ttl, limited, StatusOK},

		{"other: text, no TTL", str("session", "hello"), none, limited, StatusNotCounter},
		{"other: a set", Observation{Key: "s", Type: "set", Len: 2, InWindow: -1}, none, limited, StatusNotCounter},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Read(&tt.o, tt.rule, now)
			if got := Evaluate(&r, tt.pttl, tt.rule, now); got != tt.want {
				t.Errorf("%s: %v reads as %v, want %v (%s)", tt.name, r.Layout, got, tt.want, r.Clue)
			}
			// expect_ttl = false holds for every layout: no key is then
			// no-expiry, leak or stuck, whatever else it is.
			forever := tt.rule
			forever.ExpectTTL = false
			r = Read(&tt.o, forever, now)
			got := Evaluate(&r, tt.pttl, forever, now)
			if got == StatusNoExpiry || got == StatusLeak || got == StatusStuck {
				t.Errorf("%s, expect_ttl = false: %v", tt.name, got)
			}
			if tt.pttl >= 0 && got != tt.want {
				t.Errorf("%s, expect_ttl = false with a TTL: %v, want %v as when expected", tt.name, got, tt.want)
			}
		})
	}
}
