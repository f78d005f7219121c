package model

import (
	"strconv"
	"testing"
	"time"
)

// Extending is a counting key's status: a counter, a window counter and a
// hash-field counter whose TTL is pushed back while they grow are
// extending; a log, a bucket and a GCRA key, whose deadline moves on every
// hit by design, never are, however their numbers move. Each key is read
// as its layout (asserted, so that a "never" is not a misread key's).
func TestExtendingByLayout(t *testing.T) {
	limit := Rule{Pattern: "*", Limit: 1000, ExpectTTL: true}
	field := Rule{Pattern: "*", Limit: 1000, ExpectTTL: true, Field: "count"}
	n := func(i int) string { return strconv.Itoa(i + 1) }
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	nowS := float64(now.Unix())
	tests := []struct {
		name   string
		rule   Rule
		layout Layout
		want   bool
		read   func(i int) Observation // the i-th reading, 200 ms after the last
	}{
		{"a counter", limit, LayoutCounter, true, func(i int) Observation { return str("rl:c", n(i)) }},
		{"a float counter (INCRBYFLOAT)", limit, LayoutCounter, true, func(i int) Observation { return str("rl:cost", f(0.5+float64(i))) }},
		{"a window counter: floor(now / 60 s)", limit, LayoutWindow, true, func(i int) Observation { return str("rl:user42:29936001", n(i)) }},
		{"a window counter: the window's start in epoch seconds", limit, LayoutWindow, true, func(i int) Observation { return str("rl:user42_1796160060", n(i)) }},
		{"the rule's hash field", field, LayoutCounter, true, func(i int) Observation { return hash("hits:u42", "count", n(i), "note", "vip") }},
		{"a hash's largest field", limit, LayoutCounter, true, func(i int) Observation { return hash("hits:u42", "/login", "3", "/api", n(i+3)) }},
		{"a sorted-set log", limit, LayoutLog, false, func(i int) Observation {
			return logOf("zset", "log:u42", int64(i+1), nowS-5, nowS+0.2*float64(i), int64(i+1))
		}},
		{"a list log", limit, LayoutLog, false, func(i int) Observation {
			return logOf("list", "log:u42", int64(i+1), nowS-5, nowS+0.2*float64(i), int64(i+1))
		}},
		{"a bucket refilling", limit, LayoutBucket, false, func(i int) Observation {
			return hash("bucket:u42", "tokens", n(i), "refilledAt", f((nowS+0.2*float64(i))*1000))
		}},
		{"a GCRA key (redis_rate)", limit, LayoutGCRA, false, func(i int) Observation {
			return str("rate:user42", f(312931303.5+0.2*float64(i)))
		}},
	}
	for _, tt := range tests {
		s := NewStore(&Rules{Fallback: tt.rule})
		var c Counter
		for i := range 20 { // 4 s of hits, each pushing the deadline back to 10 s away
			o := tt.read(i)
			o.At, o.PTTL = now.Add(time.Duration(i)*200*time.Millisecond), 10_000
			s.Apply(Batch{Observed: []Observation{o}})
			c = mustGet(t, s, o.Key)
			if c.Layout != tt.layout {
				t.Errorf("%s: read as %s, want %s", tt.name, c.Layout, tt.layout)
				break
			}
			if !tt.want && c.Status == StatusExtending {
				t.Errorf("%s: extending at reading %d", tt.name, i)
				break
			}
		}
		if got := c.Status == StatusExtending; got != tt.want {
			t.Errorf("%s: status %s after 4 s of pushes, want extending %v", tt.name, c.Status, tt.want)
		}
	}
}
