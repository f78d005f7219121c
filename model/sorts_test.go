package model

import "testing"

// Each sort is one entry of sorts, whole: a name for the header, a number
// for every sort but by name, and an exact order wherever its numbers can
// fail to order the keys. A SortKey added without its entry fails here.
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
		if (sp.numbered == nil) != (sp.exact == nil) {
			t.Errorf("sort %v: where its numbers may not order the keys, it needs an exact order, and only there", k)
		}
	}
}
