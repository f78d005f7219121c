package model

import "testing"

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
