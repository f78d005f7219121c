package model

import (
	"slices"
	"sort"
)

// The order's blocks hold about blockSize keys: a block is split in two
// when it grows past twice that, and neighbours are merged when together
// they fit in one. Placing a key costs about log2(n) compares plus moving
// part of one block, so a few changed keys among a million cost
// microseconds, not a sort.
const blockSize = 512

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
