package model

import (
	"strconv"
	"testing"
	"time"
)

// TestExtending replays a client's readings through a Store and asks
// whether the key is extending at the end.
func TestExtending(t *testing.T) {
	type step struct {
		value string
		pttl  int64 // ms
	}
	// every 200 ms a hit: the value grows; the TTL is set again to 10 s
	// (pushed), or left (NX), or the key restarts.
	pushed := func(n int) []step {
		var s []step
		for i := range n {
			s = append(s, step{value: strconv.Itoa(i + 1), pttl: 10_000})
		}
		return s
	}
	nx := func(n int) []step {
		var s []step
		for i := range n {
			s = append(s, step{value: strconv.Itoa(i + 1), pttl: int64(10_000 - 200*i)})
		}
		return s
	}
	// NX windows of 2 s read every 200 ms, the key made again as the last
	// one expires: each window's first reading counts more hits than the
	// one before it did (a client speeding up), and is no push.
	restarts := func(windows int) []step {
		var s []step
		for w := range windows {
			for i := range 10 {
				s = append(s, step{value: strconv.Itoa(w + 1 + i*(w+1)), pttl: int64(2_000 - 200*i - 100)})
			}
		}
		return s
	}
	// A quiet client's windows: a hit or two at the start of each, read
	// once a window, just after the next began.
	quiet := func(windows int) []step {
		var s []step
		for w := range windows {
			s = append(s, step{value: strconv.Itoa(w + 1), pttl: 9_900})
			for range 49 {
				s = append(s, s[len(s)-1])
				s[len(s)-1].pttl -= 200
			}
		}
		return s
	}
	// Pushed to 10 s at every hit, read every 12 s (the step is 200 ms).
	sparse := func(reads int) []step {
		var s []step
		for i := range reads * 60 {
			st := step{value: strconv.Itoa(i/60 + 1), pttl: 10_000}
			if i%60 != 0 {
				st.value = "" // not read
			}
			s = append(s, st)
		}
		return s
	}
	rule := Rule{Pattern: "*", Limit: 1000, Window: 10 * time.Second, ExpectTTL: true}
	tests := []struct {
		name   string
		layout Layout
		typ    string
		steps  []step
		want   bool
	}{
		{"pushed on every hit for 3 s", LayoutAuto, "string", pushed(15), true},
		{"pushed for less than twice the jitter", LayoutAuto, "string", pushed(9), false},
		{"NX: the deadline stays", LayoutAuto, "string", nx(40), false},
		{"NX windows, each busier than the last", LayoutAuto, "string", restarts(6), false},
		{"NX windows of a quiet client", LayoutAuto, "string", quiet(6), false},
		// Read less often than its TTL, a pushed key cannot be told from a
		// new window that began with more hits: it is not called extending.
		{"pushed, but read less often than its TTL", LayoutAuto, "string", sparse(6), false},
		{"pushed without a hit", LayoutAuto, "string", []step{{"5", 10_000}, {"5", 8_000}, {"5", 10_000}, {"5", 8_000}, {"5", 10_000}}, false},
		{"a log's deadline moves by design", LayoutLog, "string", pushed(15), false},
		{"a bucket's too", LayoutBucket, "string", pushed(15), false},
	}
	for _, tt := range tests {
		r := rule
		r.Layout = tt.layout
		s := NewStore(&Rules{List: []Rule{r}})
		for i, st := range tt.steps {
			if st.value == "" {
				continue // no reading at this step
			}
			s.Apply(Batch{Observed: []Observation{{Key: "k", Type: tt.typ, Raw: st.value, PTTL: st.pttl, At: t0.Add(time.Duration(i) * 200 * time.Millisecond)}}})
		}
		c, _ := s.Get("k")
		if got := c.Status == StatusExtending; got != tt.want {
			t.Errorf("%s: status %v, want extending %v", tt.name, c.Status, tt.want)
		}
	}
}

// TestExtendingEndsWithTheKey: once the key expires and a client using NX
// starts it again, it is no longer extending.
func TestExtendingEndsWithTheKey(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 1000, Window: 10 * time.Second, ExpectTTL: true}}})
	at := t0
	read := func(v string, pttl int64) {
		at = at.Add(200 * time.Millisecond)
		s.Apply(Batch{Observed: []Observation{{Key: "k", Type: "string", Raw: v, PTTL: pttl, At: at}}})
	}
	for i := range 20 {
		read(strconv.Itoa(i+1), 10_000)
	}
	if c, _ := s.Get("k"); c.Status != StatusExtending {
		t.Fatalf("status %v after 4 s of pushes, want extending", c.Status)
	}
	read("1", 10_000) // expired and started again, now with NX
	for i := range 10 {
		read(strconv.Itoa(i+2), int64(9_800-200*i))
	}
	if c, _ := s.Get("k"); c.Status != StatusOK {
		t.Errorf("status %v after a restart with NX, want ok", c.Status)
	}
}

func TestHistory(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 100, ExpectTTL: true}}})
	for i := range 3 {
		s.Apply(Batch{Observed: []Observation{{Key: "idle", Type: "string", Raw: "7", PTTL: 5000, At: t0.Add(time.Duration(i) * time.Millisecond)}}})
	}
	if h := s.History("idle"); h != nil {
		t.Errorf("a key that never changed has a history: %v", h)
	}
	for i := range HistoryLen + 3 {
		s.Apply(Batch{Observed: []Observation{{Key: "k", Type: "string", Raw: strconv.Itoa(i), PTTL: 60_000, At: t0.Add(time.Duration(i) * time.Second)}}})
	}
	h := s.History("k")
	if len(h) != HistoryLen {
		t.Fatalf("%d readings kept, want %d", len(h), HistoryLen)
	}
	for j, x := range h {
		want := float64(2 + j) // the last HistoryLen before the current 6
		if x.Value != want || x.TTL != time.Minute || !x.At.Equal(t0.Add(time.Duration(want)*time.Second)) {
			t.Errorf("reading %d = %+v, want value %v, TTL 1m at +%vs", j, x, want, want)
		}
	}
	// A removed key's ring is parked for a trend's span (see
	// trend_park.go), then goes to the next key that changes.
	s.Apply(Batch{Removed: []string{"k"}})
	s.Apply(Batch{Observed: []Observation{{Key: "idle", Type: "string", Raw: "8", PTTL: 5000, At: t0.Add(2 * time.Minute)}}})
	if h := s.History("idle"); len(h) != 1 || h[0].Value != 7 {
		t.Errorf("history after a change = %+v, want the one reading of 7", h)
	}
	if s.hist.used != 1 {
		t.Errorf("%d rings handed out, want the one reused", s.hist.used)
	}
}
