package model

import (
	"math"
	"strconv"
	"testing"
	"time"
)

// window10 plays a fixed-window client: a key made by the first hit of
// each 10 s window with EXPIRE NX, counting up to peak(w) in window w,
// read every second, and gone (removed) once it expired.
func window10(s *Store, key string, windows int, peak func(w int) int) time.Duration {
	var at time.Duration
	for w := range windows {
		start := time.Duration(w) * 10 * time.Second
		for i := range 10 {
			at = start + time.Duration(i)*time.Second
			v := 1 + (peak(w)-1)*i/9
			s.Apply(Batch{Observed: []Observation{{Key: key, Type: "string", Raw: strconv.Itoa(v),
				PTTL: int64(start+10*time.Second-at) / 1e6, At: t0.Add(at)}}})
		}
		s.Apply(Batch{Removed: []string{key}})
	}
	return at
}

// A short window's counter is made again every window: its trend shows the
// windows before the current one, each span holding its peak, and the
// client is never taken for one that pushes its expiry back.
func TestTrendOutlivesAWindowsKey(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 100, Window: 10 * time.Second, ExpectTTL: true}}})
	last := window10(s, "rl:api", 6, func(w int) int { return 10 * (w + 1) }) // 10, 20, ... 60
	s.Apply(Batch{Observed: []Observation{{Key: "rl:api", Type: "string", Raw: "1", PTTL: 10_000, At: t0.Add(last + time.Second)}}})
	if c, _ := s.Get("rl:api"); c.Status != StatusOK {
		t.Errorf("an EXPIRE NX client over 7 windows is %s, want ok", c.Status)
	}
	tr, ok := s.Trend("rl:api", t0.Add(last+time.Second))
	if !ok {
		t.Fatal("no trend after 7 windows")
	}
	// Read at 61 s, the trend is the spans from 7.5 s: [7.5, 15) holds
	// window 1's peak (10 at 9 s), [15, 22.5) window 2's (20 at 19 s),
	// [22.5, 30) window 3's (30), [30, 37.5) window 4's first 8 s (31),
	// ... and the last, window 7's first reading.
	want := []float64{10, 20, 30, 31, 40, 50, 60, 1}
	for k, w := range want {
		if tr.Values[k] != w {
			t.Errorf("span %d holds %v, want %v (trend %v)", k, tr.Values[k], w, tr.Values)
		}
	}
	if got := TrendLine(tr, LayoutCounter, 100); got != "▂▂▃▃▄▅▅▁" {
		t.Errorf("TrendLine over the windows = %q", got)
	}
	if h := s.History("rl:api"); len(h) != 0 {
		t.Errorf("the key made again has the readings of the one before: %v", h)
	}
}

// A key gone for a while, then made again, shows no reading for the spans
// it did not exist in; one gone for longer than a trend spans starts
// afresh, its ring given to the next key that changes.
func TestParkedTrends(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 100, Window: time.Minute, ExpectTTL: true}}})
	read := func(key, raw string, at time.Duration) {
		s.Apply(Batch{Observed: []Observation{{Key: key, Type: "string", Raw: raw, PTTL: 60_000, At: t0.Add(at)}}})
	}
	read("k", "1", 0)
	read("k", "2", time.Second)
	s.Apply(Batch{Removed: []string{"k"}})
	read("other", "1", 30*time.Second) // time goes on
	read("k", "5", 31*time.Second)
	tr, _ := s.Trend("k", t0.Add(31*time.Second))
	// spans -3 .. 4: the first (0 s) holds 2, the 3 after none, the last 5.
	got := []float64{tr.Values[3], tr.Values[7]}
	if got[0] != 2 || got[1] != 5 || !math.IsNaN(tr.Values[4]) || !math.IsNaN(tr.Values[6]) {
		t.Errorf("trend of a key gone from 1 s to 31 s: %v", tr.Values)
	}
	s.Apply(Batch{Removed: []string{"k"}})
	used := s.hist.used
	read("other", "2", 3*time.Minute) // long after: k's parked ring is let go...
	read("k", "7", 3*time.Minute+time.Second)
	if _, ok := s.Trend("k", t0.Add(3*time.Minute+time.Second)); ok {
		t.Error("a key made again long after it went has its old trend")
	}
	if s.hist.used != used || len(s.parking.byKey) != 0 {
		t.Errorf("%d rings handed out (was %d), %d parked: the parked ring was not reused", s.hist.used, used, len(s.parking.byKey))
	}
}
