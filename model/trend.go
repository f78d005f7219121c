package model

import (
	"math"
	"strings"
	"time"
)

// TrendBuckets is how many spans of TrendStep a key's trend keeps: the
// last minute, the span the table's TREND column draws.
const TrendBuckets = 8

// TrendStep is the time each bucket of a trend covers.
const TrendStep = 7500 * time.Millisecond

// Trend is a key's value and TTL over the last TrendBuckets spans of
// TrendStep, oldest first, the last the span now falls in. Each span holds
// the reading in it nearest the limit (the highest value; a bucket's fewest
// tokens left) and the TTL left at its last reading; a span without a
// reading holds what the reading before it said. Both are kept to two or
// three significant digits: a trend is a picture, the current reading (Get)
// is exact.
type Trend struct {
	Values   [TrendBuckets]float64 // NaN: no number read by then
	TTLs     [TrendBuckets]float64 // seconds left; -1: no expiry; NaN: not read by then
	Start    time.Time             // when the first span begins
	Readings int                   // spans with a number
}

// trendCell is a span of a trend as the ring keeps it: value and TTL (in
// seconds) as bfloat16, the top half of a float32.
type trendCell struct{ v, ttl uint16 }

// bf16Empty is the bfloat16 of a span without a reading (a NaN).
const bf16Empty = 0x7fc1

// toBF16 is f rounded to the nearest bfloat16; a finite f too large for one
// is held at the largest.
func toBF16(f float32) uint16 {
	b := math.Float32bits(f)
	if f != f {
		return bf16Empty
	}
	r := uint16((b + 0x7fff + (b >> 16 & 1)) >> 16)
	if r&0x7fff == 0x7f80 && b&0x7fffffff != 0x7f800000 {
		r-- // rounded up to an infinity: the largest finite of that sign
	}
	return r
}

func fromBF16(u uint16) float64 { return float64(math.Float32frombits(uint32(u) << 16)) }

// trendSpan is the number of the TrendStep at at (nanoseconds from the
// Store's epoch).
func trendSpan(at int64) uint32 { return uint32(max(0, at/int64(TrendStep))) }

// ttlAt is the TTL in seconds that a key read with pttl at at has left at
// later (nanoseconds from the epoch), as a trend keeps it.
func ttlAt(pttl, at, later int64) uint16 {
	if pttl < 0 {
		return toBF16(-1)
	}
	return toBF16(float32(max(0, deadline(pttl, at)-later)) * (1 / float32(time.Second)))
}

// startTrend fills a new ring's trend with e's reading, the one before the
// first change.
func startTrend(g *ring, e *entry) {
	for k := range g.trend {
		g.trend[k] = trendCell{bf16Empty, bf16Empty}
	}
	g.trendAt = trendSpan(e.at)
	v, ok := e.value().Number()
	if !ok {
		v = math.NaN()
	}
	g.trend[TrendBuckets-1] = trendCell{toBF16(float32(v)), ttlAt(e.pttl, e.at, e.at)}
}

// advance moves g's trend on to span, the spans in between holding e's
// reading as it stood at the end of each, or at until when sooner (e's
// is the last reading before span); empty without e (no key then).
func advance(g *ring, e *entry, span uint32, until int64) {
	if span <= g.trendAt {
		return
	}
	shift := int(min(span-g.trendAt, TrendBuckets))
	copy(g.trend[:], g.trend[shift:])
	g.trendAt = span
	if e == nil {
		for k := TrendBuckets - shift; k < TrendBuckets; k++ {
			g.trend[k] = trendCell{bf16Empty, bf16Empty}
		}
		return
	}
	v, ok := e.value().Number()
	if !ok {
		v = math.NaN()
	}
	cell := trendCell{toBF16(float32(v)), toBF16(-1)}
	dl := deadline(e.pttl, e.at)
	for k := TrendBuckets - shift; k < TrendBuckets; k++ {
		if e.pttl >= 0 {
			// the TTL left at the end of the span slot k holds
			end := int64(span-uint32(TrendBuckets-1-k)+1) * int64(TrendStep)
			cell.ttl = toBF16(float32(max(0, dl-min(end, until))) * (1 / float32(time.Second)))
		}
		g.trend[k] = cell
	}
}

// addToTrend folds a new reading (v, isNum, pttl at at, of layout l) into
// e's ring, e still holding the reading before it.
func addToTrend(g *ring, e *entry, v float64, isNum bool, l Layout, pttl, at int64) {
	span := trendSpan(at)
	fresh := span > g.trendAt
	advance(g, e, span, at)
	b := &g.trend[TrendBuckets-1]
	b.ttl = ttlAt(pttl, at, at)
	if !isNum {
		if fresh {
			b.v = bf16Empty
		}
		return
	}
	nv := toBF16(float32(v))
	old := fromBF16(b.v)
	drains := spec(l).Drains // a span keeps its worst: a bucket's fewest tokens
	switch {
	case fresh || math.IsNaN(old):
		b.v = nv
	case drains && v < old, !drains && v > old:
		b.v = nv
	}
}

// Trend returns the trend of the row id (Counter.ID) as of now, and false
// for a row the Store keeps none for: one that has not changed since it
// was first read.
func (s *Store) Trend(id string, now time.Time) (Trend, bool) {
	i, ok := s.index.find(id, s.entries)
	if !ok {
		return Trend{}, false
	}
	e := &s.entries[i]
	if e.hist == 0 {
		return Trend{}, false
	}
	g := *s.hist.at(e.hist - 1)
	at := int64(now.Sub(s.epoch))
	advance(&g, e, trendSpan(at), at)
	t := Trend{Start: s.epoch.Add(time.Duration((int64(g.trendAt) + 1 - TrendBuckets) * int64(TrendStep)))}
	for k, b := range g.trend {
		t.Values[k], t.TTLs[k] = fromBF16(b.v), fromBF16(b.ttl)
		if !math.IsNaN(t.Values[k]) {
			t.Readings++
		}
	}
	return t, true
}

// sparks are the block characters of a sparkline, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values as block characters, one each, the nearest of
// eight steps from lo to hi: lo or below as the lowest, hi or above as the
// highest, a NaN as a space.
func Sparkline(values []float64, lo, hi float64) string {
	var b strings.Builder
	for _, v := range values {
		switch {
		case math.IsNaN(v):
			b.WriteByte(' ')
		case v <= lo:
			b.WriteRune(sparks[0])
		case v >= hi:
			b.WriteRune(sparks[len(sparks)-1])
		default:
			// The nearest block: the highest only at hi or near it, so
			// that 88% of a limit does not read as the limit reached.
			f := (v-lo)/(hi-lo)*float64(len(sparks)-1) + 0.5
			k := 0
			if f >= 0 { // not a NaN (an infinite lo or hi makes one)
				k = int(min(f, float64(len(sparks)-1)))
			}
			b.WriteRune(sparks[k])
		}
	}
	return b.String()
}

// TrendLine is t as the table's TREND column draws it: as a share of limit
// (0 the lowest block, the limit and above the highest) when the key has
// one, as Percent reads it; otherwise scaled from 0 (or the lowest value,
// when below 0) to the highest value. "" when t holds no number.
func TrendLine(t Trend, l Layout, limit float64) string {
	if t.Readings == 0 {
		return ""
	}
	values := t.Values
	if _, ok := percentOf(l, Value{Kind: KindInt}, limit); ok {
		for k, v := range values {
			if !math.IsNaN(v) {
				values[k], _ = percentOf(l, Value{Kind: KindFloat, Float: v}, limit)
			}
		}
		return Sparkline(values[:], 0, 1)
	}
	lo, hi := 0.0, math.Inf(-1)
	for _, v := range values {
		if !math.IsNaN(v) {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	return Sparkline(values[:], lo, hi)
}
