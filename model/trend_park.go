package model

// A rate-limit counter lives a window and is made again by the next hit:
// a 10 s window's key expires six times a minute. So that its trend shows
// the windows before, not only the current one, the ring of a key removed
// is parked, under its name, for as long as a trend spans, and a key of
// that name made again meanwhile takes it back (its trend goes on, its
// other history starts again). Parked rings are bounded (maxParked), the
// oldest let go first.

// parkFor is how long a removed key's ring is kept: a whole trend.
const parkFor = int64(TrendBuckets) * int64(TrendStep)

// maxParked is the most rings parked at once, whatever the churn.
const maxParked = 1 << 16

// parking is the rings of keys removed in the last parkFor.
type parking struct {
	byKey map[string]parked // nil until a ring is parked
	queue []parkedKey       // as parked, oldest first, from head
	head  int
}

type parked struct {
	ring int32
	at   int64 // the removed key's last reading
}

type parkedKey struct {
	key string
	at  int64
}

// park keeps e's ring for a key of its name made again soon, or lets it
// go when e has none.
func (s *Store) park(e *entry) {
	if e.hist == 0 {
		return
	}
	p := &s.parking
	if len(p.byKey) >= maxParked {
		s.unparkOldest()
	}
	if p.byKey == nil {
		p.byKey = map[string]parked{}
	}
	p.byKey[e.key] = parked{ring: e.hist - 1, at: e.at}
	p.queue = append(p.queue, parkedKey{e.key, e.at})
	e.hist, e.histN, e.histHead, e.extends = 0, 0, 0, 0
}

// unpark gives e, a key just made with its first reading, the ring its
// name parked, if any: its trend goes on from where it was, with the spans
// it did not exist in left empty; the readings and the expiry pushes
// before are not its own, and start again.
func (s *Store) unpark(e *entry) {
	p := &s.parking
	if len(p.byKey) == 0 {
		return
	}
	k, ok := p.byKey[e.key]
	if !ok {
		return
	}
	delete(p.byKey, e.key)
	e.hist = k.ring + 1
	g := s.hist.at(k.ring)
	last := sampleOf(e)
	g.begin(last.value, anchorDeadline(last))
	advance(g, nil, trendSpan(e.at), e.at)
	v, isNum := e.value().Number()
	addToTrend(g, e, v, isNum, e.layout, e.pttl, e.at)
}

// expireParked lets go of the rings parked longer than parkFor before now
// (nanoseconds from the epoch).
func (s *Store) expireParked(now int64) {
	p := &s.parking
	for p.head < len(p.queue) && now-p.queue[p.head].at > parkFor {
		s.unparkOldest()
	}
}

// unparkOldest lets go of the ring parked first.
func (s *Store) unparkOldest() {
	p := &s.parking
	for p.head < len(p.queue) {
		q := p.queue[p.head]
		p.queue[p.head] = parkedKey{}
		p.head++
		if k, ok := p.byKey[q.key]; ok && k.at == q.at {
			delete(p.byKey, q.key)
			s.hist.free = append(s.hist.free, k.ring)
			break
		}
	}
	if p.head > len(p.queue)/2 {
		p.queue = append(p.queue[:0], p.queue[p.head:]...)
		p.head = 0
	}
}
