package model

import (
	"math"
	"time"
)

// HistoryLen is how many past readings the Store keeps of a key that
// changed, besides the current one. A key that never changed keeps none, so
// a large idle keyspace costs nothing; a changing one a small fixed ring.
const HistoryLen = 4

// ringChunk is how many rings the Store allocates at once: a slab grows a
// chunk at a time rather than doubling, so its spare room stays small.
const ringChunk = 1 << 12

// Sample is one past reading of a key.
type Sample struct {
	Value float64       // NaN when it was not a number
	TTL   time.Duration // left at At; negative: no expiry
	At    time.Time
}

// sample is a Sample as the Store keeps it, in twelve bytes.
type sample struct {
	value float32
	ttl   int32  // deciseconds left; -1: no expiry
	at    uint32 // deciseconds from the Store's epoch
}

// ring is a key's past readings, the reading its next push of the expiry
// is measured from, and the deadline it had when the pushes began (see
// extend).
type ring struct {
	s       [HistoryLen]sample
	anchorV float32
	anchorD int32                   // deadline, deciseconds from the epoch
	startD  int32                   // the deadline when the key last began again
	trend   [TrendBuckets]trendCell // the last minute (see Trend)
	trendAt uint32                  // the TrendStep of trend's last span
}

// history is the Store's slab of rings and the ones free for reuse.
type history struct {
	chunks [][]ring
	used   int32 // rings handed out from chunks, ever
	free   []int32
}

func (h *history) at(n int32) *ring { return &h.chunks[n/ringChunk][n%ringChunk] }

func (h *history) alloc() int32 {
	if k := len(h.free); k > 0 {
		n := h.free[k-1]
		h.free = h.free[:k-1]
		*h.at(n) = ring{}
		return n
	}
	if int(h.used) == len(h.chunks)*ringChunk {
		h.chunks = append(h.chunks, make([]ring, ringChunk))
	}
	h.used++
	return h.used - 1
}

// deci is d in deciseconds, held within an int32.
func deci(d int64) int32 {
	return int32(max(math.MinInt32+1, min(math.MaxInt32, d/int64(100*time.Millisecond))))
}

// sampleOf is e's current reading as a sample.
func sampleOf(e *entry) sample {
	v, ok := e.value().Number()
	s := sample{value: float32(v), ttl: -1, at: uint32(max(0, deci(e.at)))}
	if !ok {
		s.value = float32(math.NaN())
	}
	if e.pttl >= 0 {
		s.ttl = max(0, deci(int64(PTTLDuration(e.pttl))))
	}
	return s
}

// remember is the hook observe calls with e still holding its last reading
// and r the new one, read at at with pttl: when the value or the deadline
// changed, it keeps the last reading in e's ring (made on the first
// change), folds every reading into the ring's trend once it has one, and
// returns st, or StatusExtending once the expiry of a counter has been
// pushed back while it grew for longer than a whole window (see extend).
func (s *Store) remember(e *entry, r *Reading, pttl, at int64, st Status) Status {
	newNum, isNum := r.Value.Number()
	oldNum, wasNum := e.value().Number()
	if isNum == wasNum && (!isNum || newNum == oldNum) && !e.expiryMoved(pttl, at) {
		if e.hist != 0 {
			addToTrend(s.hist.at(e.hist-1), e, newNum, isNum, r.Layout, pttl, at)
		}
		return s.extendedStatus(e, r, st)
	}
	last := sampleOf(e)
	if e.hist == 0 {
		e.hist = s.hist.alloc() + 1
		g := s.hist.at(e.hist - 1)
		g.begin(last.value, anchorDeadline(last))
		startTrend(g, e)
	}
	g := s.hist.at(e.hist - 1)
	addToTrend(g, e, newNum, isNum, r.Layout, pttl, at)
	g.s[e.histHead] = last
	e.histHead = (e.histHead + 1) % HistoryLen
	e.histN = min(e.histN+1, HistoryLen)
	e.extends = extend(g, e.extends, last, float32(newNum), isNum, pttl, at, s.pushWindow(e, g, r.Window.Length))
	return s.extendedStatus(e, r, st)
}

// anchorDeadline is when a sample's key expires, in deciseconds from the
// epoch; MaxInt32 without a TTL.
func anchorDeadline(x sample) int32 {
	if x.ttl < 0 {
		return math.MaxInt32
	}
	return int32(min(math.MaxInt32, int64(x.at)+int64(x.ttl)))
}

// begin makes v and deadline d the reading a key's pushes are measured
// from, and d the deadline they began at: a key made again, or one whose
// deadline came earlier, has pushed nothing yet.
func (g *ring) begin(v float32, d int32) { g.anchorV, g.anchorD, g.startD = v, d, d }

// proven is the bit of an entry's extends that says its pushes are proven
// (see extend); the bits below count them.
const proven uint8 = 0x80

// extend returns how many times a counter's expiry has been pushed back
// while it grew, given a new reading, the one before it (last) and the
// count so far, with the proven bit set once the key has kept growing so
// for longer than w, its window, and moves the ring's anchor on.
//
// Each push is measured from the last one that came with growth (the
// anchor), not the last reading, so that a deadline pushed a little at
// every hit counts once it has moved more than the jitter of reading it.
// How long the key kept growing is told by where its hits put its
// deadline (each push sets it to the hit's time plus the TTL), less the
// deadline it had when the pushes began (startD), rather than by when the
// hits were read. A value that fell since the last reading, a deadline
// that came earlier, or a reading after the last one's deadline is a new
// key (the old one expired, and a window began), and starts again from 0:
// a window that restarts is no push, however many hits it has counted,
// and a client that switched to EXPIRE NX stops being counted once its
// key has expired.
func extend(g *ring, count uint8, last sample, v float32, isNum bool, pttl, at int64, w time.Duration) uint8 {
	if !isNum || pttl < 0 {
		g.begin(v, math.MaxInt32)
		return 0
	}
	d := deci(deadline(pttl, at))
	jitter := deci(int64(deadlineJitter))
	switch {
	case g.anchorD == math.MaxInt32 || v < last.value || d < g.anchorD-jitter || deci(at) >= anchorDeadline(last):
		g.begin(v, d)
		return 0
	case d > g.anchorD+jitter && v > g.anchorV:
		if count&^proven < proven-1 {
			count++
		}
		g.anchorV, g.anchorD = v, d
	}
	if count&^proven >= 2 && v > last.value && int64(d-g.startD) > int64(deci(int64(w+deadlineJitter))) {
		count |= proven
	}
	return count
}

// Pushback is what the Store has seen of a counter's expiry being pushed
// back while it grows (EXPIRE without NX on every hit), since the key
// last began again. It is proven extending once it has kept growing so
// for longer than one whole window: a key that lives for one window only,
// and has its TTL set again inside it, stops growing before then, and
// never is.
type Pushback struct {
	Pushes int           // how often its deadline moved later as it grew
	Since  time.Time     // about when the first hit it is judged on came
	Window time.Duration // how long it must keep growing: the rule's window, else the TTL it is given
	// KnownBy is when a hit, if it still grows and is pushed back, proves
	// it: Since plus Window plus the jitter of reading a deadline.
	KnownBy time.Time
	Proven  bool // it has: the status is extending
}

// Pushback returns what the Store has seen of the expiry of the row id
// (Counter.ID: a key's, or a hash field's) being pushed back as it grows; ok is false when it has not been, since the key last
// began again, or the key is not a counter whose TTL is its window's
// (logs, buckets and GCRA keys move their deadline by design).
func (s *Store) Pushback(id string) (p Pushback, ok bool) {
	i, found := s.index.find(id, s.entries)
	if !found {
		return Pushback{}, false
	}
	e := &s.entries[i]
	if e.hist == 0 || e.extends&^proven == 0 || !spec(e.layout).WindowTTL || e.pttl < 0 {
		return Pushback{}, false
	}
	g := s.hist.at(e.hist - 1)
	var named time.Duration
	if spec(e.layout).NamedWindow {
		w, _, _ := parseWindowName(s.keyOf(e), s.rules.windowAt(int(e.rule)), s.epoch.Add(time.Duration(e.at)), true)
		named = w.Length
	}
	w := s.pushWindow(e, g, named)
	ttl := s.ttlGiven(e, g)
	tick := 100 * time.Millisecond
	since := s.epoch.Add(time.Duration(g.startD)*tick - ttl)
	return Pushback{
		Pushes:  int(e.extends &^ proven),
		Since:   since,
		Window:  w,
		KnownBy: since.Add(w + deadlineJitter),
		Proven:  e.extends&proven != 0,
	}, true
}

// pushWindow is how long a counter must keep growing, its deadline pushed
// back, to be extending: its rule's window, else the window its name
// gives (named, 0 if none), else the TTL it is given.
func (s *Store) pushWindow(e *entry, g *ring, named time.Duration) time.Duration {
	if w := s.rules.windowAt(int(e.rule)); w > 0 {
		return w
	}
	if named > 0 {
		return named
	}
	return s.ttlGiven(e, g)
}

// ttlGiven is the TTL a counter is given at each hit, as far as its
// readings tell: the longest of the current one's and those kept, the
// ones read soonest after a hit.
func (s *Store) ttlGiven(e *entry, g *ring) time.Duration {
	d := time.Duration(-1)
	if e.pttl >= 0 {
		d = PTTLDuration(e.pttl)
	}
	for k := range int(e.histN) {
		if x := g.s[k]; x.ttl >= 0 {
			d = max(d, time.Duration(x.ttl)*100*time.Millisecond)
		}
	}
	return max(d, 0)
}

// extendedStatus is st, or StatusExtending for a counter or window counter
// with a TTL proven to be pushed back while it grows (see extend). Logs,
// buckets and GCRA keys move their deadline by design, and never are.
func (s *Store) extendedStatus(e *entry, r *Reading, st Status) Status {
	if e.extends&proven == 0 || !spec(r.Layout).WindowTTL {
		return st
	}
	switch st {
	case StatusOK, StatusWarn, StatusOver:
		return StatusExtending
	case StatusStuck, StatusExtending, StatusNoExpiry, StatusLeak, StatusNotCounter: // no TTL to push back, or no count
	}
	return st
}

// History returns the past readings of the row id (Counter.ID) the Store
// keeps, oldest first,
// not including the current one (Get gives that); nil for a key that has
// not changed since it was first read.
func (s *Store) History(id string) []Sample {
	i, ok := s.index.find(id, s.entries)
	if !ok {
		return nil
	}
	e := &s.entries[i]
	if e.hist == 0 {
		return nil
	}
	g := s.hist.at(e.hist - 1)
	out := make([]Sample, 0, e.histN)
	start := (int(e.histHead) + HistoryLen - int(e.histN)) % HistoryLen
	for k := range int(e.histN) {
		x := g.s[(start+k)%HistoryLen]
		ttl := time.Duration(-1)
		if x.ttl >= 0 {
			ttl = time.Duration(x.ttl) * 100 * time.Millisecond
		}
		out = append(out, Sample{Value: float64(x.value), TTL: ttl, At: s.epoch.Add(time.Duration(x.at) * 100 * time.Millisecond)})
	}
	return out
}
