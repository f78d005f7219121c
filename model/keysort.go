package model

import (
	"slices"
	"strings"
)

// KeySorter puts counters in key order as they arrive, a batch at a time,
// so that a snapshot's order is ready moments after its last read rather
// than a full sort later: each batch is sorted as it comes and merged with
// those before it the way a binary counter carries (two runs of a length
// become one of twice that), while Redis is still busy with the rest.
// Sorted merges the runs left, at most log2 of the number of batches.
//
// Runs hold each key beside a pointer to its counter: merges compare keys
// without visiting the counters, and move 24 bytes, not a whole Counter.
// Keys are expected once each, as a snapshot reads them.
type KeySorter struct {
	runs [][]keyRef // each in key order; lengths decrease along the list
}

type keyRef struct {
	key string
	c   *Counter
}

func compareRefs(a, b keyRef) int { return strings.Compare(a.key, b.key) }

// Add keeps batch, to be ordered by Sorted.
func (s *KeySorter) Add(batch []Counter) {
	if len(batch) == 0 {
		return
	}
	run := make([]keyRef, len(batch))
	for i := range batch {
		run[i] = keyRef{batch[i].Key, &batch[i]}
	}
	slices.SortFunc(run, compareRefs)
	s.runs = append(s.runs, run)
	for n := len(s.runs); n >= 2 && len(s.runs[n-2]) <= len(s.runs[n-1]); n-- {
		s.runs[n-2] = merge(s.runs[n-2], s.runs[n-1])
		s.runs = s.runs[:n-1]
	}
}

// Sorted returns every counter added, in key order. The KeySorter is empty
// afterwards.
func (s *KeySorter) Sorted() []*Counter {
	for n := len(s.runs); n >= 2; n-- {
		s.runs[n-2] = merge(s.runs[n-2], s.runs[n-1])
		s.runs = s.runs[:n-1]
	}
	var out []*Counter
	if len(s.runs) == 1 {
		out = make([]*Counter, len(s.runs[0]))
		for i, r := range s.runs[0] {
			out[i] = r.c
		}
	}
	*s = KeySorter{}
	return out
}

// merge returns the runs a and b, each in key order, as one.
func merge(a, b []keyRef) []keyRef {
	out := make([]keyRef, len(a)+len(b))
	i, j := 0, 0
	for k := range out {
		if j == len(b) || i < len(a) && compareRefs(b[j], a[i]) >= 0 {
			out[k] = a[i]
			i++
		} else {
			out[k] = b[j]
			j++
		}
	}
	return out
}
