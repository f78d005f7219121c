package model

import (
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"
)

// A batch that moves more than 1/32 of a large Store's keys is sorted a
// step per read too: no read sorts them all at once, the rows keep their
// last order until the new one shows, and then it is the whole order,
// the keys that arrived meanwhile included.
func TestStoreSortsABusyBatchInSteps(t *testing.T) {
	s := NewStore(testRules())
	s.order.atOnce, s.order.step = 100, 50
	var b Batch
	for i := range 1000 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(i), 60_000, 0))
	}
	s.Apply(b)
	s.SetSort(SortValue)
	for reads := 0; s.Sorting(); reads++ {
		if s.Visible(); reads > 200 {
			t.Fatal("the first sort by value did not end")
		}
	}
	before := keys(s.Rows(0, 20)) // rl:999 down to rl:980

	// 100 keys (1 in 10) go to the top, and 5 arrive there.
	b = Batch{}
	for i := 0; i < 1000; i += 10 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(5000+i), 60_000, time.Second))
	}
	for i := range 5 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:new:%d", i), strconv.Itoa(9000+i), 60_000, time.Second))
	}
	s.Apply(b)
	reads := 0
	for ; ; reads++ {
		got, shown := keys(s.Rows(0, 20)), s.order.shown // as this read left them
		if !s.Sorting() {
			break
		}
		if !slices.Equal(got, before) || shown != 1000 {
			t.Fatalf("read %d, while sorting: %d keys, the first %v; want the last order's %v", reads, shown, got, before)
		}
		if reads > 200 {
			t.Fatal("still sorting after 200 reads")
		}
	}
	if reads < 3 {
		t.Errorf("sorted in %d reads, want several: the batch was sorted at once", reads)
	}
	if got, want := keys(s.Rows(0, 7)), []string{"rl:new:4", "rl:new:3", "rl:new:2", "rl:new:1", "rl:new:0", "rl:990", "rl:980"}; !slices.Equal(got, want) {
		t.Errorf("after the sort: %v, want %v", got, want)
	}
	if n := s.Visible(); n != 1005 {
		t.Errorf("Visible = %d, want 1005", n)
	}
	all := keys(s.Rows(0, s.Len()))
	if !slices.IsSortedFunc(all, func(a, b string) int { return modelCompare(s, mustGet(t, s, a), mustGet(t, s, b)) }) {
		t.Errorf("not in order by value: %v", all)
	}
}

// A new sort of more keys than sortAtOnce is worked out over several
// reads: until it is done the rows stay in the sort before it, whole, and
// the keys removed, changed or added meanwhile end where the new sort puts
// them.
func TestStoreSortsInSteps(t *testing.T) {
	s := NewStore(testRules())
	s.order.atOnce, s.order.step = 100, 50 // 200 keys numbered, counted or moved a read
	var b Batch
	for i := range 1000 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), strconv.Itoa(i%50), 60_000, 0))
	}
	s.Apply(b)
	s.Visible() // drawn by key

	s.SetSort(SortValue)
	if !s.Sorting() {
		t.Fatal("a sort of 1000 keys, 100 a step: not sorting")
	}
	reads := 0
	for s.Sorting() {
		// The read that ends the sort shows the new one.
		if got := keys(s.Rows(0, 20)); s.Sorting() && (!slices.IsSortedFunc(got, CompareKeys) || len(got) != 20) {
			t.Fatalf("read %d, while sorting: %v, want the rows by key", reads, got)
		}
		switch reads {
		case 1: // a key numbered already and one not yet: both removed
			s.Apply(Batch{Removed: []string{"rl:0", "rl:998"}})
		case 2: // a new key, and one read again with a value that moves it
			s.Apply(Batch{Observed: []Observation{read("rl:new", "1000", 60_000, time.Second), read("rl:1", "999", 60_000, time.Second)}})
			if i := s.IndexOf("rl:new"); s.Sorting() && i != -1 {
				t.Errorf("IndexOf(rl:new) = %d while sorting, want -1: it has no row until the sort shows", i)
			}
		case 3: // so many removed that keys numbered already move into holes
			var gone Batch
			for i := 100; i < 350; i++ {
				gone.Removed = append(gone.Removed, fmt.Sprintf("rl:%d", i))
			}
			s.Apply(gone)
		case 9: // sorting by the numbers' bytes: more removals
			s.Apply(Batch{Removed: []string{"rl:49", "rl:48"}})
		}
		if reads++; reads > 40 {
			t.Fatal("still sorting after 40 reads")
		}
	}
	if reads < 5 {
		t.Errorf("sorted in %d reads, want 10 or so", reads)
	}
	if got := keys(s.Rows(0, 4)); !slices.Equal(got, []string{"rl:new", "rl:1", "rl:99", "rl:399"}) {
		t.Errorf("by value: %v", got)
	}
	if n := s.Visible(); n != 747 {
		t.Errorf("Visible = %d, want 747 (1000, 254 removed, 1 new)", n)
	}
	if got := keys(s.Rows(0, s.Len())); !slices.IsSortedFunc(got, func(a, b string) int { return modelCompare(s, mustGet(t, s, a), mustGet(t, s, b)) }) {
		t.Errorf("not in order by value: %v", got)
	}
	for _, gone := range []string{"rl:0", "rl:998", "rl:49", "rl:48", "rl:100", "rl:349"} {
		if i := s.IndexOf(gone); i != -1 {
			t.Errorf("IndexOf(%s) = %d, want -1: it was removed", gone, i)
		}
	}
	if i := s.IndexOf("rl:999"); i < 0 || keys(s.Rows(i, 1))[0] != "rl:999" {
		t.Errorf("IndexOf(rl:999) = %d, and the row there is not it", i)
	}

	// A sort set while one is worked out replaces it.
	s.SetSort(SortTTL)
	s.Visible()
	s.SetSort(SortKeyName)
	for range 50 {
		s.Visible()
	}
	if got := keys(s.Rows(0, 3)); !slices.Equal(got, []string{"rl:1", "rl:2", "rl:3"}) || s.Sorting() {
		t.Errorf("TTL, then key: %v, sorting %v", got, s.Sorting())
	}
}
