package model

import "math"

// NumPercentBuckets is how many bars the overview's histogram of % of limit
// has: one per tenth of the limit up to it, and one for the keys at or past
// it.
const NumPercentBuckets = 11

// belowLimit is how many buckets of ByPercent lie below the limit.
const belowLimit = NumPercentBuckets - 1

// Overview is the Store's keys counted by status and by how near their
// limit each is: what the dashboard's overview panel draws. It counts every
// key the Store holds, whatever the filter shows (an incident's question is
// how many clients are near their limit, not how many of those in view),
// and costs a copy of its counts: the Store keeps them as it applies each
// reading, so reading them does not grow with the keys.
type Overview struct {
	Total    int
	ByStatus [NumStatuses]int
	// ByPercent is the keys by their value's share of their rule's limit
	// (for a bucket, the share of its tokens used), as the LIMIT column
	// shows it: ByPercent[i] counts the keys from i tenths of the limit up
	// to i+1 tenths, below 0 counted with the first; the last counts those
	// at or past the limit.
	ByPercent [NumPercentBuckets]int
	// NoPercent is the keys that have no such share: no limit, or no
	// number (gcra, timestamp, opaque, not-counter).
	NoPercent int
}

// Limited is how many keys have a share of their limit: those ByPercent
// counts.
func (o *Overview) Limited() int { return o.Total - o.NoPercent }

// percents is the Store's count of its keys by percentBucket, the last
// slot for the keys with no share of a limit.
type percents [NumPercentBuckets + 1]int

// noPercent is percents' slot for the keys with no share of a limit.
const noPercent = NumPercentBuckets

// percentBucket is the slot of percents that e counts in, as of its
// reading. The share is worked out as n*10/limit rather than n/limit*10, so
// that an integer count exactly at a tenth of the limit is in the bucket
// that starts there, as warn_at 0.8 counts it.
func (s *Store) percentBucket(e *entry) int {
	var n float64
	switch e.kind {
	case KindInt:
		n = float64(int64(e.num))
	case KindFloat:
		n = math.Float64frombits(e.num)
	case KindNone:
		return noPercent
	}
	limit := s.rules.Fallback.Limit
	if r := int(e.rule); r >= 0 && r < len(s.rules.List) {
		limit = s.rules.List[r].Limit // as Rules.At, without copying the rule
	}
	if limit <= 0 || math.IsNaN(n) {
		return noPercent
	}
	if spec(e.layout).Drains {
		n = limit - n
	}
	switch {
	case n >= limit:
		return belowLimit
	case n > 0:
		return min(belowLimit-1, int(n*belowLimit/limit))
	}
	return 0
}

// Overview returns the counts of every key the Store holds, by status and
// by share of its limit. It ignores the filter, and costs the same at a
// million keys as at ten.
func (s *Store) Overview() Overview {
	o := Overview{Total: len(s.entries), ByStatus: s.byStatus, NoPercent: s.percents[noPercent]}
	copy(o.ByPercent[:], s.percents[:NumPercentBuckets])
	return o
}
