package model

import "testing"

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
		if got := Evaluate(tt.typ, tt.v, tt.pttl, tt.rule); got != tt.want {
			t.Errorf("%s: Evaluate = %v, want %v", tt.name, got, tt.want)
		}
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
	if !StatusStuck.Problem() || !StatusNoExpiry.Problem() || StatusOver.Problem() {
		t.Error("Problem: only stuck and no-expiry fail a check")
	}
}
