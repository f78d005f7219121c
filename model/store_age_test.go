package model

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// TestOldestRead: the oldest reading follows keys read again, removed and
// read out of order, never later than the truth and within a bucket of it.
func TestOldestRead(t *testing.T) {
	sec := func(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }
	tests := []struct {
		name    string
		batches []Batch
		want    time.Duration // from t0; -1: none
	}{
		{"empty", nil, -1},
		{"one key", []Batch{{Observed: []Observation{read("rl:a", "1", -1, sec(0))}}}, 0},
		{"the oldest of three", []Batch{{Observed: []Observation{
			read("rl:a", "1", -1, sec(0)), read("rl:b", "1", -1, sec(5)), read("rl:c", "1", -1, sec(9)),
		}}}, 0},
		{"the oldest read again", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(0)), read("rl:b", "1", -1, sec(5)), read("rl:c", "1", -1, sec(9))}},
			{Observed: []Observation{read("rl:a", "1", -1, sec(12))}},
		}, sec(5)},
		{"the oldest removed", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(0)), read("rl:b", "1", -1, sec(5)), read("rl:c", "1", -1, sec(9))}},
			{Removed: []string{"rl:a", "rl:b"}},
		}, sec(9)},
		{"all removed", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(0))}},
			{Removed: []string{"rl:a"}},
		}, -1},
		{"a key read before the first", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(10))}},
			{Observed: []Observation{read("rl:b", "1", -1, sec(2))}},
		}, sec(2)},
		{"an older reading is ignored", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(10)), read("rl:b", "1", -1, sec(20))}},
			{Observed: []Observation{read("rl:a", "1", -1, sec(15))}},
			{Observed: []Observation{read("rl:a", "1", -1, sec(1))}},
		}, sec(15)},
		{"removed by a reading of a gone key", []Batch{
			{Observed: []Observation{read("rl:a", "1", -1, sec(0)), read("rl:b", "1", -1, sec(30))}},
			{Observed: []Observation{read("rl:a", "", PTTLMissing, sec(31))}},
		}, sec(30)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(testRules())
			for _, b := range tt.batches {
				s.Apply(b)
			}
			got := s.OldestRead()
			if tt.want < 0 {
				if !got.IsZero() {
					t.Fatalf("OldestRead = %v, want none", got)
				}
				return
			}
			checkOldest(t, got, t0.Add(tt.want))
		})
	}
}

// checkOldest fails unless got is at or before want, by less than a bucket.
func checkOldest(t *testing.T, got, want time.Time) {
	t.Helper()
	if got.After(want) || want.Sub(got) >= 1<<ageShift {
		t.Fatalf("OldestRead = t0%+v, want t0%+v or up to %v before", got.Sub(t0), want.Sub(t0), time.Duration(1<<ageShift))
	}
}

// TestOldestReadRandom checks OldestRead against the oldest ObservedAt of
// every row, over random readings and removals.
func TestOldestReadRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	s := NewStore(testRules())
	names := []string{"rl:a", "rl:b", "rl:c", "rl:d", "rl:e", "rl:f"}
	for step := range 2000 {
		at := time.Duration(step)*100*time.Millisecond - time.Duration(rng.IntN(40))*time.Second
		key := names[rng.IntN(len(names))]
		if rng.IntN(4) == 0 {
			s.Apply(Batch{Removed: []string{key}})
		} else {
			s.Apply(Batch{Observed: []Observation{read(key, "1", -1, at)}})
		}
		var oldest time.Time
		for _, c := range s.Rows(0, s.Visible()) {
			if oldest.IsZero() || c.ObservedAt.Before(oldest) {
				oldest = c.ObservedAt
			}
		}
		if got := s.OldestRead(); oldest.IsZero() != got.IsZero() {
			t.Fatalf("step %d: OldestRead = %v with %d keys", step, got, s.Len())
		} else if !oldest.IsZero() {
			checkOldest(t, got, oldest)
		}
	}
}

// oldestShown is the oldest reading EachShownRead tells of the n rows
// from offset; zero when it tells of none.
func oldestShown(s *Store, offset, n int) time.Time {
	var oldest time.Time
	s.EachShownRead(offset, n, func(_ string, read, _ time.Time) {
		if oldest.IsZero() || read.Before(oldest) {
			oldest = read
		}
	})
	return oldest
}

// TestEachShownRead: the oldest reading among rows is that of the rows
// Rows returns, in the sort and the filter.
func TestEachShownRead(t *testing.T) {
	s := NewStore(testRules())
	var obs []Observation
	for i := range 1000 {
		obs = append(obs, read(fmt.Sprintf("rl:%04d", i), strconv.Itoa(i%7), -1, time.Duration(i*7919%1000)*time.Millisecond))
	}
	s.Apply(Batch{Observed: obs})
	for _, setup := range []func(){
		func() {},
		func() { s.SetSort(SortValue) },
		func() { s.SetReverse(true) },
		func() { s.SetFilter("rl:01") },
	} {
		setup()
		for s.Filtering() {
			s.Rows(0, 1)
		}
		for _, span := range [][2]int{{0, 40}, {500, 40}, {990, 40}, {0, 0}, {5000, 10}, {-3, 5}} {
			var want time.Time
			for _, c := range s.Rows(span[0], span[1]) {
				if want.IsZero() || c.ObservedAt.Before(want) {
					want = c.ObservedAt
				}
			}
			if got := oldestShown(s, span[0], span[1]); !got.Equal(want) {
				t.Errorf("sort %v, filter %q, rows %v: oldest shown = %v, want %v", s.Sort(), s.Filter(), span, got, want)
			}
		}
	}
}
