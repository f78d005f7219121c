package model

import (
	"strconv"
	"testing"
	"time"
)

// Extending is a counting key's status: a counter, a window counter and a
// hash-field counter whose TTL is pushed back while they grow for longer
// than one whole window (without a rule's window: the 10 s TTL they are
// given; a window counter's name says 60 s) are extending, and not
// before; a log, a bucket and a GCRA key, whose deadline moves on every
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
		after  time.Duration           // extending once it grew for longer; 0: never
		read   func(i int) Observation // the i-th reading, 200 ms after the last
	}{
		{"a counter", limit, LayoutCounter, 10 * time.Second, func(i int) Observation { return str("rl:c", n(i)) }},
		{"a float counter (INCRBYFLOAT)", limit, LayoutCounter, 10 * time.Second, func(i int) Observation { return str("rl:cost", f(0.5+float64(i))) }},
		{"a window counter: floor(now / 60 s)", limit, LayoutWindow, time.Minute, func(i int) Observation { return str("rl:user42:29936001", n(i)) }},
		{"a window counter: the window's start in epoch seconds", limit, LayoutWindow, time.Minute, func(i int) Observation { return str("rl:user42_1796160060", n(i)) }},
		{"the rule's hash field", field, LayoutCounter, 10 * time.Second, func(i int) Observation { return hash("hits:u42", "count", n(i), "note", "vip") }},
		{"a hash's largest field", limit, LayoutCounter, 10 * time.Second, func(i int) Observation { return hash("hits:u42", "/login", "3", "/api", n(i+3)) }},
		{"a sorted-set log", limit, LayoutLog, 0, func(i int) Observation {
			return logOf("zset", "log:u42", int64(i+1), nowS-5, nowS+0.2*float64(i), int64(i+1))
		}},
		{"a list log", limit, LayoutLog, 0, func(i int) Observation {
			return logOf("list", "log:u42", int64(i+1), nowS-5, nowS+0.2*float64(i), int64(i+1))
		}},
		{"a bucket refilling", limit, LayoutBucket, 0, func(i int) Observation {
			return hash("bucket:u42", "tokens", n(i), "refilledAt", f((nowS+0.2*float64(i))*1000))
		}},
		{"a GCRA key (redis_rate)", limit, LayoutGCRA, 0, func(i int) Observation {
			return str("rate:user42", f(312931303.5+0.2*float64(i)))
		}},
	}
	const step = 200 * time.Millisecond
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(&Rules{Fallback: tt.rule})
			var c Counter
			for i := range 350 { // 70 s of hits, each pushing the deadline back to 10 s away
				o := tt.read(i)
				o.At, o.PTTL = now.Add(time.Duration(i)*step), 10_000
				s.Apply(Batch{Observed: []Observation{o}})
				c = mustGet(t, s, o.Key)
				if c.Layout != tt.layout {
					t.Fatalf("read as %s, want %s", c.Layout, tt.layout)
				}
				if grew := time.Duration(i) * step; c.Status == StatusExtending && (tt.after == 0 || grew <= tt.after) {
					t.Fatalf("extending after %s of pushes, want %s", grew, map[bool]string{true: "never", false: "more than " + tt.after.String()}[tt.after == 0])
				}
			}
			if got := c.Status == StatusExtending; got != (tt.after > 0) {
				t.Errorf("status %s after 70 s of pushes, want extending %v", c.Status, tt.after > 0)
			}
		})
	}
}
