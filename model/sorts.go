package model

import (
	"cmp"
	"math"
)

// SortKey is one of the orders the dashboard cycles through with `s`.
// Each is listed as it reads unreversed; Store.SetReverse reads it from the
// bottom up, its exact mirror image, ties and keys left last included (so
// that `S` costs a pass over the order, not a sort):
//
//   - SortKeyName: key names as people read them, runs of digits by their
//     number ("user:2", "user:10", "user:100"); reversed, Z to A.
//   - SortValue, SortPercent: largest first, keys without a number (or a
//     limit) last; reversed, those first, then the smallest.
//   - SortTTL: keys without expiry first, as the ones an incident is about,
//     then the least time left; reversed, the most time left first and the
//     keys without expiry last.
//   - SortRate: fastest rise first, falling keys last.
//   - SortStatus: most severe first (stuck, no-expiry, ...: Status order).
//
// Every order breaks ties by key name, in the same order as SortKeyName
// (and reversed with it), so it is total and the same for the same data.
// Each is one entry of sorts.
type SortKey uint8

const (
	SortKeyName SortKey = iota
	SortValue
	SortTTL
	SortPercent
	SortRate
	SortStatus
	numSortKeys
)

// sortSpec is one sort: all the Store needs to order its entries by it.
// An entry's place in it is a number (number), so that a sort of every
// key is a radix sort of their numbers (sortByKeys) and a compare of two
// keys compares their numbers (compareEntries): the two cannot disagree.
type sortSpec struct {
	name   string // for the header
	column Column // whose values it orders by: a click on its title picks it
	// number is x's place: lower first, by cls, then by key; equal
	// numbers go by name. nil: by name alone.
	number func(n numbering, x *entry) (key uint64, cls uint8)
	// exact, when set, orders the entries instead of number where
	// numbered says the numbers cannot.
	numbered func(n numbering) bool
	exact    func(x, y *entry) int
}

// sorts is every SortKey's sortSpec.
var sorts = [numSortKeys]sortSpec{
	SortKeyName: {name: "key", column: ColumnKey},
	SortValue: {
		name: "value", column: ColumnValue,
		number: func(n numbering, x *entry) (uint64, uint8) {
			if x.kind == KindInt && !n.floats {
				return ^orderInt(int64(x.num)), 0 // larger first, exact beyond 2^53
			}
			if v, ok := x.value().Number(); ok {
				return ^orderFloat(v), 0
			}
			return 0, 1 // no number: last
		},
		// A float64 holds neither every integer beyond 2^53 nor any
		// decimal as an integer: among both, two integers compare exactly
		// and the others as floats.
		numbered: func(n numbering) bool { return !n.floats || !n.hugeInts },
		exact:    compareValues,
	},
	SortTTL: {
		name: "ttl", column: ColumnTTL,
		number: func(_ numbering, x *entry) (uint64, uint8) {
			if x.pttl < 0 {
				return 0, 0 // no TTL: first
			}
			return orderInt(x.deadline()), 1 // deadlines do not move as time passes, so neither does the order
		},
	},
	SortPercent: {
		name: "% limit", column: ColumnLimit,
		number: func(n numbering, x *entry) (uint64, uint8) {
			if p, ok := x.percent(n.rules); ok {
				return ^orderFloat(p), 0
			}
			return 0, 1 // no limit or no number: last
		},
	},
	SortRate: {
		name: "rate", column: ColumnRate,
		number: func(n numbering, x *entry) (uint64, uint8) { return rateNumber(rateAsOf(x, n.quiet)), 0 },
	},
	SortStatus: {
		name: "status", column: ColumnStatus,
		number: func(_ numbering, x *entry) (uint64, uint8) { return uint64(x.status), 0 }, // most severe first
	},
}

// numbering is what an entry's number depends on besides the entry. A
// sort worked out a step at a time keeps the one it began with.
type numbering struct {
	rules    *Rules
	quiet    int64 // rates as of then (see QuietUntil)
	floats   bool  // the Store holds a decimal: values are numbered as floats
	hugeInts bool  // and an integer beyond 2^53
}

// numbering is the Store's numbering as it is now, rates as of quiet.
func (s *Store) numbering(quiet int64) numbering {
	return numbering{rules: s.rules, quiet: quiet, floats: s.floats > 0, hugeInts: s.hugeInts > 0}
}

// String is the sort's short name, for the header.
func (k SortKey) String() string {
	if k < numSortKeys {
		return sorts[k].name
	}
	return "?"
}

// Next is the sort that `s` moves to: each in turn, then SortKeyName again.
func (k SortKey) Next() SortKey { return (k + 1) % numSortKeys }

// canNumber reports whether number orders entries as they are under n.
func (sp *sortSpec) canNumber(n numbering) bool {
	return sp.number != nil && (sp.numbered == nil || sp.numbered(n))
}

// compare orders x and y by sp under n, not by name: 0 for a tie.
func (sp *sortSpec) compare(n numbering, x, y *entry) int {
	switch {
	case sp.number == nil:
		return 0
	case !sp.canNumber(n):
		return sp.exact(x, y)
	}
	xk, xc := sp.number(n, x)
	yk, yc := sp.number(n, y)
	return cmp.Or(cmp.Compare(xc, yc), cmp.Compare(xk, yk))
}

// compare orders entries a and b in the current sort.
func (s *Store) compare(a, b int32) int { return s.compareEntries(&s.entries[a], &s.entries[b]) }

// compareEntries orders x and y in the current sort: by its numbers, ties
// by name, reversed with it.
func (s *Store) compareEntries(x, y *entry) int {
	c := sorts[s.sortKey].compare(s.numbering(s.quiet), x, y)
	if c == 0 {
		c = CompareKeys(x.key, y.key)
	}
	if s.reverse {
		return -c
	}
	return c
}

// sortNumber is the current sort's number of an entry (see sortSpec), with
// the Store's numbering as it is now and rates as of quiet; nil for the
// sort by name and where the numbers cannot order the entries (see
// sortByKeys).
func (s *Store) sortNumber(quiet int64) func(x *entry) (key uint64, cls uint8) {
	sp, n := &sorts[s.sortKey], s.numbering(quiet)
	if !sp.canNumber(n) {
		return nil
	}
	return func(x *entry) (uint64, uint8) { return sp.number(n, x) }
}

// compareValues orders values as the sort by value does where they cannot
// be numbered: larger numbers first, then keys holding no number.
func compareValues(x, y *entry) int {
	if x.kind == KindInt && y.kind == KindInt {
		return cmp.Compare(int64(y.num), int64(x.num)) // exact, beyond float64's 2^53
	}
	xn, xok := x.value().Number()
	yn, yok := y.value().Number()
	if xok != yok {
		if xok {
			return -1
		}
		return 1
	}
	return cmp.Compare(yn, xn)
}

// rateNumber is a rate's place in the sort by rate: the fastest rise
// first.
func rateNumber(r float64) uint64 { return ^orderFloat(r) }

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
