package model

import (
	"slices"
	"strings"
)

// KeySorter collects a snapshot's counters as they arrive and puts them in
// key order once they are all in. It sorts at the end, when Redis is done
// and both cores are free, in two halves at once (see inHalves): sorting as
// batches arrive (merging them as a binary counter carries) measured no
// faster, as its work then competes with the reads for the CPU.
type KeySorter struct {
	batches [][]Counter
	n       int
}

// keyRef is a counter and its key beside it, so that comparing two keys
// does not visit their counters.
type keyRef struct {
	key string
	c   *Counter
}

func compareRefs(a, b keyRef) int { return strings.Compare(a.key, b.key) }

// Add keeps batch (not a copy of it) until Sorted.
func (s *KeySorter) Add(batch []Counter) {
	s.batches = append(s.batches, batch)
	s.n += len(batch)
}

// Sorted returns every counter added, in key order, each key once: of a
// key added twice, the later reading (either, when both were read at the
// same moment, in one pipeline). The KeySorter is empty afterwards.
func (s *KeySorter) Sorted() []*Counter {
	refs := make([]keyRef, 0, s.n) // sized once: growing it would touch every page several times
	for _, batch := range s.batches {
		for i := range batch {
			refs = append(refs, keyRef{batch[i].Key, &batch[i]})
		}
	}
	*s = KeySorter{}
	var halves [2][]keyRef
	inHalves(refs, func(half int, part []keyRef) {
		slices.SortFunc(part, compareRefs)
		halves[half] = part
	})
	a, b := halves[0], halves[1]
	out := make([]*Counter, 0, len(refs))
	for len(a) > 0 || len(b) > 0 {
		var next keyRef
		if len(b) == 0 || len(a) > 0 && compareRefs(a[0], b[0]) <= 0 {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && out[n-1].Key == next.key {
			if next.c.ObservedAt.After(out[n-1].ObservedAt) {
				out[n-1] = next.c
			}
			continue
		}
		out = append(out, next.c)
	}
	return out
}
