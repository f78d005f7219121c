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
		{"pushed on every hit for 12 s, past its 10 s window", LayoutAuto, "string", pushed(61), true},
		{"pushed on every hit for its 10 s window, no more", LayoutAuto, "string", pushed(51), false},
		{"pushed for less than twice the jitter", LayoutAuto, "string", pushed(9), false},
		{"NX: the deadline stays", LayoutAuto, "string", nx(40), false},
		{"NX windows, each busier than the last", LayoutAuto, "string", restarts(6), false},
		{"NX windows of a quiet client", LayoutAuto, "string", quiet(6), false},
		// Read less often than its TTL, a pushed key cannot be told from a
		// new window that began with more hits: it is not called extending.
		{"pushed, but read less often than its TTL", LayoutAuto, "string", sparse(6), false},
		{"pushed without a hit", LayoutAuto, "string", []step{{"5", 10_000}, {"5", 8_000}, {"5", 10_000}, {"5", 8_000}, {"5", 10_000}}, false},
		{"a log's deadline moves by design", LayoutLog, "string", pushed(61), false},
		{"a bucket's too", LayoutBucket, "string", pushed(61), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
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
		})
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
	for i := range 60 {
		read(strconv.Itoa(i+1), 10_000)
	}
	if c, _ := s.Get("k"); c.Status != StatusExtending {
		t.Fatalf("status %v after 12 s of pushes, want extending", c.Status)
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

// TestExtendingIsProven: a key is extending once its count has kept
// growing for longer than one whole window (the rule's, else the TTL it is
// given) with its deadline pushed back and never a reset, and not a
// reading before; one whose TTL is refreshed inside a window it does not
// outlive never is. A hit, and a reading, every 200 ms.
func TestExtendingIsProven(t *testing.T) {
	type step struct {
		key   string
		value int   // 0: the key is gone (expired)
		pttl  int64 // ms
	}
	const every = 200 * time.Millisecond
	// n hits on key, each setting its TTL to ttl ms again (EXPIRE without NX).
	pushed := func(key string, n int, ttl int64) []step {
		var s []step
		for i := range n {
			s = append(s, step{key, i + 1, ttl})
		}
		return s
	}
	// The key is read, untouched, until its TTL runs out, then it is gone.
	idle := func(key string, value int, ttl int64) []step {
		var s []step
		for left := ttl - 200; left > 0; left -= 200 {
			s = append(s, step{key, value, left})
		}
		return append(s, step{key: key})
	}
	// gofiber's limiter: the window's end is in the value, the TTL set to a
	// whole window at every hit, and the count starts again at 1 in the
	// same key once the window has passed: windows of 10 s, three of them.
	var resets []step
	for range 3 {
		resets = append(resets, pushed("rl:203.0.113.9", 50, 10_000)...)
	}
	// A window hashed into the name (a window's key no name tells): pushed
	// at every hit for its whole 10 s window, then left to expire, and the
	// next window's key after it.
	var hashed []step
	for _, key := range []string{"rl:u42:9f86d081", "rl:u42:3e23e816"} {
		hashed = append(hashed, pushed(key, 51, 10_000)...)
		hashed = append(hashed, idle(key, 51, 10_000)...)
	}
	// mennanov's fixed window: PEXPIRE the time left in the window at
	// every hit, so that the deadline stays at the window's end.
	var toEnd []step
	for i := range 150 {
		toEnd = append(toEnd, step{"rl:{fw}1764979200000000000", i%50 + 1, int64(10_000 - 200*(i%50))})
	}
	tests := []struct {
		name   string
		window time.Duration // the rule's; 0: none
		steps  []step
		after  time.Duration // extending once it grew for longer than this; 0: never
	}{
		{"grows past its 10 s window, pushed back, no reset", 10 * time.Second, pushed("rl:k", 75, 10_000), 10 * time.Second},
		{"no rule window: the 5 s TTL it is given is its window", 0, pushed("rl:k", 50, 5_000), 5 * time.Second},
		{"a minute's rule window, pushed for 14 s", time.Minute, pushed("rl:k", 70, 10_000), 0},
		{"refreshed inside its own window, then gone", 10 * time.Second, hashed, 0},
		{"refreshed then gone, without a rule window", 0, hashed, 0},
		{"a count that starts again in the same key (gofiber)", 10 * time.Second, resets, 0},
		{"a count that starts again, without a rule window", 0, resets, 0},
		{"the TTL set to the window's end at every hit (mennanov)", 0, toEnd, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 1000, Window: tt.window, ExpectTTL: true}}})
			first := map[string]time.Time{}
			var c Counter
			for i, st := range tt.steps {
				at := t0.Add(time.Duration(i) * every)
				if st.value == 0 {
					s.Apply(Batch{Removed: []string{st.key}})
					continue
				}
				if _, ok := first[st.key]; !ok {
					first[st.key] = at
				}
				s.Apply(Batch{Observed: []Observation{{Key: st.key, Type: "string", Raw: strconv.Itoa(st.value), PTTL: st.pttl, At: at}}})
				c = mustGet(t, s, st.key)
				grew := at.Sub(first[st.key])
				if c.Status == StatusExtending && (tt.after == 0 || grew <= tt.after) {
					t.Fatalf("%s extending after %s of hits at reading %d (value %d, TTL %d ms)", st.key, grew, i, st.value, st.pttl)
				}
			}
			if got := c.Status == StatusExtending; got != (tt.after > 0) {
				t.Errorf("%s: status %s at the end, want extending %v", c.Key, c.Status, tt.after > 0)
			}
		})
	}
}

// Before it is proven, a key pushed back as it grows says so, and when it
// will be known: its first hit plus its window plus a second.
func TestPushbackSaysWhenKnown(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 1000, Window: 30 * time.Second, ExpectTTL: true}}})
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 200 * time.Millisecond) }
	push := func(i int) {
		s.Apply(Batch{Observed: []Observation{{Key: "k", Type: "string", Raw: strconv.Itoa(i + 1), PTTL: 10_000, At: at(i)}}})
	}
	push(0)
	if p, ok := s.Pushback("k"); ok {
		t.Fatalf("one reading: Pushback = %+v, want none", p)
	}
	for i := 1; i <= 50; i++ {
		push(i)
	}
	p, ok := s.Pushback("k")
	if !ok || p.Proven || p.Pushes < 2 || p.Window != 30*time.Second {
		t.Fatalf("after 10 s of pushes: Pushback = %+v, %v; want pushes, not proven, a 30 s window", p, ok)
	}
	if want := t0.Add(31 * time.Second); p.KnownBy.Sub(want).Abs() > 300*time.Millisecond || p.Since.Sub(t0).Abs() > 300*time.Millisecond {
		t.Errorf("since %s, known by %s; want about %s and %s", p.Since, p.KnownBy, t0, want)
	}
	for i := 51; i <= 165; i++ {
		push(i)
	}
	if p, _ := s.Pushback("k"); !p.Proven {
		t.Errorf("after 33 s of pushes: Pushback = %+v, want proven", p)
	}
	if c := mustGet(t, s, "k"); c.Status != StatusExtending {
		t.Errorf("after 33 s of pushes: status %s, want extending", c.Status)
	}
}
