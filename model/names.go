package model

import (
	"slices"
	"sort"
)

// The order by name, kept for the other sorts. Each sort breaks its ties by
// name, so a stable sort by the sort's own key of the keys in name order
// gives the whole order without comparing a name, and comparing names,
// a cache miss each, is most of what a sort of a million keys costs.
//
// order.names is every entry in name order as of the last sort (nil: none
// kept), order.named how many entries there were then, and order.gone the
// removals since, in turn: entry indexes move when one is removed (the
// last entry takes its place), so the names are brought up to date at the
// next sort, not at each removal, which would take another 4 bytes a key
// to find a name's place.
type nameRemoval struct{ gone, last int32 }

// maxGone is how many removals, as a share of the entries, the order by
// name keeps track of before it is dropped, to be sorted again by name
// at the next sort: the log stays below 2 bytes a key.
const maxGone = 4

// removedName notes that entry gone is being removed and the entry at last
// moves into its place (last == gone: none moves).
func (o *order) removedName(gone, last int32) {
	if o.names == nil {
		return
	}
	o.gone = append(o.gone, nameRemoval{gone, last})
	if len(o.gone) > int(last+1)/maxGone+64 {
		o.names, o.gone = nil, nil
	}
}

// byName returns every entry in name order and each entry's place in it.
// The order kept is brought up to date with the removals since, and the
// entries that arrived since are placed in it by binary search; when there
// is none kept, or too many arrived, every entry is sorted by name. The
// Store keeps the order (do not change it); the places are the caller's.
func (s *Store) byName() (names, place []int32) {
	o := &s.order
	n := len(s.entries)
	byKey := func(a, b int32) int { return CompareKeys(s.entries[a].key, s.entries[b].key) }
	var unnamed []int32
	if o.names != nil {
		most := max(n, o.named) // the most entries there were since
		for _, r := range o.gone {
			most = max(most, int(r.last)+1)
		}
		place = make([]int32, most)
		for e := range place {
			place[e] = -1 // arrived since, unless the names say otherwise
		}
		for p, e := range o.names {
			place[e] = int32(p)
		}
		for _, r := range o.gone {
			if p := place[r.gone]; p >= 0 {
				o.names[p] = -1
			}
			place[r.gone] = -1 // for an entry that arrives there later
			if r.last != r.gone {
				p := place[r.last]
				place[r.gone], place[r.last] = p, -1
				if p >= 0 {
					o.names[p] = r.gone
				}
			}
		}
		for e := range n {
			if place[e] < 0 {
				unnamed = append(unnamed, int32(e))
			}
		}
	}
	if o.names == nil || len(unnamed) > n/8 {
		names = make([]int32, n)
		for e := range names {
			names[e] = int32(e)
		}
		slices.SortFunc(names, byKey)
	} else {
		slices.SortFunc(unnamed, byKey)
		names = make([]int32, 0, n)
		kept := slices.DeleteFunc(o.names, func(e int32) bool { return e < 0 })
		for _, u := range unnamed {
			key := s.entries[u].key
			i := sort.Search(len(kept), func(i int) bool { return CompareKeys(key, s.entries[kept[i]].key) < 0 })
			names = append(append(names, kept[:i]...), u)
			kept = kept[i:]
		}
		names = append(names, kept...)
	}
	place = slices.Grow(place[:0], n)[:n]
	for p, e := range names {
		place[e] = int32(p)
	}
	o.names, o.named, o.gone = names, n, o.gone[:0]
	return names, place
}
