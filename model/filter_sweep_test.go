package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// A filter that could change many keys' answers is applied a step at each
// read: until it is whole, the rows are the last filter's, whole too; a
// narrower one (a term typed on) checks only the keys shown.
func TestStoreFilterAppliesInSteps(t *testing.T) {
	s := NewStore(testRules())
	s.order.step = 100
	var b Batch
	for i := range 1000 {
		b.Observed = append(b.Observed, read(fmt.Sprintf("rl:%d", i), "1", 60_000, 0))
	}
	s.Apply(b)
	if got := keys(s.Rows(0, 3)); !slices.Equal(got, []string{"rl:0", "rl:1", "rl:2"}) {
		t.Fatalf("unfiltered: %v", got)
	}

	s.SetFilter("rl:1")
	if !s.Filtering() || !s.Counts().Filtering {
		t.Error("a filter over 1000 keys, 100 a step: not filtering")
	}
	reads := 0
	for s.Filtering() {
		if got := keys(s.Rows(0, 3)); reads < 5 && !slices.Equal(got, []string{"rl:0", "rl:1", "rl:2"}) {
			t.Fatalf("read %d, while filtering: %v, want the rows of no filter", reads, got)
		}
		if reads == 3 { // a key read meanwhile that now passes, and a new one
			s.Apply(Batch{Observed: []Observation{read("rl:1000", "5", 60_000, time.Second), read("rl:19", "100", PTTLNoExpiry, time.Second)}})
		}
		if reads++; reads > 20 {
			t.Fatal("still filtering after 20 reads")
		}
	}
	if reads < 5 {
		t.Errorf("filtered in %d reads, want 10 or so", reads)
	}
	if n := s.Visible(); n != 112 { // 1, 10-19, 100-199, 1000
		t.Errorf("Visible = %d, want 112", n)
	}
	if got := keys(s.Rows(0, 4)); !slices.Equal(got, []string{"rl:1", "rl:10", "rl:11", "rl:12"}) {
		t.Errorf("filtered: %v", got)
	}
	if i := s.IndexOf("rl:1000"); i != 111 {
		t.Errorf("IndexOf(rl:1000) = %d, want 111, the last", i)
	}

	// Narrower: only the 112 shown are checked, at once with a step of 200.
	s.order.step = 200
	s.SetFilter("rl:1 is:stuck")
	if got := keys(s.Rows(0, 10)); !slices.Equal(got, []string{"rl:19"}) || s.Filtering() {
		t.Errorf("narrower, 112 keys to check: %v, filtering %v; want rl:19 at once", got, s.Filtering())
	}
	// Another filter while one is being applied: the later one wins.
	s.order.step = 10
	s.SetFilter("rl:2")
	s.Visible()
	s.SetFilter("rl:99")
	for range 200 {
		s.Visible()
	}
	if got := keys(s.Rows(0, 20)); !slices.Equal(got, []string{"rl:99", "rl:990", "rl:991", "rl:992", "rl:993", "rl:994", "rl:995", "rl:996", "rl:997", "rl:998", "rl:999"}) || s.Filtering() {
		t.Errorf("rl:2, then rl:99: %v, filtering %v", got, s.Filtering())
	}
}
