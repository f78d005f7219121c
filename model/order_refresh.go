package model

import (
	"cmp"
	"slices"
	"sort"
)

// rebuildShare decides between placing moved keys one by one and sorting
// everything again: when more than 1/rebuildShare of the keys moved, one
// sort of the (mostly ordered) whole is cheaper.
const rebuildShare = 32

// keepDirty is the most capacity the list of moved entries keeps between
// refreshes: enough for the batches of a steady feed.
const keepDirty = 8 * blockSize

// refresh brings the order up to date with the entries: the sort, the
// filter and every key that moved.
func (s *Store) refresh() {
	o := &s.order
	if !o.resort && !o.flip && !o.refilter && len(o.dirty) == 0 && !o.recount && !o.refade && o.sweep == noSweep && o.job == nil {
		return
	}
	if o.refilter {
		s.startFilter()
	}
	if o.resort {
		o.job = nil // a sort set since replaces the one being worked out
		if s.sortInSteps() {
			return
		}
	}
	if o.job != nil && !s.sortOn(true) {
		return
	}
	if !o.resort && len(o.dirty)*o.share > len(s.entries) && s.sortInSteps() {
		return // so many moved that placing them costs more than a sort
	}
	moved := s.takeMoved()
	if o.resort || len(moved)*o.share > len(s.entries) {
		s.rebuild()
	} else {
		for _, e := range moved {
			if o.home[e] != noBlock {
				o.take(e)
			}
		}
		if o.flip {
			o.mirror()
		}
		if o.refade && s.sortKey == SortRate {
			moved = append(moved, s.sortFading()...)
		}
		o.settle() // no empty block left to search
		for _, e := range moved {
			s.place(e)
		}
	}
	if o.sweep != noSweep {
		s.sweepStep()
	}
	o.settle()
	o.resort, o.flip, o.refilter, o.refade = false, false, false, false
	o.quiet = s.quiet
	o.dirty = moved[:0]
	if cap(o.dirty) > keepDirty {
		o.dirty = nil // a first pass's worth: not worth keeping
	}
}

// sortInSteps begins a sort of every entry, to be worked out a step per
// read (see sortjob.go), and reports true; false when there are too few
// entries for it to be worth it or they cannot be numbered, for refresh
// to sort them at once. The job numbers each entry as it is then, so the
// marks of the keys that moved are dropped; the ones that move while it
// is worked out are placed once it is shown, and the order shown
// meanwhile has the moved keys where they were and lacks the new ones.
func (s *Store) sortInSteps() bool {
	o := &s.order
	if len(s.entries) <= o.atOnce || !s.beginSort() {
		return false
	}
	o.dirty = s.takeMoved()[:0]
	o.resort = false
	s.sortOn(false) // beginning is a step of its own
	return true
}

// sortOn takes the sort being worked out a step on (unless step is false),
// with the order it replaces kept up to date in all but the keys that
// moved, and reports whether it is done; then refresh places those as
// usual.
func (s *Store) sortOn(step bool) (done bool) {
	o := &s.order
	if o.flip {
		o.mirror()
		o.flip = false
	}
	done = step && s.sortStep()
	if !done {
		if o.sweep != noSweep {
			s.sweepStep()
		}
		o.settle()
		o.refilter, o.refade = false, false
	}
	return done
}

// markMoved notes that entry i may belong elsewhere in the order.
func (s *Store) markMoved(i int32) {
	if !s.entries[i].moved {
		s.entries[i].moved = true
		s.order.dirty = append(s.order.dirty, i)
	}
}

// takeMoved returns the entries marked moved, each once, and clears their
// marks. It reuses the dirty list's memory.
func (s *Store) takeMoved() []int32 {
	moved := s.order.dirty[:0]
	for _, e := range s.order.dirty {
		if int(e) < len(s.entries) && s.entries[e].moved {
			s.entries[e].moved = false
			moved = append(moved, e)
		}
	}
	return moved
}

// rebuild sorts every entry again and cuts the result into blocks: from
// the order by name kept since the last sort (see names.go), by each
// entry's place in the sort as a number (sortByKeys), so that no name is
// compared but those of keys that arrived since.
func (s *Store) rebuild() {
	o := &s.order
	keys := make([]int32, 0, len(s.entries))
	for _, b := range o.blocks {
		keys = append(keys, b.keys...)
	}
	for e, h := range o.home {
		if h == noBlock {
			keys = append(keys, int32(e))
		}
	}
	names, place := s.byName()
	mirrored := s.reverse
	switch {
	case s.sortKey == SortKeyName:
		copy(keys, names)
	case !s.sortByKeys(place, keys):
		slices.SortFunc(keys, s.compare) // reversed, if it is
		mirrored = false
	}
	if mirrored {
		slices.Reverse(keys) // the reversed sort is its mirror image, ties too
	}
	o.setBlocks(keys)
}

// place puts entry e, which is in no block, where the sort says.
func (s *Store) place(e int32) {
	o := &s.order
	if len(o.blocks) == 0 {
		o.blocks = append(o.blocks, o.newBlock([]int32{e}))
		return
	}
	before := func(k int32) bool { return s.compare(e, k) < 0 }
	if sp, n := &sorts[s.sortKey], s.numbering(s.quiet); sp.canNumber(n) { // e's number worked out once, not at each compare (a rate costs an exp)
		x := &s.entries[e]
		key, cls := sp.number(n, x)
		before = func(k int32) bool {
			y := &s.entries[k]
			yKey, yCls := sp.number(n, y)
			c := cmp.Or(cmp.Compare(cls, yCls), cmp.Compare(key, yKey))
			if c == 0 {
				c = CompareKeys(x.key, y.key)
			}
			if s.reverse {
				c = -c
			}
			return c < 0
		}
	}
	// The last block whose first key sorts before e, then the place in it.
	j := max(0, sort.Search(len(o.blocks), func(j int) bool { return before(o.blocks[j].keys[0]) })-1)
	b := o.blocks[j]
	i := sort.Search(len(b.keys), func(i int) bool { return before(b.keys[i]) })
	b.keys = slices.Insert(b.keys, i, e)
	o.home[e] = b.id
	if o.passes(e) {
		b.shown++
	}
	if o.passesIncoming(e) {
		b.incoming++
	}
	o.recount = true
	if len(b.keys) > 2*o.size {
		half := len(b.keys) / 2
		next := o.newBlock(slices.Clone(b.keys[half:]))
		b.keys = b.keys[:half]
		b.shown -= next.shown
		b.incoming -= next.incoming
		o.blocks = slices.Insert(o.blocks, j+1, next)
	}
}
