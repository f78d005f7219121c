package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// Sorted by rate, the keys whose rates fade as the feed stays quiet keep
// their order with the others: rising and falling ones move as their rates
// shrink, and once at 0 they join the still keys by name; reversed too.
func TestStoreOrderByRateFollowsTheQuiet(t *testing.T) {
	for _, reverse := range []bool{false, true} {
		t.Run(fmt.Sprint("reverse=", reverse), func(t *testing.T) {
			s := NewStore(testRules())
			s.order.size = 2 // every end spans blocks
			for sec, values := range [][]string{{"0", "0", "50", "80", "0"}, {"10", "5", "47", "72", "0"}, {"20", "10", "44", "64", "0"}} {
				var b Batch
				for i, key := range []string{"rl:up1", "rl:up2", "rl:down1", "rl:down2", "rl:late"} {
					b.Observed = append(b.Observed, read(key, values[i], 100_000, time.Duration(sec)*time.Second))
				}
				for i := range 4 {
					b.Observed = append(b.Observed, read(fmt.Sprintf("rl:still%d", i), "3", 100_000, time.Duration(sec)*time.Second))
				}
				s.Apply(b)
			}
			s.Apply(Batch{Observed: []Observation{read("rl:late", "9", 100_000, 50*time.Second)}})
			s.SetSort(SortRate)
			s.SetReverse(reverse)
			check := func(when string) []string {
				t.Helper()
				rows := s.Rows(0, 100)
				want := slices.Clone(rows)
				for i, c := range want {
					want[i] = mustGet(t, s, c.Key)
				}
				slices.SortFunc(want, func(a, b Counter) int { return modelCompare(s, a, b) })
				if !slices.Equal(keys(rows), keys(want)) {
					t.Errorf("reversed %v, %s:\n rows %v\n want %v", reverse, when, keys(rows), keys(want))
				}
				return keys(rows)
			}
			check("as read")
			s.QuietUntil(t0.Add(30 * time.Second))
			check("28 s into the quiet")
			s.QuietUntil(t0.Add(70 * time.Second))
			got := check("68 s into the quiet")
			want := []string{"rl:late", "rl:down1", "rl:down2", "rl:still0", "rl:still1", "rl:still2", "rl:still3", "rl:up1", "rl:up2"}
			if reverse {
				slices.Reverse(want)
			}
			if !slices.Equal(got, want) {
				t.Errorf("reversed %v, once the rates faded out: %v, want %v", reverse, got, want)
			}
		})
	}
}
