package model

import (
	"cmp"
	"slices"
	"sort"
)

// The order's blocks hold about blockSize keys: a block is split in two
// when it grows past twice that, and neighbours are merged when together
// they fit in one. Placing a key costs about log2(n) compares plus moving
// part of one block, so a few changed keys among a million cost
// microseconds, not a sort.
const blockSize = 512

// rebuildShare decides between placing moved keys one by one and sorting
// everything again: when more than 1/rebuildShare of the keys moved, one
// sort of the (mostly ordered) whole is cheaper.
const rebuildShare = 32

// keepDirty is the most capacity the list of moved entries keeps between
// refreshes: enough for the batches of a steady feed.
const keepDirty = 8 * blockSize

// noBlock is order.home's value for an entry that is in no block yet.
const noBlock = -1

// order is the Store's entries in the current sort, cut into blocks, and
// which of them pass the filter. It is brought up to date by Store.refresh
// before anything reads it.
//
// Entries whose sort position may have changed (their entry.moved is set)
// stay where they were until the refresh: it takes them all out of their
// blocks, then places each again by binary search, so every search sees
// only keys that are in order.
type order struct {
	blocks []*block // in sort order; after a refresh none is empty
	byID   []*block // block id -> block; nil for a free id
	free   []int32  // free block ids
	home   []int32  // entry -> id of the block holding it, or noBlock
	pass   bitset   // a bit per entry: it passes the filter shown; nil when that is empty
	passed filter   // the filter shown
	dirty  []int32  // entries to place again: may repeat or be stale, entry.moved is the truth
	shown  int      // how many entries pass the filter shown, as of the last refresh

	// A new filter is applied a step at a time (see Store.sweepStep), to
	// incoming, a copy of pass, while the order shows passed; then it is
	// shown in its place.
	target   filter // the filter being applied
	incoming bitset // a bit per entry: it passes target; below sweep, checked
	sweep    int    // entries below it are checked against target; noSweep: none is being applied
	among    uint8  // which entries target may change: sweepPassing, sweepFailing or sweepAll
	check    filter // what they are checked against: target, less what passed asks already
	step     int    // how many entries a refresh checks (sweepStep)

	// What else changed since the last refresh.
	resort   bool  // the sort: sort everything again
	flip     bool  // the direction: read the order backwards
	refilter bool  // the filter: check every entry again
	recount  bool  // how many keys some blocks show: recompute the starts
	refade   bool  // the quiet (sorted by rate): rates not 0 faded
	quiet    int64 // the Store's quiet the order by rate is as of

	// The entries in name order as of the last sort, how many there were
	// and the removals since, for the next sort (see names.go).
	names []int32
	named int
	gone  []nameRemoval

	// A new sort of more than atOnce entries, being worked out a step at a
	// time (see sortjob.go); nil when none is.
	job    *sortJob
	atOnce int

	// blockSize and rebuildShare; tests make them small and large, to
	// exercise splits, merges and placement with a few keys.
	size, share int
}

// bitset is a bit per entry.
type bitset []uint64

func (b bitset) has(e int32) bool { return b[e/64]&(1<<(e%64)) != 0 }

// set sets e's bit, growing b as needed.
func (b *bitset) set(e int32, ok bool) {
	for int(e/64) >= len(*b) {
		*b = append(*b, 0)
	}
	if ok {
		(*b)[e/64] |= 1 << (e % 64)
	} else {
		(*b)[e/64] &^= 1 << (e % 64)
	}
}

// block is a run of consecutive keys of the order.
type block struct {
	id    int32
	keys  []int32 // entry indexes, in sort order
	shown int     // how many of keys pass the filter shown
	start int     // position in the filtered order of its first shown key
	// incoming is how many of keys pass the filter being applied, while
	// one is.
	incoming int
}

func newOrder() order {
	return order{size: blockSize, share: rebuildShare, passed: parseFilter(""), sweep: noSweep, step: sweepStep, atOnce: sortAtOnce}
}

// newBlock makes a block of keys and records it as their home.
func (o *order) newBlock(keys []int32) *block {
	b := &block{keys: keys}
	b.shown, b.incoming = o.countShown(keys)
	if n := len(o.free); n > 0 {
		b.id, o.free = o.free[n-1], o.free[:n-1]
		o.byID[b.id] = b
	} else {
		b.id = int32(len(o.byID))
		o.byID = append(o.byID, b)
	}
	for _, e := range keys {
		o.home[e] = b.id
	}
	return b
}

func (o *order) freeBlock(b *block) {
	o.byID[b.id] = nil
	o.free = append(o.free, b.id)
}

// passes reports whether entry e passes the filter shown.
func (o *order) passes(e int32) bool { return o.pass == nil || o.pass.has(e) }

// passesIncoming reports whether entry e passes the filter being applied,
// as far as it is known; false when none is.
func (o *order) passesIncoming(e int32) bool { return o.sweep != noSweep && o.incoming.has(e) }

func (o *order) setPass(e int32, ok bool) {
	if o.pass != nil {
		o.pass.set(e, ok)
	}
}

// countShown returns how many of keys pass the filter shown and the one
// being applied.
func (o *order) countShown(keys []int32) (shown, incoming int) {
	shown = len(keys)
	if o.pass != nil {
		shown = 0
		for _, e := range keys {
			if o.pass.has(e) {
				shown++
			}
		}
	}
	if o.sweep != noSweep {
		for _, e := range keys {
			if o.incoming.has(e) {
				incoming++
			}
		}
	}
	return shown, incoming
}

// take removes entry e from its block.
func (o *order) take(e int32) {
	b := o.byID[o.home[e]]
	i := slices.Index(b.keys, e)
	b.keys = slices.Delete(b.keys, i, i+1)
	if o.passes(e) {
		b.shown--
	}
	if o.passesIncoming(e) {
		b.incoming--
	}
	o.home[e] = noBlock
	o.recount = true
}

// rename records that the entry at index from now lives at index to (the
// Store moved it there to fill a hole).
func (o *order) rename(from, to int32) {
	if h := o.home[from]; h != noBlock {
		b := o.byID[h]
		b.keys[slices.Index(b.keys, from)] = to
	}
	o.home[to] = o.home[from]
	o.setPass(to, o.passes(from))
	if o.sweep != noSweep {
		o.incoming.set(to, o.incoming.has(from))
	}
}

// add makes room for a new entry e, in no block yet, which passes the
// filter shown and the one being applied as passes and incoming say.
func (o *order) add(e int32, passes, incoming bool) {
	o.home = append(o.home, noBlock)
	o.setPass(e, passes)
	if o.sweep != noSweep {
		o.incoming.set(e, incoming)
	}
}

// settle drops empty blocks, merges neighbours that fit in one block, and
// recomputes where each block starts in the filtered order.
func (o *order) settle() {
	kept := o.blocks[:0]
	for _, b := range o.blocks {
		n := len(kept)
		switch {
		case len(b.keys) == 0:
			o.freeBlock(b)
		case n > 0 && len(kept[n-1].keys)+len(b.keys) <= o.size:
			o.merge(kept[n-1], b)
		default:
			kept = append(kept, b)
		}
	}
	clear(o.blocks[len(kept):])
	o.blocks = kept
	start := 0
	for _, b := range o.blocks {
		b.start = start
		start += b.shown
	}
	o.shown = start
	o.recount = false
}

// merge moves the keys of b, the block after into, to the end of into, and
// frees b.
func (o *order) merge(into, b *block) {
	into.keys = append(into.keys, b.keys...)
	into.shown += b.shown
	into.incoming += b.incoming
	for _, e := range b.keys {
		o.home[e] = into.id
	}
	o.freeBlock(b)
}

// locate returns the index of the block, and the index in its keys, of
// the key at position pos of the filtered order; pos must be below o.shown.
func (o *order) locate(pos int) (blk, i int) {
	blk = sort.Search(len(o.blocks), func(j int) bool { b := o.blocks[j]; return b.start+b.shown > pos })
	b := o.blocks[blk]
	skip := pos - b.start
	if o.pass == nil {
		return blk, skip
	}
	for i, e := range b.keys {
		if o.passes(e) {
			if skip == 0 {
				return blk, i
			}
			skip--
		}
	}
	panic("model: block counts disagree with the filter") // unreachable while counts are kept
}

// position is entry e's position in the filtered order, or -1 when the
// filter hides it or it is in no block yet (it arrived while a sort is
// worked out).
func (o *order) position(e int32) int {
	if !o.passes(e) || o.home[e] == noBlock {
		return -1
	}
	b := o.byID[o.home[e]]
	pos := b.start
	for _, k := range b.keys {
		if k == e {
			return pos
		}
		if o.passes(k) {
			pos++
		}
	}
	panic("model: an entry is missing from its block") // unreachable while homes are kept
}

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

// sortFading sorts again the keys whose rates faded since the order was
// sorted by rate (o.quiet), taken from its two ends: a rate can only fade
// if it was not 0, and rates that were not 0 are at the ends, rising keys
// first and falling keys last (the other way reversed), either side of the
// keys at 0 (when there are none, the first end is every key). Fading
// keeps a rate's sign, or brings it to 0: the keys it
// brings there it returns, out of the order, to be placed by name among
// the others at 0. The keys between the ends keep their places.
func (s *Store) sortFading() (zero []int32) {
	o := &s.order
	fading := func(e int32) bool { return s.entries[e].hasRateAsOf(o.quiet) }
	for _, back := range []bool{false, true} {
		end := o.takeEnd(fading, back)
		if len(end) == 0 {
			continue
		}
		// Each key's rate, worked out once, and what it is worked out
		// from: keys read alike (at one moment, by the same change) have
		// the same rate for ever, and keep the order the names gave them
		// without the names, which are far apart in memory, being read.
		type rated struct {
			rate     uint64 // rateNumber
			at       int64
			sums     [2]float32
			e, place int32
		}
		keys := make([]rated, 0, len(end))
		for i, e := range end {
			x := &s.entries[e]
			if r := s.rateOf(x); r != 0 {
				keys = append(keys, rated{rateNumber(r), x.at, [2]float32{x.sumDelta, x.sumSecs}, e, int32(i)})
			} else {
				zero = append(zero, e)
			}
		}
		sortMostlySorted(keys, func(a, b rated) int {
			c := cmp.Compare(a.rate, b.rate)
			if c == 0 {
				if a.at == b.at && a.sums == b.sums {
					return cmp.Compare(a.place, b.place)
				}
				c = CompareKeys(s.entries[a.e].key, s.entries[b.e].key)
			}
			if s.reverse {
				return -c
			}
			return c
		})
		sorted := make([]int32, len(keys))
		for i, k := range keys {
			sorted[i] = k.e
		}
		var blocks []*block
		for chunk := range slices.Chunk(sorted, o.size) {
			blocks = append(blocks, o.newBlock(chunk))
		}
		if back {
			o.blocks = append(o.blocks, blocks...)
		} else {
			o.blocks = slices.Insert(o.blocks, 0, blocks...)
		}
		o.recount = true
	}
	return zero
}

// sortMostlySorted sorts x, which is mostly in order already, by compare:
// in one second of quiet few fading rates overtake one another, so an
// insertion sort costs about a compare per key; it hands over to a full
// sort when too many keys are out of place.
func sortMostlySorted[T any](x []T, compare func(a, b T) int) {
	moves := 0
	for i := 1; i < len(x); i++ {
		if compare(x[i-1], x[i]) <= 0 {
			continue
		}
		v, j := x[i], i-1
		for ; j >= 0 && compare(x[j], v) > 0; j-- {
			x[j+1] = x[j]
		}
		x[j+1] = v
		if moves += i - j; moves > 8*len(x) {
			slices.SortFunc(x, compare)
			return
		}
	}
}

// takeEnd takes out of the order the keys at its start (at its end, when
// back) for which in holds, up to the first for which it does not, and
// returns them in their order. It leaves empty blocks for settle.
func (o *order) takeEnd(in func(int32) bool, back bool) []int32 {
	var taken []int32 // backwards, when back
	for j := range o.blocks {
		if back {
			j = len(o.blocks) - 1 - j
		}
		b := o.blocks[j]
		n := 0 // how many of its keys, from that end, are in
		for n < len(b.keys) {
			i := n
			if back {
				i = len(b.keys) - 1 - n
			}
			if !in(b.keys[i]) {
				break
			}
			n++
		}
		cut := b.keys[:n]
		if back {
			cut = b.keys[len(b.keys)-n:]
		}
		for _, e := range cut {
			if o.passes(e) {
				b.shown--
			}
			if o.passesIncoming(e) {
				b.incoming--
			}
			o.home[e] = noBlock
		}
		if back {
			for i := len(cut) - 1; i >= 0; i-- {
				taken = append(taken, cut[i])
			}
		} else {
			taken = append(taken, cut...)
		}
		if back {
			b.keys = b.keys[:len(b.keys)-n]
		} else {
			b.keys = slices.Delete(b.keys, 0, n)
		}
		if len(b.keys) > 0 {
			break // the first key that is not in
		}
	}
	if back {
		slices.Reverse(taken)
	}
	return taken
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

// setBlocks makes keys, in order, the whole order, cut into blocks.
func (o *order) setBlocks(keys []int32) {
	clear(o.blocks)
	clear(o.byID)
	o.blocks, o.byID, o.free = o.blocks[:0], o.byID[:0], o.free[:0]
	for chunk := range slices.Chunk(keys, o.size) {
		o.blocks = append(o.blocks, o.newBlock(chunk))
	}
}

// mirror turns the order upside down: the reversed sort is the exact
// mirror image of the other, so its blocks and their keys are the same,
// read backwards.
func (o *order) mirror() {
	slices.Reverse(o.blocks)
	for _, b := range o.blocks {
		slices.Reverse(b.keys)
	}
	o.recount = true
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
