package model

import (
	"cmp"
	"slices"
)

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
