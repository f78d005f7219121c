package model

import (
	"math"
	"testing"
	"time"
)

// TestLogFalls: a log's count falls when its oldest hit inside the window
// leaves it, in the unit of its scores; a log whose count cannot fall so
// has no such time.
func TestLogFalls(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	ms := func(d time.Duration) float64 { return float64(now.Add(d).UnixMilli()) }
	secs := func(d time.Duration) float64 { return float64(now.Add(d).UnixNano()) / 1e9 }
	log := func(typ string, newest, from float64, in int64) Observation {
		return Observation{Key: "rl:log", Type: typ, At: now, Len: 10, Newest: newest, Oldest: newest - 1, InWindow: in, InWindowFrom: from}
	}
	window := Rule{Window: 10 * time.Second}
	tests := []struct {
		name string
		o    Observation
		rule Rule
		want time.Duration // from now; -1: none
	}{
		{"ms scores", log("zset", ms(0), ms(-7*time.Second), 3), window, 3 * time.Second},
		{"a list in seconds", log("list", secs(0), secs(-9500*time.Millisecond), 3), window, 500 * time.Millisecond},
		{"a log rule", log("zset", ms(0), ms(-time.Second), 1), Rule{Window: 10 * time.Second, Layout: LayoutLog}, 9 * time.Second},
		{"no hit in the window", log("zset", ms(-time.Minute), math.NaN(), 0), window, -1},
		{"no window known", log("zset", ms(0), ms(-time.Second), 1), Rule{}, -1},
		{"read as another layout", log("zset", ms(0), ms(-time.Second), 1), Rule{Window: 10 * time.Second, Layout: LayoutOpaque}, -1},
		{"the oldest not read: it may fall at once", log("zset", ms(0), math.NaN(), 1), window, 0},
		{"scores that are no times", log("zset", 12, 11, 1), window, -1},
		{"a hash", Observation{Type: "hash", At: now, InWindow: -1}, window, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := LogFalls(&tt.o, tt.rule)
			switch {
			case tt.want < 0 && ok:
				t.Fatalf("falls at %v; want never", got)
			case tt.want < 0:
			case !ok:
				t.Fatalf("never falls; want in %v", tt.want)
			case got.Sub(now) < tt.want-time.Millisecond || got.Sub(now) > tt.want+time.Millisecond:
				t.Fatalf("falls in %v; want %v", got.Sub(now), tt.want)
			}
		})
	}
}

// TestOldestInWindow: the oldest of a list's entries inside the window,
// entries that are not numbers left out.
func TestOldestInWindow(t *testing.T) {
	if got := OldestInWindow([]string{"105", "x", "103", "99", "110"}, 100); got != 103 {
		t.Errorf("OldestInWindow = %v, want 103", got)
	}
	if got := OldestInWindow([]string{"99", "x"}, 100); !math.IsNaN(got) {
		t.Errorf("OldestInWindow = %v with no entry inside, want NaN", got)
	}
}
