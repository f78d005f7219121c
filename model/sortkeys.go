package model

import (
	"math"
)

// keyed is an entry with its place in a sort as a number: by cls, then by
// key, then by name (the order it is given in, as radixSort is stable).
type keyed struct {
	key uint64
	e   int32
	cls uint8
}

// sortByKeys writes to out every entry in the Store's sort, not reversed,
// from each entry's place in name order (byName): its place in the sort is
// worked out once, as a number, and the numbers are sorted by their bytes,
// a pass over them for each byte that is not the same in all, with no
// compare. It reports false, and writes nothing, for values it cannot
// turn into numbers that compare as compareValues does: floats among
// integers too large for a float64 to hold exactly.
func (s *Store) sortByKeys(place, out []int32) bool {
	number := s.sortNumber(s.quiet)
	if number == nil {
		return false
	}
	recs := make([]keyed, len(s.entries))
	for e := range s.entries { // in memory order, not the names'
		key, cls := number(&s.entries[e])
		recs[place[e]] = keyed{key: key, e: int32(e), cls: cls}
	}
	for i, r := range radixSort(recs) {
		out[i] = r.e
	}
	return true
}

// sortNumber is how an entry's place in the Store's sort (other than by
// name) is a number, as compareEntries orders it: lower numbers first,
// cls before key, rates as of quiet. It is nil when the values cannot be
// (see sortByKeys).
func (s *Store) sortNumber(quiet int64) func(x *entry) (key uint64, cls uint8) {
	switch s.sortKey {
	case SortValue:
		floats, huge := s.floats > 0, s.hugeInts > 0
		if floats && huge {
			return nil
		}
		return func(x *entry) (uint64, uint8) {
			if x.kind == KindInt && !floats {
				return ^orderInt(int64(x.num)), 0 // larger first
			}
			if n, ok := x.value().Number(); ok {
				return ^orderFloat(n), 0
			}
			return 0, 1 // no number: last
		}
	case SortTTL:
		return func(x *entry) (uint64, uint8) {
			if x.pttl < 0 {
				return 0, 0 // no TTL: first
			}
			return orderInt(x.deadline()), 1
		}
	case SortPercent:
		return func(x *entry) (uint64, uint8) {
			if p, ok := x.percent(s.rules); ok {
				return ^orderFloat(p), 0
			}
			return 0, 1
		}
	case SortRate:
		return func(x *entry) (uint64, uint8) { return ^orderFloat(rateAsOf(x, quiet)), 0 } // fastest first
	case SortStatus:
		return func(x *entry) (uint64, uint8) { return uint64(x.status), 0 }
	case SortKeyName: // nil: the order by name is byName itself
	}
	return nil
}

// orderInt maps n to a number that sorts as n does.
func orderInt(n int64) uint64 { return uint64(n) ^ 1<<63 }

// orderFloat maps f to a number that sorts as cmp.Compare orders floats:
// NaN below all, -0 the same as 0.
func orderFloat(f float64) uint64 {
	switch {
	case f != f:
		return 0
	case f == 0:
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// radixSort sorts recs by cls, then key, stably: a least significant digit
// radix sort, a byte at a time, that skips the bytes all share (a value
// below 256 takes one pass). It may return another slice.
func radixSort(recs []keyed) []keyed {
	if len(recs) < 2 {
		return recs
	}
	var counts [radixDigits][256]int
	countDigits(&counts, recs)
	var tmp []keyed
	for d := range counts {
		if shared(recs, &counts[d], d) {
			continue
		}
		if tmp == nil {
			tmp = make([]keyed, len(recs))
		}
		startAt(&counts[d])
		scatter(recs, tmp, &counts[d], d)
		recs, tmp = tmp, recs
	}
	return recs
}

// radixDigits is how many digits radixSort sorts by: a byte of key each,
// then cls.
const radixDigits = 9

// countDigits adds to counts, for each digit of radixSort, how many of
// recs have each of its values.
func countDigits(counts *[radixDigits][256]int, recs []keyed) {
	for i := range recs {
		k := recs[i].key
		for d := range 8 {
			counts[d][byte(k>>(8*d))]++
		}
		counts[8][recs[i].cls]++
	}
}

// digit is digit d of r, as radixSort orders by them.
func digit(r *keyed, d int) byte {
	if d == 8 {
		return r.cls
	}
	return byte(r.key >> (8 * d))
}

// shared reports whether every one of recs has the same digit d, whose
// values count counts.
func shared(recs []keyed, count *[256]int, d int) bool {
	return len(recs) == 0 || count[digit(&recs[0], d)] == len(recs)
}

// startAt turns the counts of a digit's values into where the first rec
// of each goes in the sorted order.
func startAt(count *[256]int) {
	sum := 0
	for v := range count {
		count[v], sum = sum, sum+count[v]
	}
}

// scatter moves recs, in turn, to where digit d puts them in to (see
// startAt), stably; it can be done in parts, in order.
func scatter(recs, to []keyed, at *[256]int, d int) {
	for i := range recs {
		v := digit(&recs[i], d)
		to[at[v]] = recs[i]
		at[v]++
	}
}
