package model

import (
	"math"
	"strconv"
	"time"
)

// timeUnit is the unit of an epoch time, inferred from its magnitude:
// today's time is about 1.8e9 seconds, 1.8e12 ms, 1.8e15 µs or 1.8e18 ns
// since 1970, and the bands unitOf accepts leave a gap between units.
type timeUnit uint8

const (
	unitSeconds timeUnit = iota
	unitMillis
	unitMicros
	unitNanos
	numTimeUnits
)

var unitNames = [numTimeUnits]string{"seconds", "milliseconds", "microseconds", "nanoseconds"}

// unitScale is nanoseconds per unit.
var unitScale = [numTimeUnits]int64{1e9, 1e6, 1e3, 1}

// unitOf is the unit of x read as an epoch time from September 2001 (1e9
// seconds) to 2262 (where int64 nanoseconds end): seconds from 1e9, ms from
// 1e12, µs from 1e15, ns from 1e18. ok is false for any other number.
func unitOf(x float64) (u timeUnit, ok bool) {
	for u := unitNanos; ; u-- {
		lo := 1e18 / float64(unitScale[u])
		if x >= lo && x < float64(math.MaxInt64/unitScale[u]) {
			return u, true
		}
		if u == unitSeconds {
			return 0, false
		}
	}
}

// epochNanos reads v as an epoch time in the unit its magnitude gives,
// as nanoseconds since 1970: exactly for integers (a 19-digit nanosecond
// count has more digits than a float64 holds).
func epochNanos(v Value) (ns int64, u timeUnit, ok bool) {
	n, isNum := v.Number()
	if !isNum {
		return 0, 0, false
	}
	if u, ok = unitOf(n); !ok {
		return 0, 0, false
	}
	if v.Kind == KindInt {
		return v.Int * unitScale[u], u, true // unitOf keeps it within int64
	}
	return int64(n * float64(unitScale[u])), u, true
}

// gcraEpoch is 2017-01-01 in seconds since 1970: go-redis/redis_rate counts
// its times from it, to keep microseconds within a float64's digits.
const gcraEpoch = 1483228800

// since2017Nanos reads n as redis_rate's seconds since 2017-01-01, as
// nanoseconds since 1970; ok is false below 0 or past 1e9 (2048).
func since2017Nanos(n float64) (ns int64, ok bool) {
	if n < 0 || n >= 1e9 {
		return 0, false
	}
	return int64(n*1e9) + gcraEpoch*1e9, true
}

// unixUTC is ns nanoseconds since 1970 as a time in UTC.
func unixUTC(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// Near now, for a number read as a time from its magnitude alone: from a
// day before now to a year after. A count is never that large in practice,
// and a time this near now is no coincidence.
const (
	nearPast   = 24 * time.Hour
	nearFuture = 366 * 24 * time.Hour
)

// nearNow reports whether ns (since 1970) is near now.
func nearNow(ns int64, now time.Time) bool {
	t := now.UnixNano()
	return ns >= t-int64(nearPast) && ns <= t+int64(nearFuture)
}

// notFuture reports whether ns is no later than a day after now: the times
// of a log's hits, which may be old (a log nobody wrote to for a month is
// still a log), but not ahead of the clock by more than clocks drift.
func notFuture(ns int64, now time.Time) bool { return ns <= now.UnixNano()+int64(nearPast) }

// LogWindowStart is the score from which a log's entries are inside
// window at now, in the unit of its newest entry (its magnitude gives it):
// an entry counts when its score is greater (ZCOUNT key (start +inf). ok
// is false when newest is no time or no window is known.
func LogWindowStart(newest float64, window time.Duration, now time.Time) (start float64, ok bool) {
	u, isTime := unitOf(newest)
	if !isTime || window <= 0 {
		return 0, false
	}
	from := now.UnixNano() - int64(window)
	return float64(from/unitScale[u]) + float64(from%unitScale[u])/float64(unitScale[u]), true
}

// CountInWindow counts a list log's entries (as LRANGE returns them) whose
// time is after start (from LogWindowStart); entries that are not numbers
// count for nothing.
func CountInWindow(entries []string, start float64) int64 {
	var n int64
	for _, e := range entries {
		if ParseScore(e) > start {
			n++
		}
	}
	return n
}

// ParseScore reads a list log's entry (LINDEX, LRANGE) as the number a
// sorted set's score would be: NaN when it is not a finite number.
func ParseScore(s string) float64 {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) {
		return math.NaN()
	}
	return f
}
