package model

import (
	"container/heap"
	"maps"
	"math"
)

// TallyGroup is one count of a Tally: the keys of a rule (its index in
// Rules.List, -1 for the fallback), layout and status.
type TallyGroup struct {
	Rule   int16
	Layout Layout
	Status Status
}

// Tally is every key the Store holds counted by rule, layout and status,
// and the highest fill of each rule's keys: what `countertop serve`
// exports, without a Counter per key.
type Tally struct {
	Keys map[TallyGroup]int // only the groups that hold a key
	// Fill is the highest Counter.Percent (value / limit, a bucket's share
	// used) among each rule's keys, for the rules with a key that has one.
	Fill map[int16]float64
}

// tally is what the Store keeps up to date for Tally once asked for it.
type tally struct {
	keys  map[TallyGroup]int
	fills map[int16]*fills
}

// fills is a rule's keys counted by their fill, and those fills in a
// max-heap. A fill whose keys are all gone keeps its count of 0 and its
// place in the heap until it reaches the top, where Tally drops it, or
// until they outnumber the live ones twice over.
type fills struct {
	n    map[float64]int
	live int // fills in n with a key
	top  maxHeap
}

// Tally returns the keys by rule, layout and status, and the highest fill
// of each rule, ignoring the filter. Its first call counts every key;
// from then on Apply keeps the counts as it changes a key, so that a call
// costs a copy of the groups and a look at each rule's highest fill,
// however many keys there are (the dashboard, which never calls it, pays
// nothing).
func (s *Store) Tally() Tally {
	if s.tally == nil {
		s.tally = &tally{keys: map[TallyGroup]int{}, fills: map[int16]*fills{}}
		for i := range s.entries {
			s.tallyEntry(&s.entries[i], 1)
		}
	}
	t := Tally{Keys: maps.Clone(s.tally.keys), Fill: make(map[int16]float64, len(s.tally.fills))}
	for rule, f := range s.tally.fills {
		if most, ok := f.max(); ok {
			t.Fill[rule] = most
		}
	}
	return t
}

// tallyEntry adds k (1 or -1) to the tally's counts of e, once there is
// a tally.
func (s *Store) tallyEntry(e *entry, k int) {
	t := s.tally
	if t == nil {
		return
	}
	g := TallyGroup{Rule: e.rule, Layout: e.layout, Status: e.status}
	if t.keys[g] += k; t.keys[g] == 0 {
		delete(t.keys, g)
	}
	f, ok := e.percent(s.rules)
	if !ok || math.IsNaN(f) {
		return
	}
	fs := t.fills[e.rule]
	if fs == nil {
		fs = &fills{n: map[float64]int{}}
		t.fills[e.rule] = fs
	}
	fs.add(f+0, k) // +0: -0 counts as 0, whichever was read first
}

// retally moves e in the tally from what was (its rule, layout, status
// and value before a reading) to what it is now.
func (s *Store) retally(was, e *entry) {
	if s.tally == nil || was.layout == e.layout && was.status == e.status && was.kind == e.kind && was.num == e.num {
		return
	}
	s.tallyEntry(was, -1)
	s.tallyEntry(e, 1)
}

func (fs *fills) add(f float64, k int) {
	n, known := fs.n[f]
	if !known {
		heap.Push(&fs.top, f)
	}
	switch {
	case n == 0 && k > 0:
		fs.live++
	case n > 0 && n+k == 0:
		fs.live--
	}
	fs.n[f] = n + k
	if len(fs.top) > 2*fs.live+64 {
		fs.compact()
	}
}

// max is the highest fill that has a key, dropping those above it that
// have none left.
func (fs *fills) max() (float64, bool) {
	for len(fs.top) > 0 {
		f := fs.top[0]
		if fs.n[f] > 0 {
			return f, true
		}
		delete(fs.n, f)
		heap.Pop(&fs.top)
	}
	return 0, false
}

// compact drops the fills without a key, so that a counter that counts
// through many values leaves none behind.
func (fs *fills) compact() {
	fs.top = fs.top[:0]
	for f, n := range fs.n {
		if n == 0 {
			delete(fs.n, f)
		} else {
			fs.top = append(fs.top, f)
		}
	}
	heap.Init(&fs.top)
}

// maxHeap is container/heap's interface over fills, highest first.
type maxHeap []float64

func (h maxHeap) Len() int           { return len(h) }
func (h maxHeap) Less(i, j int) bool { return h[i] > h[j] }
func (h maxHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *maxHeap) Push(x any)        { *h = append(*h, x.(float64)) }
func (h *maxHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
