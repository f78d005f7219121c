package model

import (
	"slices"
	"strconv"
	"testing"
	"time"
)

// A token bucket kept in two strings, tokens left and the bucket's clock,
// in keys of one name with two suffixes, is read by what the keys hold:
// the count as a bucket's tokens (over when empty), the time as its clock
// (a timestamp, not a GCRA deadline), in whichever order they arrive and
// whatever the suffixes; keys that are no such pair stay as they were.
func TestTwoStringBucket(t *testing.T) {
	ns := strconv.FormatInt(now.Add(-300*time.Millisecond).UnixNano(), 10) // mennanov/limiters: the last refill, in ns
	ms := strconv.FormatInt(now.Add(-2*time.Second).UnixMilli(), 10)
	old := strconv.FormatInt(now.Add(-48*time.Hour).Unix(), 10)
	type want struct {
		key    string
		layout Layout
		value  string // "" for none
		status Status
	}
	tests := []struct {
		name  string
		rule  Rule
		reads [][2]string // key, value, read in turn
		want  []want
	}{
		{"mennanov: a drained bucket", Rule{}, [][2]string{{"{tb}available", "0"}, {"{tb}last", ns}},
			[]want{{"{tb}available", LayoutBucket, "0", StatusOver}, {"{tb}last", LayoutTimestamp, "", StatusOK}}},
		{"mennanov, the clock read first", Rule{}, [][2]string{{"{tb}last", ns}, {"{tb}available", "0"}},
			[]want{{"{tb}available", LayoutBucket, "0", StatusOver}, {"{tb}last", LayoutTimestamp, "", StatusOK}}},
		{"mennanov, with the raceCheck's version beside them", Rule{}, [][2]string{{"{tb}available", "3"}, {"{tb}version", "7"}, {"{tb}last", ns}},
			[]want{{"{tb}available", LayoutBucket, "3", StatusOK}, {"{tb}last", LayoutTimestamp, "", StatusOK}, {"{tb}version", LayoutCounter, "7", StatusOver}}},
		{"any suffixes, the count read again after its clock", Rule{}, [][2]string{{"rl:u42:left", "1"}, {"rl:u42:stamp", ms}, {"rl:u42:left", "1"}},
			[]want{{"rl:u42:left", LayoutBucket, "1", StatusWarn}, {"rl:u42:stamp", LayoutTimestamp, "", StatusOK}}},
		{"two counts: no clock", Rule{}, [][2]string{{"rl:u42:hits", "3"}, {"rl:u42:errors", "1"}},
			[]want{{"rl:u42:hits", LayoutCounter, "3", StatusOK}, {"rl:u42:errors", LayoutCounter, "1", StatusOK}}},
		{"a time two days old is no clock", Rule{}, [][2]string{{"rl:u42:hits", "3"}, {"rl:u42:seen", old}},
			[]want{{"rl:u42:hits", LayoutCounter, "3", StatusOK}}},
		{"names that end in digits pair nothing", Rule{}, [][2]string{{"rl:u42:1", "3"}, {"rl:u42:2", ns}},
			[]want{{"rl:u42:1", LayoutCounter, "3", StatusOK}}},
		{"a rule that says counter keeps it one", Rule{Layout: LayoutCounter}, [][2]string{{"{tb}available", "0"}, {"{tb}last", ns}},
			[]want{{"{tb}available", LayoutCounter, "0", StatusOK}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rule := tt.rule
			rule.Pattern, rule.Limit, rule.Window, rule.ExpectTTL = "*", 5, time.Minute, true
			s := NewStore(&Rules{List: []Rule{rule}})
			for i, kv := range tt.reads {
				o := str(kv[0], kv[1])
				o.At = now.Add(time.Duration(i) * time.Millisecond)
				s.Apply(Batch{Observed: []Observation{o}})
			}
			// One pass (check without --watch): each key read once, in key
			// order, then paired.
			latest := map[string]Observation{}
			for i, kv := range tt.reads {
				o := str(kv[0], kv[1])
				o.At = now.Add(time.Duration(i) * time.Millisecond)
				latest[kv[0]] = o
			}
			var pass []*Counter
			for _, o := range latest {
				c := NewCounter(&o, s.Rules())
				pass = append(pass, &c)
			}
			slices.SortFunc(pass, func(a, b *Counter) int { return CompareKeys(a.Key, b.Key) })
			PairBuckets(pass, s.Rules())
			passed := map[string]Counter{}
			for _, c := range pass {
				passed[c.Key] = *c
			}
			for _, w := range tt.want {
				c := mustGet(t, s, w.key)
				if p := passed[w.key]; p.Layout != c.Layout || p.Status != c.Status || p.Clue != c.Clue || !p.At.Equal(c.At) {
					t.Errorf("%s: one pass reads it as %s %s at %s, the Store as %s %s at %s", w.key, p.Layout, p.Status, p.At, c.Layout, c.Status, c.At)
				}
				value := ""
				if n, ok := c.Value.Number(); ok {
					value = strconv.FormatFloat(n, 'f', -1, 64)
				}
				if c.Layout != w.layout || value != w.value || c.Status != w.status {
					t.Errorf("%s: %s, value %q, %s; want %s, value %q, %s (clue: %s)", w.key, c.Layout, value, c.Status, w.layout, w.value, w.status, c.Clue)
				}
				if w.layout == LayoutBucket && c.At.IsZero() {
					t.Errorf("%s: a bucket without its clock's time", w.key)
				}
			}
			// The header's counts follow a key read again by its neighbour.
			var byStatus [NumStatuses]int
			for _, c := range s.Rows(0, s.Len()) {
				byStatus[c.Status]++
			}
			if got := s.Counts().ByStatus; got != byStatus {
				t.Errorf("the header counts %v, the keys are %v", got, byStatus)
			}
		})
	}
}
