package model

import (
	"testing"
	"time"
	"unicode/utf8"
)

// TestLayoutTable fails on a layout without a complete entry: a constant
// added without one would be named "", evaluated and shown as nothing.
func TestLayoutTable(t *testing.T) {
	seen := map[string]Layout{}
	for l := range NumLayouts {
		s := l.Spec()
		if s.Name == "" || s.Cell == "" || s.NumberNoun == "" || s.Refusal == nil || s.status == nil || s.remaining == nil {
			t.Errorf("Layout(%d) %q has no complete entry in layouts: %+v", l, s.Name, s)
		}
		if n := utf8.RuneCountInString(s.Cell); n > 7 {
			t.Errorf("%s: cell %q is %d cells, more than the LAYOUT column's 7", s.Name, s.Cell, n)
		}
		if other, dup := seen[s.Name]; dup {
			t.Errorf("Layout(%d) and Layout(%d) are both named %q", other, l, s.Name)
		}
		seen[s.Name] = l
		got, err := ParseLayout(s.Name)
		if s.Ruled && (got != l || err != nil) {
			t.Errorf("ParseLayout(%q) = %v, %v; want %v", s.Name, got, err, l)
		}
		if !s.Ruled && err == nil {
			t.Errorf("ParseLayout(%q) = %v: a rule may not impose %s", s.Name, got, s.Name)
		}
		if s.HashField && s.Ruled && l != LayoutAuto && s.FieldReads == "" {
			t.Errorf("%s reads a hash field, and config's message would not say what of it", s.Name)
		}
	}
}

// TestLayoutNames pins each constant's name: config files, JSON and CSV
// spell layouts so, and inserting a constant must not move one name to
// another layout.
func TestLayoutNames(t *testing.T) {
	want := map[Layout]string{
		LayoutAuto: "auto", LayoutCounter: "counter", LayoutWindow: "window", LayoutLog: "log",
		LayoutBucket: "bucket", LayoutGCRA: "gcra", LayoutTimestamp: "timestamp", LayoutOpaque: "opaque",
		LayoutBlock: "block", LayoutOther: "other", NumLayouts: "unknown",
	}
	if len(want) != int(NumLayouts)+1 {
		t.Errorf("%d layouts pinned, %d declared: pin the new one's name here", len(want)-1, NumLayouts)
	}
	for l, name := range want {
		if l.String() != name {
			t.Errorf("Layout %d is %q, want %q", l, l.String(), name)
		}
	}
}

// TestEvaluateAllocatesNothing: a key is read and evaluated per reading,
// a million keys a pass; a layout's status and remaining come through
// funcs of the table, which must not make the reading escape to the heap.
func TestEvaluateAllocatesNothing(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 100, Window: time.Minute, ExpectTTL: true}}
	for _, o := range []Observation{
		str("rl:c", "42"),
		str("rl:user42:29936001", "7"),
		str("rate:user42", "312931303.5"),
		hash("bucket:u42", "tokens", "3", "refilledAt", "1796160099000"),
	} {
		t.Run(o.Key, func(t *testing.T) {
			var c Counter
			if n := testing.AllocsPerRun(100, func() { c = NewCounter(&o, rules) }); n != 0 {
				t.Errorf("%s (%s): %v allocations a reading, want 0", o.Key, c.Layout, n)
			}
		})
	}
}
