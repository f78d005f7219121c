package model

import (
	"cmp"
	"slices"
	"testing"
	"time"
)

// Each sort is one entry of sorts, whole: a name for the header, a number
// for every sort but by name, an exact order wherever its numbers can fail
// to order the keys, and the column whose title picks it. A SortKey added
// without its entry fails here.
func TestEverySortIsOneSpec(t *testing.T) {
	names := map[string]bool{}
	for k := range numSortKeys {
		sp := &sorts[k]
		if sp.name == "" || names[sp.name] {
			t.Errorf("sort %d has no name of its own: %q", k, sp.name)
		}
		names[sp.name] = true
		if (sp.number == nil) != (k == SortKeyName) {
			t.Errorf("sort %v: only the sort by name goes without a number", k)
		}
		if back, ok := k.Column().Sort(); !ok || back != k {
			t.Errorf("sort %v orders by column %v, whose title sorts by %v (%v)", k, k.Column().Title(), back, ok)
		}
		if (sp.numbered == nil) != (sp.exact == nil) {
			t.Errorf("sort %v: where its numbers may not order the keys, it needs an exact order, and only there", k)
		}
	}
}

// Every column has a title of its own, which both tables head it with.
func TestEveryColumnHasATitle(t *testing.T) {
	titles := map[string]bool{}
	for c := range NumColumns {
		if title := c.Title(); title == "" || title == "?" || titles[title] {
			t.Errorf("column %d has no title of its own: %q", c, title)
		}
		titles[c.Title()] = true
	}
}

// `s` steps through every sort, each once, and comes back to the first;
// the header shows each by a short name.
func TestSortKeyCycle(t *testing.T) {
	var names []string
	k := SortKeyName
	for range numSortKeys {
		names = append(names, k.String())
		k = k.Next()
	}
	if k != SortKeyName {
		t.Errorf("after %d steps: %v, want key again", numSortKeys, k)
	}
	if want := []string{"key", "value", "ttl", "% limit", "rate", "status"}; !slices.Equal(names, want) {
		t.Errorf("the cycle: %q, want %q", names, want)
	}
}

func TestStoreSorts(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{
		// rl: limit 100; others: the fallback, limit 10.
		read("rl:b", "50", 30_000, 0),               // 50%, deadline +30s
		read("rl:a", "50", 20_000, 0),               // 50%, deadline +20s
		read("rl:c", "90", PTTLNoExpiry, 0),         // 90%, no TTL
		read("x", "9", 8_000, 15*time.Second),       // 90%, deadline +23s: read later, less left
		read("text", "hi", PTTLNoExpiry, 0),         // no number
		read("big", "9223372036854775806", 1000, 0), // float64 cannot tell these apart
		read("big2", "9223372036854775807", 1000, 0),
	}})
	// Give rl:b a rate.
	s.Apply(Batch{Observed: []Observation{read("rl:b", "60", 30_000, 20*time.Second)}})

	for _, tc := range []struct {
		by   SortKey
		want []string
	}{
		{SortKeyName, []string{"big", "big2", "rl:a", "rl:b", "rl:c", "text", "x"}},
		{SortValue, []string{"big2", "big", "rl:c", "rl:b", "rl:a", "x", "text"}},
		{SortTTL, []string{"rl:c", "text", "big", "big2", "rl:a", "x", "rl:b"}},
		{SortPercent, []string{"big", "big2", "rl:c", "x", "rl:b", "rl:a", "text"}},
		{SortRate, []string{"rl:b", "big", "big2", "rl:a", "rl:c", "text", "x"}},
		{SortStatus, []string{"rl:c", "big", "big2", "x", "rl:a", "rl:b", "text"}}, // no-expiry, over, warn, ok, not-counter
	} {
		t.Run(tc.by.String(), func(t *testing.T) {
			for _, reverse := range []bool{false, true} {
				s.SetSort(tc.by)
				s.SetReverse(reverse)
				if s.Sort() != tc.by || s.Reverse() != reverse {
					t.Fatalf("Sort(), Reverse() = %v, %v after SetSort(%v), SetReverse(%v)", s.Sort(), s.Reverse(), tc.by, reverse)
				}
				want := slices.Clone(tc.want)
				if reverse { // the mirror image: no TTL last by TTL, no number first by value
					slices.Reverse(want)
				}
				if got := keys(s.Rows(0, 100)); !slices.Equal(got, want) {
					t.Errorf("by %v, reversed %v: %v, want %v", tc.by, reverse, got, want)
				}
			}
		})
	}
}

// Key names sort as people read them, numbers by their value, in the
// Store's order by name and in every tie.
func TestStoreNaturalKeyOrder(t *testing.T) {
	s := NewStore(testRules())
	var b Batch
	for _, key := range []string{"user:100", "user:2", "user:10", "user:1:b", "user:1", "user:02", "user:", "User:3"} {
		b.Observed = append(b.Observed, read(key, "1", 1000, 0))
	}
	s.Apply(b)
	want := []string{"User:3", "user:", "user:1", "user:1:b", "user:02", "user:2", "user:10", "user:100"}
	if got := keys(s.Rows(0, 100)); !slices.Equal(got, want) {
		t.Errorf("by key: %q, want %q", got, want)
	}
	s.SetSort(SortValue) // all alike: the names decide
	if got := keys(s.Rows(0, 100)); !slices.Equal(got, want) {
		t.Errorf("by value, all equal: %q, want %q", got, want)
	}
	if i := s.IndexOf("user:10"); i != 6 {
		t.Errorf("IndexOf(user:10) = %d, want 6", i)
	}
}

// modelCompare is the order SortKey's docs describe, written out plainly.
func modelCompare(s *Store, a, b Counter) int {
	desc := func(x float64, xok bool, y float64, yok bool) int {
		switch {
		case xok && !yok:
			return -1
		case !xok && yok:
			return 1
		}
		return cmp.Compare(y, x)
	}
	var c int
	switch s.Sort() {
	case SortValue:
		x, xok := a.Value.Number()
		y, yok := b.Value.Number()
		c = desc(x, xok, y, yok)
		if a.Value.Kind == KindInt && b.Value.Kind == KindInt {
			c = cmp.Compare(b.Value.Int, a.Value.Int)
		}
	case SortTTL:
		switch {
		case !a.HasTTL() && b.HasTTL():
			c = -1
		case a.HasTTL() && !b.HasTTL():
			c = 1
		case a.HasTTL():
			c = a.Deadline().Compare(b.Deadline())
		}
	case SortPercent:
		ra, _ := s.RuleOf(a)
		rb, _ := s.RuleOf(b)
		x, xok := a.Percent(ra.Limit)
		y, yok := b.Percent(rb.Limit)
		c = desc(x, xok, y, yok)
	case SortRate:
		c = cmp.Compare(b.Rate, a.Rate)
	case SortStatus:
		c = cmp.Compare(a.Status, b.Status)
	case SortKeyName: // the tie break below is the whole order
	}
	if c == 0 {
		c = modelCompareKeys(a.ID(), b.ID())
	}
	if s.Reverse() {
		return -c
	}
	return c
}
