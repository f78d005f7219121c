package model

import (
	"fmt"
	"math"
	"strconv"
	"testing"
	"time"
)

func TestSparkline(t *testing.T) {
	nan := math.NaN()
	tests := []struct {
		name   string
		values []float64
		lo, hi float64
		want   string
	}{
		{"rising from lo to hi", []float64{0, 1, 2, 3, 4, 5, 6, 7}, 0, 7, "▁▂▃▄▅▆▇█"},
		{"below lo and above hi are held at the ends", []float64{-5, 50}, 0, 10, "▁█"},
		{"no reading is a space", []float64{nan, 3, nan}, 0, 3, " █ "},
		{"flat at zero with nothing above", []float64{0, 0, 0}, 0, 0, "▁▁▁"},
		{"flat above lo with no range is full", []float64{4, 4}, 0, 4, "██"},
		{"half way", []float64{50}, 0, 100, "▅"},
		{"the nearest step: 88% is not the top", []float64{88, 93, 12}, 0, 100, "▇█▂"},
		{"an infinity is the top", []float64{math.Inf(1)}, 0, 1, "█"},
		{"none", nil, 0, 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Sparkline(tt.values, tt.lo, tt.hi); got != tt.want {
				t.Errorf("%s: Sparkline(%v, %v, %v) = %q, want %q", tt.name, tt.values, tt.lo, tt.hi, got, tt.want)
			}
		})
	}
}

func TestTrendLine(t *testing.T) {
	nan := math.NaN()
	trend := func(vs ...float64) Trend {
		var tr Trend
		for k := range tr.Values {
			tr.Values[k] = nan
		}
		copy(tr.Values[TrendBuckets-len(vs):], vs)
		for _, v := range vs {
			if !math.IsNaN(v) {
				tr.Readings++
			}
		}
		return tr
	}
	tests := []struct {
		name   string
		t      Trend
		layout Layout
		limit  float64
		want   string
	}{
		{"scaled to the limit", trend(0, 25, 50, 100, 200), LayoutCounter, 100, "   ▁▃▅██"},
		{"a bucket's tokens left read as the share used", trend(10, 5, 0), LayoutBucket, 10, "     ▁▅█"},
		{"without a limit, from 0 to the highest", trend(1, 2, 4), LayoutCounter, 0, "     ▃▅█"},
		{"without a limit, below 0 from the lowest", trend(-4, 0, 4), LayoutCounter, 0, "     ▁▅█"},
		{"flat at the limit", trend(100, 100, 100, 100, 100, 100, 100, 100), LayoutCounter, 100, "████████"},
		{"no number read", trend(nan, nan), LayoutCounter, 100, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := TrendLine(tt.t, tt.layout, tt.limit); got != tt.want {
				t.Errorf("%s: TrendLine = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

func TestBFloat16(t *testing.T) {
	for _, tt := range []struct{ in, want float64 }{
		{0, 0}, {1, 1}, {-1, -1}, {100, 100}, {255, 255}, {687.25, 688}, {86400, 86528},
		{math.MaxFloat32, 3.3895313892515355e38}, {math.Inf(1), math.Inf(1)},
	} {
		t.Run(fmt.Sprint(tt.in), func(t *testing.T) {
			if got := fromBF16(toBF16(float32(tt.in))); got != tt.want {
				t.Errorf("bfloat16 of %v = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
	if got := fromBF16(toBF16(float32(math.NaN()))); !math.IsNaN(got) {
		t.Errorf("bfloat16 of NaN = %v, want NaN", got)
	}
}

// A key read every second keeps, for each 7.5 s, its highest value and the
// TTL of its last reading; spans without a reading hold the one before;
// a minute on, the old spans are gone.
func TestStoreTrend(t *testing.T) {
	s := NewStore(&Rules{List: []Rule{{Pattern: "*", Limit: 100, Window: time.Minute, ExpectTTL: true}}})
	read := func(key, raw string, pttl int64, at time.Duration) {
		s.Apply(Batch{Observed: []Observation{{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: t0.Add(at)}}})
	}
	for i := range 3 {
		read("idle", "7", 5000, time.Duration(i)*time.Second)
	}
	if _, ok := s.Trend("idle", t0.Add(3*time.Second)); ok {
		t.Errorf("a key that never changed has a trend")
	}
	// Rising by one a second for 15 s, its deadline fixed at +60 s.
	for i := range 16 {
		at := time.Duration(i) * time.Second
		read("k", strconv.Itoa(i), int64(60*time.Second-at)/1e6, at)
	}
	tr, ok := s.Trend("k", t0.Add(15*time.Second))
	if !ok {
		t.Fatal("a changing key has no trend")
	}
	// Spans: [0, 7.5s) holds 0-7, [7.5, 15) 8-14, [15, 22.5) 15.
	wantV := []float64{7, 14, 15}
	wantTTL := []float64{53, 46, 45}
	for k, w := range wantV {
		j := TrendBuckets - len(wantV) + k
		if tr.Values[j] != w || tr.TTLs[j] != wantTTL[k] {
			t.Errorf("span %d: value %v TTL %v, want %v and %v", j, tr.Values[j], tr.TTLs[j], w, wantTTL[k])
		}
	}
	for j := range TrendBuckets - len(wantV) {
		if !math.IsNaN(tr.Values[j]) || !math.IsNaN(tr.TTLs[j]) {
			t.Errorf("span %d before the first reading: %v, %v; want NaN", j, tr.Values[j], tr.TTLs[j])
		}
	}
	if tr.Readings != 3 || !tr.Start.Equal(t0.Add(-5*TrendStep)) {
		t.Errorf("%d readings from %v, want 3 from -37.5s", tr.Readings, tr.Start.Sub(t0))
	}
	if got := TrendLine(tr, LayoutCounter, 100); got != "     ▁▂▂" {
		t.Errorf("TrendLine = %q", got)
	}
	// 30 s without a reading: the spans since hold the last one, its TTL
	// counting down to each span's end (the last one's: to now).
	tr, _ = s.Trend("k", t0.Add(45*time.Second))
	wantV = []float64{7, 14, 15, 15, 15, 15, 15}
	wantTTL = []float64{53, 46, 45, 30, 22.5, 15, 15}
	for k, w := range wantV {
		j := TrendBuckets - len(wantV) + k
		if tr.Values[j] != w || tr.TTLs[j] != wantTTL[k] {
			t.Errorf("+45s span %d: value %v TTL %v, want %v and %v", j, tr.Values[j], tr.TTLs[j], w, wantTTL[k])
		}
	}
	// The same read a minute later still, at a lower value and then
	// without a TTL: the old spans are gone, the new one holds the highest.
	read("k", "3", PTTLNoExpiry, 120*time.Second)
	read("k", "2", PTTLNoExpiry, 121*time.Second)
	tr, _ = s.Trend("k", t0.Add(121*time.Second))
	if tr.Values[TrendBuckets-1] != 3 || tr.TTLs[TrendBuckets-1] != -1 || tr.Values[0] != 15 || tr.Readings != TrendBuckets {
		t.Errorf("after a gap of over a minute: %+v", tr)
	}
}

// A span keeps the reading nearest the limit: a counter's highest, a
// bucket's fewest tokens left; a reading that is not a number leaves a
// span's number alone, and empties a span of its own.
func TestTrendKeepsTheReadingNearestTheLimit(t *testing.T) {
	for _, tt := range []struct {
		layout Layout
		want   float64
	}{{LayoutCounter, 9}, {LayoutBucket, 2}} {
		t.Run(tt.layout.String(), func(t *testing.T) {
			var g ring
			e := &entry{kind: KindInt, num: 5, pttl: 10_000}
			startTrend(&g, e)
			for _, v := range []float64{9, 2, 4} {
				addToTrend(&g, e, v, true, tt.layout, 10_000, int64(time.Second))
			}
			addToTrend(&g, e, 0, false, tt.layout, 10_000, int64(2*time.Second))
			if got := fromBF16(g.trend[TrendBuckets-1].v); got != tt.want {
				t.Errorf("%s: span holds %v, want %v", tt.layout, got, tt.want)
			}
			addToTrend(&g, e, 0, false, tt.layout, 10_000, int64(TrendStep))
			if got := fromBF16(g.trend[TrendBuckets-1].v); !math.IsNaN(got) {
				t.Errorf("%s: a span read only as no number holds %v", tt.layout, got)
			}
		})
	}
}

// Whatever the numbers, a sparkline is one cell per value, each a block
// or a space, and a higher value never draws a lower block.
func FuzzSparkline(f *testing.F) {
	f.Add(0.0, 50.0, 100.0, 0.0, 100.0)
	f.Add(math.Inf(-1), math.NaN(), math.MaxFloat64, -1.0, 1.0)
	f.Add(5.0, 5.0, 5.0, 5.0, 5.0)
	f.Add(1.0, 2.0, 3.0, math.Inf(-1), 5.0)
	f.Add(1.0, 2.0, 3.0, math.Inf(-1), math.Inf(1))
	f.Fuzz(func(t *testing.T, a, b, c, lo, hi float64) {
		values := []float64{a, b, c}
		got := []rune(Sparkline(values, lo, hi))
		if len(got) != len(values) {
			t.Fatalf("Sparkline(%v, %v, %v) = %q: %d cells for %d values", values, lo, hi, string(got), len(got), len(values))
		}
		level := func(r rune) int {
			for k, s := range sparks {
				if s == r {
					return k
				}
			}
			return -1
		}
		for i, r := range got {
			if math.IsNaN(values[i]) != (r == ' ') || r != ' ' && level(r) < 0 {
				t.Fatalf("Sparkline(%v, %v, %v) = %q: cell %d is %q", values, lo, hi, string(got), i, r)
			}
			for j := range got {
				if r != ' ' && got[j] != ' ' && values[i] > values[j] && level(r) < level(got[j]) {
					t.Fatalf("Sparkline(%v, %v, %v) = %q: %v drawn below %v", values, lo, hi, string(got), values[i], values[j])
				}
			}
		}
	})
}
