package report

import (
	"runtime"
	"testing"
)

// Passes that overlap (a starts, b starts, a ends, b ends) all read on
// half the cores, and the last to end gives them all back, as a pass
// alone does. Not parallel: it reads and sets GOMAXPROCS.
func TestReadOnHalfTheCoresOverlapping(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	half := max(1, before/2)
	restoreA := ReadOnHalfTheCores()
	if got := runtime.GOMAXPROCS(0); got != half {
		t.Errorf("GOMAXPROCS during a pass: %d, want %d (half of %d)", got, half, before)
	}
	restoreB := ReadOnHalfTheCores()
	restoreA()
	if got := runtime.GOMAXPROCS(0); got != half {
		t.Errorf("GOMAXPROCS while a second pass runs on: %d, want %d", got, half)
	}
	restoreB()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d before two overlapping passes, %d after", before, got)
	}
	ReadOnHalfTheCores()()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d before a pass, %d after", before, got)
	}
}
