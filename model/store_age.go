package model

import (
	"time"
)

// ageShift sets the width of a bucket of readings' ages: 2^30 ns, about a
// second, as fine as a header that says "oldest 12s" needs.
const ageShift = 30

// ages counts the keys by when each was last read, in buckets of about a
// second from the Store's epoch, so that the oldest reading of a million
// keys is known at every frame without a scan: a reading moves its key from
// one bucket to another (nothing when both are the same), and the oldest
// is the first bucket that is not empty. The buckets span the oldest
// reading to the newest: a few hundred while keys are read in turn.
type ages struct {
	base   int64   // the bucket counts[0] counts
	counts []int32 // keys per bucket, from base on
}

// bucket is the bucket of a reading at at (nanoseconds from the epoch).
func bucket(at int64) int64 { return at >> ageShift }

// add counts a key last read at at.
func (a *ages) add(at int64) {
	b := bucket(at)
	switch {
	case len(a.counts) == 0:
		a.base = b
	case b < a.base: // older than any (a batch read before the last)
		grow := make([]int32, a.base-b, int(a.base-b)+len(a.counts))
		a.counts, a.base = append(grow, a.counts...), b
	}
	if i := b - a.base; i >= int64(len(a.counts)) {
		a.counts = append(a.counts, make([]int32, i-int64(len(a.counts))+1)...)
	}
	a.counts[b-a.base]++
}

// remove takes back a key counted at at, and drops the empty buckets at
// the front, so that the first one is the oldest reading's.
func (a *ages) remove(at int64) {
	i := bucket(at) - a.base
	if i < 0 || i >= int64(len(a.counts)) || a.counts[i] == 0 {
		return // not counted: cannot happen while add and remove pair up
	}
	a.counts[i]--
	n := 0
	for n < len(a.counts) && a.counts[n] == 0 {
		n++
	}
	if n == len(a.counts) {
		a.counts, a.base = a.counts[:0], 0
		return
	}
	a.counts, a.base = a.counts[n:], a.base+int64(n)
}

// move counts a key read again at at, last read at was.
func (a *ages) move(was, at int64) {
	if bucket(was) != bucket(at) {
		a.add(at)
		a.remove(was)
	}
}

// OldestRead is about when the key read longest ago was read, rounded
// down to the second (so it never says a reading is newer than it is);
// zero when the Store is empty. It costs the same at a million keys as at
// one: see ages.
func (s *Store) OldestRead() time.Time {
	if len(s.entries) == 0 || len(s.ages.counts) == 0 {
		return time.Time{}
	}
	return s.epoch.Add(time.Duration(s.ages.base << ageShift))
}

// EachShownRead calls fn with the server, the reading time and the
// KnownUntil (zero when the feed vouches for it while live) of each of
// the n rows from offset (those Rows(offset, n) returns), in order. It
// builds no rows, for a header drawn at every frame that vouches for each
// server's rows by that server's feed.
func (s *Store) EachShownRead(offset, n int, fn func(server string, read, until time.Time)) {
	s.eachShown(offset, n, func(e *entry) {
		fn(s.serverOf(e), s.epoch.Add(time.Duration(e.at)), s.knownUntil(e.key))
	})
}

// eachShown calls fn with each of the n rows' entries from offset (those
// Rows(offset, n) returns), in order, building no rows.
func (s *Store) eachShown(offset, n int, fn func(e *entry)) {
	s.refresh()
	o := &s.order
	offset = max(offset, 0)
	if n <= 0 || offset >= o.shown {
		return
	}
	n = min(n, o.shown-offset)
	for j, i := o.locate(offset); n > 0; j, i = j+1, 0 {
		for _, e := range o.blocks[j].keys[i:] {
			if o.passes(e) {
				fn(&s.entries[e])
				if n--; n == 0 {
					break
				}
			}
		}
	}
}
