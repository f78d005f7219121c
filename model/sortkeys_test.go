package model

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestStoreSortsByNumbers: every sort, both ways, gives the order
// SortKey's docs describe (modelCompare) for values that are hard to turn
// into numbers: negative, fractional, -0, beyond 2^53, none at all, with
// keys added and removed between sorts, so that the order by name kept
// from one sort to the next has holes and newcomers.
func TestStoreSortsByNumbers(t *testing.T) {
	for _, tc := range []struct {
		name string
		raws []string
	}{
		{"integers", []string{"0", "7", "-3", "100", "130", "9007199254740993", "-9223372036854775808", "9223372036854775807", "text"}},
		{"floats", []string{"0", "7", "-3", "2.5", "-0.0", "-2.5e-300", "1e308", "100.0", "text", "7.000001"}},
		{"floats and huge integers", []string{"1.5", "9007199254740993", "9007199254740992", "2", "text"}},
	} {
		for _, inSteps := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/in steps %v", tc.name, inSteps), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(3, 4))
				s := NewStore(testRules())
				if inSteps {
					s.order.atOnce, s.order.step = 4, 2
				}
				live := map[string]bool{}
				for round := range 40 {
					var b Batch
					for range 30 {
						key := fmt.Sprintf("%s%d", []string{"rl:", "views:", "k"}[rng.IntN(3)], rng.IntN(50))
						if rng.IntN(5) == 0 {
							b.Removed = append(b.Removed, key)
							continue
						}
						pttl := int64(rng.IntN(3)) * 20_000
						if rng.IntN(4) == 0 {
							pttl = PTTLNoExpiry
						}
						b.Observed = append(b.Observed, read(key, tc.raws[rng.IntN(len(tc.raws))], pttl, 0))
					}
					s.Apply(b)
					for _, key := range b.Removed { // as Apply does: the removals first
						delete(live, key)
					}
					for _, o := range b.Observed {
						live[o.Key] = true
					}
					s.SetSort(SortKey(round % int(numSortKeys)))
					s.SetReverse(round%3 == 0)
					checkSorted(t, s, live, fmt.Sprintf("round %d", round))
				}
			})
		}
	}
}

// TestStoreSortsAfterChurn: between two sorts most keys expire and others
// take their places, more than the order by name keeps track of (it is
// sorted by name again) or fewer (it is brought up to date).
func TestStoreSortsAfterChurn(t *testing.T) {
	for _, churn := range []int{3, 250} {
		s := NewStore(testRules())
		live := map[string]bool{}
		var b Batch
		for i := range 300 {
			key := fmt.Sprintf("rl:%d", i)
			b.Observed = append(b.Observed, read(key, fmt.Sprint(i%7), 30_000, 0))
			live[key] = true
		}
		s.Apply(b)
		s.SetSort(SortValue)
		s.Rows(0, 1)
		for i := range churn {
			old, key := fmt.Sprintf("rl:%d", i*300/churn), fmt.Sprintf("k:%d", i)
			s.Apply(Batch{Removed: []string{old}, Observed: []Observation{read(key, fmt.Sprint(i%5), PTTLNoExpiry, 0)}})
			delete(live, old)
			live[key] = true
		}
		for _, sort := range []SortKey{SortStatus, SortKeyName, SortValue} {
			s.SetSort(sort)
			checkSorted(t, s, live, fmt.Sprintf("%d keys gone", churn))
		}
	}
}

// checkSorted fails the test unless the Store's rows are the keys of live,
// in the order modelCompare gives.
func checkSorted(t *testing.T, s *Store, live map[string]bool, what string) {
	t.Helper()
	for s.Sorting() {
		s.Visible()
	}
	var want []Counter
	for key := range live {
		want = append(want, mustGet(t, s, key))
	}
	slices.SortFunc(want, func(a, b Counter) int { return modelCompare(s, a, b) })
	if rows := s.Rows(0, len(live)+1); !slices.Equal(keys(rows), keys(want)) {
		t.Fatalf("%s, sort %v, reverse %v:\n rows %v\n want %v", what, s.Sort(), s.Reverse(), keys(rows), keys(want))
	}
}

// TestRadixSort: radixSort orders by cls, then key, and keeps the order it
// was given among equals.
func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{0, 1, 2, 300, 5000} {
		for _, spread := range []uint64{1, 200, 1 << 40, 0} { // 0: any key
			recs := make([]keyed, n)
			for i := range recs {
				key := rng.Uint64()
				if spread != 0 {
					key %= spread
				}
				recs[i] = keyed{key: key, e: int32(i), cls: uint8(rng.IntN(2))}
			}
			want := slices.Clone(recs)
			slices.SortStableFunc(want, func(a, b keyed) int {
				return cmp.Or(cmp.Compare(a.cls, b.cls), cmp.Compare(a.key, b.key))
			})
			if got := radixSort(recs); !slices.Equal(got, want) {
				t.Fatalf("%d keys below %d: not sorted stably", n, spread)
			}
		}
	}
}

// BenchmarkRadixSort sorts a million entries' numbers: a value below 120
// (one byte differs) and a deadline (five do).
func BenchmarkRadixSort(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, tc := range []struct {
		name   string
		spread uint64
	}{{"value", 120}, {"deadline", 60_000_000_000}} {
		b.Run(tc.name, func(b *testing.B) {
			recs := make([]keyed, 1_000_000)
			for i := range recs {
				recs[i] = keyed{key: rng.Uint64() % tc.spread, e: int32(i)}
			}
			work := make([]keyed, len(recs))
			for b.Loop() {
				copy(work, recs)
				radixSort(work)
			}
		})
	}
}
