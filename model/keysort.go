package model

import (
	"slices"
	"strings"
)

// KeySorter collects a snapshot's counters as they arrive and puts them in
// key order once they are all in. It sorts at the end, when Redis is done
// and both cores are free, in two halves at once: sorting as batches
// arrive (merging them as a binary counter carries) measured no faster,
// as its work then competes with the reads for the CPU.
type KeySorter struct {
	refs []keyRef
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
	for i := range batch {
		s.refs = append(s.refs, keyRef{batch[i].Key, &batch[i]})
	}
}

// Sorted returns every counter added, in key order. The KeySorter is empty
// afterwards.
func (s *KeySorter) Sorted() []*Counter {
	refs := s.refs
	*s = KeySorter{}
	a, b := refs[:len(refs)/2], refs[len(refs)/2:]
	sorted := make(chan struct{})
	go func() {
		slices.SortFunc(b, compareRefs)
		close(sorted)
	}()
	slices.SortFunc(a, compareRefs)
	<-sorted
	out := make([]*Counter, len(refs))
	for i := range out {
		if len(b) == 0 || len(a) > 0 && compareRefs(a[0], b[0]) <= 0 {
			out[i], a = a[0].c, a[1:]
		} else {
			out[i], b = b[0].c, b[1:]
		}
	}
	return out
}
