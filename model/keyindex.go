package model

import (
	"hash/maphash"
	"math/bits"
)

// keyIndex finds a key's entry. It is an open-addressed hash table of
// entry indexes that keeps no copy of the key (the entry holds it), a
// few bytes a key where a map[string]int32 takes a string header, an
// int32 and its own overhead per key, the largest part of an idle Store.
//
// A slot is one word: the entry index + 1 in its low bits (as many as the
// table has slots, so any index fits: the table is never full) and the
// top bits of the key's hash above them, so that a probe reads an entry's
// key only when those match; 0 is an empty slot. Linear probing, at most
// three quarters full, and removal by shifting the slots after it back (no
// tombstones), so a table that sees keys come and go never fills up with
// dead slots.
type keyIndex struct {
	seed  maphash.Seed
	slots []uint32
	bits  uint // len(slots) is 1 << bits
	n     int
}

func newKeyIndex() keyIndex { return keyIndex{seed: maphash.MakeSeed()} }

func (x *keyIndex) low() uint32 { return 1<<x.bits - 1 }

// hash is key's home slot and its tag, the slot's bits above the index.
func (x *keyIndex) hash(key string) (uint32, uint32) {
	h := maphash.String(x.seed, key)
	return uint32(h) & x.low(), uint32(h>>(32+x.bits)) << x.bits
}

// slot returns where key is, or -1.
func (x *keyIndex) slot(key string, entries []entry) int {
	if x.n == 0 {
		return -1
	}
	low := x.low()
	j, tag := x.hash(key)
	for ; x.slots[j] != 0; j = (j + 1) & low {
		if s := x.slots[j]; s&^low == tag && entries[s&low-1].key == key {
			return int(j)
		}
	}
	return -1
}

// find returns the entry index of key among entries.
func (x *keyIndex) find(key string, entries []entry) (int32, bool) {
	j := x.slot(key, entries)
	if j < 0 {
		return 0, false
	}
	return int32(x.slots[j]&x.low()) - 1, true
}

// insert adds key, which is not in the index, at entry index i; entries
// must hold every key already in the index, at its index.
func (x *keyIndex) insert(key string, i int32, entries []entry) {
	x.reserve(x.n+1, entries)
	x.place(key, i)
	x.n++
}

func (x *keyIndex) place(key string, i int32) {
	low := x.low()
	j, tag := x.hash(key)
	for x.slots[j] != 0 {
		j = (j + 1) & low
	}
	x.slots[j] = tag | uint32(i+1)
}

// reserve makes room for n keys in all, entries holding those there are:
// when they would fill more than three quarters of the table, it is made
// the smallest power of two that holds them at most half full, and every
// key placed again.
func (x *keyIndex) reserve(n int, entries []entry) {
	if n*4 <= len(x.slots)*3 {
		return
	}
	size := max(16, 1<<bits.Len(uint(2*n-1)))
	old, oldLow := x.slots, x.low()
	x.slots, x.bits = make([]uint32, size), uint(bits.TrailingZeros(uint(size)))
	for _, s := range old {
		if s != 0 {
			i := int32(s&oldLow) - 1
			x.place(entries[i].key, i)
		}
	}
}

// remove takes key out of the index; entries must still hold it.
func (x *keyIndex) remove(key string, entries []entry) bool {
	j := x.slot(key, entries)
	if j < 0 {
		return false
	}
	x.n--
	low := x.low()
	// Shift back each slot after the hole that may sit there, until an
	// empty one: a key may fill the hole when the hole lies between its
	// home slot and where it is now.
	hole := uint32(j)
	for k := (hole + 1) & low; x.slots[k] != 0; k = (k + 1) & low {
		home, _ := x.hash(entries[x.slots[k]&low-1].key)
		if (k-home)&low >= (k-hole)&low {
			x.slots[hole] = x.slots[k]
			hole = k
		}
	}
	x.slots[hole] = 0
	return true
}

// move records that key, at some entry index, is now at index to; entries
// must hold it where it was.
func (x *keyIndex) move(key string, to int32, entries []entry) {
	if j := x.slot(key, entries); j >= 0 {
		x.slots[j] = x.slots[j]&^x.low() | uint32(to+1)
	}
}

func (x *keyIndex) len() int { return x.n }
