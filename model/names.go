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
// order.names is every entry in name order as of the last sort, with -1
// where one was removed since; order.namePos is each entry's place in it,
// -1 for an entry that arrived since. Both are nil until a sort keeps them.

// unname notes that entry e is being removed.
func (o *order) unname(e int32) {
	if o.names != nil {
		if p := o.namePos[e]; p >= 0 {
			o.names[p] = -1
		}
		o.namePos[e] = -1
	}
}

// renameName is rename for the order by name: the entry at index from,
// whose index to was removed, now lives at to.
func (o *order) renameName(from, to int32) {
	if o.names != nil {
		p := o.namePos[from]
		o.namePos[to], o.namePos[from] = p, -1
		if p >= 0 {
			o.names[p] = to
		}
	}
}

// byName returns every entry in name order, a slice the Store keeps (do
// not change it): the order kept, with the entries that arrived since
// placed in it by binary search, or, when there is none kept or too many
// arrived, keys (every entry) sorted by name.
func (s *Store) byName(keys []int32) []int32 {
	o := &s.order
	byKey := func(a, b int32) int { return CompareKeys(s.entries[a].key, s.entries[b].key) }
	var unnamed []int32
	if o.names != nil {
		for e, p := range o.namePos {
			if p < 0 {
				unnamed = append(unnamed, int32(e))
			}
		}
	}
	if o.names == nil || len(unnamed) > len(s.entries)/8 {
		names := slices.Clone(keys)
		slices.SortFunc(names, byKey)
		s.keepNames(names)
		return names
	}
	slices.SortFunc(unnamed, byKey)
	names := make([]int32, 0, len(s.entries))
	kept := slices.DeleteFunc(o.names, func(e int32) bool { return e < 0 })
	for _, u := range unnamed {
		key := s.entries[u].key
		i := sort.Search(len(kept), func(i int) bool { return CompareKeys(key, s.entries[kept[i]].key) < 0 })
		names = append(append(names, kept[:i]...), u)
		kept = kept[i:]
	}
	names = append(names, kept...)
	s.keepNames(names)
	return names
}

// keepNames keeps names, every entry in name order, as the order by name.
func (s *Store) keepNames(names []int32) {
	o := &s.order
	o.names = names
	o.namePos = slices.Grow(o.namePos[:0], len(names))[:len(names)]
	for i, e := range names {
		o.namePos[e] = int32(i)
	}
}
