package model

import (
	"cmp"
	"strings"
)

// Key names are ordered as people read them, runs of digits by the number
// they spell: the dashboard's order by name, every sort's ties, and the
// order snapshot, check and repair list keys in (internal/report sorts by
// KeyPrefix, then CompareKeys).

// CompareKeys returns -1, 0 or +1 as key name a sorts before, with or
// after b in SortKeyName's order, as people read names: a run of digits
// compares as the number it spells ("user:2" < "user:10" < "user:100"),
// any other byte as itself. Names that spell the same numbers ("a01" and
// "a1") compare byte by byte, so that the order is total: 0 only for equal
// names. It compares in place, without allocating: the bytes both share
// are skipped, and only a difference in or next to a run of digits is
// looked at more closely.
func CompareKeys(a, b string) int {
	i, n := 0, min(len(a), len(b))
	for i+8 <= n && load64(a, i) == load64(b, i) {
		i += 8
	}
	for i < n && a[i] == b[i] {
		i++
	}
	if i == len(a) && i == len(b) {
		return 0
	}
	if (i == 0 || !isDigit(a[i-1])) && (i == len(a) || !isDigit(a[i])) && (i == len(b) || !isDigit(b[i])) {
		return compareByte(a, b, i) // no number where they differ
	}
	if i < n && isDigit(a[i]) && isDigit(b[i]) && digitsEnd(a, i) == digitsEnd(b, i) {
		return cmp.Compare(a[i], b[i]) // numbers of one length (zero-padded ids): as their digits
	}
	for i > 0 && isDigit(a[i-1]) {
		i-- // to the start of the number the difference is in
	}
	if c := compareNumbered(a[i:], b[i:]); c != 0 {
		return c
	}
	return strings.Compare(a[i:], b[i:])
}

// load64 is the 8 bytes of s from i as one word, read at once (the
// compiler merges the loads), for CompareKeys to skip shared bytes with.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// compareByte compares a and b by their bytes at i, where they first
// differ; a name that ends there is the less.
func compareByte(a, b string, i int) int {
	switch {
	case i == len(a):
		return -1
	case i == len(b):
		return 1
	}
	return cmp.Compare(a[i], b[i])
}

// compareNumbered compares a and b as runs of digits (by the number they
// spell) and single other bytes, in turn; 0 when they spell the same.
func compareNumbered(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if !isDigit(a[i]) || !isDigit(b[j]) {
			if a[i] != b[j] {
				return cmp.Compare(a[i], b[j])
			}
			i, j = i+1, j+1
			continue
		}
		ea, eb := digitsEnd(a, i), digitsEnd(b, j)
		if c := compareDigits(a[i:ea], b[j:eb]); c != 0 {
			return c
		}
		i, j = ea, eb
	}
	return cmp.Compare(len(a)-i, len(b)-j)
}

// compareDigits compares two runs of digits by the numbers they spell,
// however long: without their leading zeros, the longer is the larger,
// and two as long compare as their bytes do.
func compareDigits(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if c := cmp.Compare(len(a), len(b)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// digitsEnd is the end of the run of digits of s that starts at i.
func digitsEnd(s string, i int) int {
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return i
}

// KeyPrefix is 8 bytes that order names as CompareKeys does, for a radix
// sort: of names that all share their first from bytes, one whose
// KeyPrefix is less sorts first; equal KeyPrefixes say nothing (the names
// may still differ further on), and CompareKeys decides between them.
//
// Past from (taken back to the start of a number it falls in), a byte
// other than a digit stands for itself, and a run of digits for '0', how
// many digits it has without its leading zeros, then those digits: no
// other byte lies among the digits, so a number sorts among them as its
// first digit does, and among numbers a longer one is larger. A number of
// 255 digits or more ends the prefix, as its digits no longer fit a byte's
// count. The 8 bytes are big-endian, zero after the name's end.
func KeyPrefix(key string, from int) uint64 {
	from = min(from, len(key))
	for from > 0 && isDigit(key[from-1]) {
		from--
	}
	var b [8]byte
	n := 0 // bytes of b written
	for i := from; i < len(key) && n < len(b); {
		if !isDigit(key[i]) {
			b[n] = key[i]
			n, i = n+1, i+1
			continue
		}
		end := digitsEnd(key, i)
		for i < end && key[i] == '0' {
			i++
		}
		b[n] = '0'
		if n++; n == len(b) {
			break
		}
		if end-i >= 0xff {
			b[n] = 0xff
			break
		}
		b[n] = byte(end - i)
		for n++; i < end && n < len(b); n, i = n+1, i+1 {
			b[n] = key[i]
		}
		i = end
	}
	return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
		uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
}
