package model

import "hash/maphash"

// keyIndex finds a key's entry. It is an open-addressed hash table of
// entry indexes that keeps no copy of the key (the entry holds it), a
// few bytes a key where a map[string]int32 takes a string header, an
// int32 and its own overhead per key, the largest part of an idle Store.
//
// Each slot holds an entry index and a byte of the key's hash (0: an empty
// slot), so a probe reads the entry only when that byte matches. Linear
// probing, at most three quarters full, and removal by shifting the slots
// after it back (no tombstones), so a table that sees keys come and go
// never fills up with dead slots.
type keyIndex struct {
	seed  maphash.Seed
	slots []int32 // entry index, where tags says a slot is in use
	tags  []uint8 // 0: empty; else a byte of the key's hash, never 0
	n     int
}

func newKeyIndex() keyIndex { return keyIndex{seed: maphash.MakeSeed()} }

// hash is key's home slot and tag.
func (x *keyIndex) hash(key string) (uint64, uint8) {
	h := maphash.String(x.seed, key)
	return h & uint64(len(x.slots)-1), uint8(h>>56) | 1
}

// find returns the entry index of key among entries.
func (x *keyIndex) find(key string, entries []entry) (int32, bool) {
	if x.n == 0 {
		return 0, false
	}
	mask := uint64(len(x.slots) - 1)
	j, tag := x.hash(key)
	for ; x.tags[j] != 0; j = (j + 1) & mask {
		if x.tags[j] == tag && entries[x.slots[j]].key == key {
			return x.slots[j], true
		}
	}
	return 0, false
}

// insert adds key, which is not in the index, at entry index i; entries
// must hold every key already in the index, at its index.
func (x *keyIndex) insert(key string, i int32, entries []entry) {
	if (x.n+1)*4 > len(x.slots)*3 {
		x.grow(x.n+1, entries)
	}
	x.place(key, i)
	x.n++
}

func (x *keyIndex) place(key string, i int32) {
	mask := uint64(len(x.slots) - 1)
	j, tag := x.hash(key)
	for x.tags[j] != 0 {
		j = (j + 1) & mask
	}
	x.slots[j], x.tags[j] = i, tag
}

// reserve makes room for n keys in all, entries holding those there are.
func (x *keyIndex) reserve(n int, entries []entry) {
	if n*4 > len(x.slots)*3 {
		x.grow(n, entries)
	}
}

// grow makes the table the smallest power of two that holds n keys at most
// half full, and places every key again.
func (x *keyIndex) grow(n int, entries []entry) {
	size := 16
	for size < 2*n {
		size *= 2
	}
	old, oldTags := x.slots, x.tags
	x.slots, x.tags = make([]int32, size), make([]uint8, size)
	for j, t := range oldTags {
		if t != 0 {
			x.place(entries[old[j]].key, old[j])
		}
	}
}

// slot returns where key is, or -1.
func (x *keyIndex) slot(key string, entries []entry) int {
	if x.n == 0 {
		return -1
	}
	mask := uint64(len(x.slots) - 1)
	j, tag := x.hash(key)
	for ; x.tags[j] != 0; j = (j + 1) & mask {
		if x.tags[j] == tag && entries[x.slots[j]].key == key {
			return int(j)
		}
	}
	return -1
}

// remove takes key out of the index; entries must still hold it.
func (x *keyIndex) remove(key string, entries []entry) bool {
	j := x.slot(key, entries)
	if j < 0 {
		return false
	}
	x.n--
	mask := len(x.slots) - 1
	// Shift back each slot after the hole that may sit there, until an
	// empty one: a key may fill the hole when the hole lies between its
	// home slot and where it is now.
	hole := j
	for k := (j + 1) & mask; x.tags[k] != 0; k = (k + 1) & mask {
		home, _ := x.hash(entries[x.slots[k]].key)
		if (k-int(home))&mask >= (k-hole)&mask {
			x.slots[hole], x.tags[hole] = x.slots[k], x.tags[k]
			hole = k
		}
	}
	x.tags[hole] = 0
	return true
}

// move records that key, at entry index from, is now at index to; entries
// must hold it at from.
func (x *keyIndex) move(key string, to int32, entries []entry) {
	if j := x.slot(key, entries); j >= 0 {
		x.slots[j] = to
	}
}

func (x *keyIndex) len() int { return x.n }
