package model

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"
)

// KeySorter collects a snapshot's counters as they arrive and puts them in
// key order once they are all in. It sorts at the end, when Redis is done
// and both cores are free, in two halves at once (see inHalves): sorting as
// batches arrive (merging them as a binary counter carries) measured no
// faster, as its work then competes with the reads for the CPU.
//
// As they arrive it only notes how long a prefix every key shares, while
// each key is fresh in cache. Sorting then compares the 8 bytes past that
// prefix (see keyRef), and reads the keys only where those are equal.
type KeySorter struct {
	batches [][]Counter
	n       int    // counters in batches
	first   string // the first key added
	shared  int    // bytes every key added shares with first
}

// keyRef is a counter, its key, and the 8 bytes of the key that follow the
// prefix every key shares, big-endian and padded with zero bytes. Of two
// keys, the one whose next is less sorts first; only equal nexts need the
// keys compared. With keys like ratelimit:user:NNNNNNNN:login, whose shared
// prefix ends at the user number, two keys' nexts differ; keys of two
// patterns (ratelimit:* and quota:*) share less, and the keys decide more
// often, as they did before the nexts.
type keyRef struct {
	next uint64
	key  string // the counter's, here so that comparing keys does not visit the counter
	c    *Counter
}

// nextBytes is key's 8 bytes from shared on, as a keyRef holds them.
func nextBytes(key string, shared int) uint64 {
	var b [8]byte
	if shared < len(key) {
		copy(b[:], key[shared:])
	}
	return binary.BigEndian.Uint64(b[:])
}

// compareRefs orders two refs of one KeySorter as their keys. Padding
// cannot disorder them: where one key ends within the 8 bytes and the
// other goes on with non-zero bytes, the shorter key is less either way;
// zero bytes where the shorter ended make the nexts equal, and the keys
// decide.
func compareRefs(a, b keyRef) int {
	if c := cmp.Compare(a.next, b.next); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

// Add keeps batch (not a copy of it) until Sorted. A key can come in
// several batches; Sorted keeps its latest reading.
func (s *KeySorter) Add(batch []Counter) {
	if len(batch) == 0 {
		return
	}
	if s.n == 0 {
		s.first, s.shared = batch[0].Key, len(batch[0].Key)
	}
	for i := range batch {
		s.shared = sharedPrefix(s.first[:s.shared], batch[i].Key)
	}
	s.batches = append(s.batches, batch)
	s.n += len(batch)
}

// sharedPrefix is the length of the longest prefix of a that b starts
// with.
func sharedPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// Sorted returns every counter added, in key order, each key once: of a
// key added twice, the later reading (either, when both were read at the
// same moment, in one pipeline). The KeySorter is empty afterwards.
func (s *KeySorter) Sorted() []*Counter {
	batches, shared := s.batches, s.shared
	refs := make([]keyRef, s.n)
	*s = KeySorter{}
	var halves [2][]keyRef
	inHalves(refs, func(half int, part []keyRef) {
		fillRefs(part, batches, half*(len(refs)-len(part)), shared)
		slices.SortFunc(part, compareRefs)
		halves[half] = part
	})
	a, b := halves[0], halves[1]
	out := make([]*Counter, 0, len(refs))
	var last keyRef
	for len(a) > 0 || len(b) > 0 {
		var next keyRef
		if len(b) == 0 || len(a) > 0 && compareRefs(a[0], b[0]) <= 0 {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if len(out) > 0 && compareRefs(last, next) == 0 {
			if next.c.ObservedAt.After(last.c.ObservedAt) {
				out[len(out)-1], last = next.c, next
			}
			continue
		}
		out, last = append(out, next.c), next
	}
	return out
}

// fillRefs fills dst with the refs of the counters of batches from the
// from-th on, as if batches were one slice.
func fillRefs(dst []keyRef, batches [][]Counter, from, shared int) {
	for _, batch := range batches {
		if len(dst) == 0 {
			return
		}
		if from >= len(batch) {
			from -= len(batch)
			continue
		}
		batch = batch[from:min(len(batch), from+len(dst))]
		for i := range batch {
			c := &batch[i]
			dst[i] = keyRef{nextBytes(c.Key, shared), c.Key, c}
		}
		dst, from = dst[len(batch):], 0
	}
}
