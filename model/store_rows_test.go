package model

import (
	"fmt"
	"slices"
	"testing"
)

func TestStoreRowsPages(t *testing.T) {
	s := NewStore(testRules())
	var batch Batch
	for i := range 25 {
		batch.Observed = append(batch.Observed, read(fmt.Sprintf("k%02d", i), "1", 1000, 0))
	}
	s.Apply(batch)
	if got := keys(s.Rows(20, 10)); !slices.Equal(got, []string{"k20", "k21", "k22", "k23", "k24"}) {
		t.Errorf("Rows(20, 10) = %v", got)
	}
	if got := keys(s.Rows(-5, 2)); !slices.Equal(got, []string{"k00", "k01"}) {
		t.Errorf("Rows(-5, 2) = %v", got)
	}
	for _, r := range [][2]int{{25, 5}, {3, 0}, {100, 1}} {
		t.Run(fmt.Sprintf("%d,%d", r[0], r[1]), func(t *testing.T) {
			if got := s.Rows(r[0], r[1]); len(got) != 0 {
				t.Errorf("Rows(%d, %d) = %v", r[0], r[1], keys(got))
			}
		})
	}
	if i := s.IndexOf("k07"); i != 7 {
		t.Errorf("IndexOf(k07) = %d", i)
	}
	if i := s.IndexOf("missing"); i != -1 {
		t.Errorf("IndexOf(missing) = %d", i)
	}
}
