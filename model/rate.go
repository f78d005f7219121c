package model

import (
	"math"
	"time"
)

// rateHorizon (seconds) is how far back Rate looks: an increase this old
// weighs e^-1 of a fresh one.
const rateHorizon = 5.0

func (e *entry) rate() float64 {
	if e.sumSecs == 0 {
		return 0
	}
	return float64(e.sumDelta) / float64(e.sumSecs)
}

// addReading folds a change over secs seconds (> 0) into the rate (a fall
// is below 0: see restarted), a moving average whose weights fade as
// e^(-age/rateHorizon): both sums fade by the time that passed, and the
// new span counts for its faded weight (spanWeight), with the change
// spread over it. So the rate is
// about the change per second over the last rateHorizon seconds,
// however irregular the readings: a reading a few milliseconds after the
// last one moves it little, and one after a long quiet spell (keyspace
// events read a key only when it changes) weighs that spell as
// rateHorizon seconds without an increase, not its whole length, so a
// counter that starts again climbs as fast after a minute of quiet as
// after ten seconds, and as fast as when it is polled.
func (e *entry) addReading(delta, secs float64) {
	fade, weight := math.Exp(-secs/rateHorizon), spanWeight(secs)
	e.sumDelta = toFloat32(float64(e.sumDelta)*fade + delta*weight/secs)
	e.sumSecs = toFloat32(float64(e.sumSecs)*fade + weight)
}

// spanWeight is the weight of the last secs seconds in the rate: the
// integral of e^(-t/rateHorizon) over them, about secs for a short span
// and rateHorizon for a long one.
func spanWeight(secs float64) float64 { return -rateHorizon * math.Expm1(-secs/rateHorizon) }

// toFloat32 is f as a float32 sum of the rate can hold it: a float
// counter's jump past 3.4e38 is held at the largest float32, not as an
// infinity that, faded to nothing, would read as NaN for ever.
func toFloat32(f float64) float32 {
	return float32(max(-math.MaxFloat32, min(math.MaxFloat32, f)))
}

// restarted reports whether a reading of pttl at at, whose value is below
// e's, can be a new key made since e was read (its window restarted and
// counted up from 0) rather than e lowered in place (DECR, SET KEEPTTL, a
// limiter giving a hit back), which keeps its deadline or has none.
//
// A key with a TTL can be made again once it expires: its deadline has
// passed, or a later one was set (deleted and made again). One made
// again without a TTL (INCR and no EXPIRE, the bug) is told by the old
// deadline alone, within deadlineJitter, as the two deadlines are
// estimates. A key without a TTL never expires: only a TTL set with the
// fall says it was made again; without one it was lowered.
func (e *entry) restarted(pttl, at int64) bool {
	if e.pttl < 0 {
		return pttl >= 0
	}
	was := e.deadline()
	if pttl < 0 {
		return at >= was-int64(deadlineJitter)
	}
	now := deadline(pttl, at)
	return now > was+int64(deadlineJitter) || at >= was && now > was
}

// quietStep is how far QuietUntil must move on to count: the rates of
// quiet keys fall a step a second, so an order by rate changes at most
// once a second, not at every frame.
const quietStep = time.Second

// fadedOut is how long after its last reading a quiet key's rate is 0: by
// then (twelve rateHorizons) it has fallen to a millionth of what it was,
// and a million keys that once had a rate do not each need placing again,
// every second, for as long as they stay quiet.
const fadedOut = 12 * rateHorizon * float64(time.Second)

// QuietUntil tells the Store that no key changed up to now unless it was
// read since: true of a feed of keyspace events, which reads a key as soon
// as it changes, and not of polling, which reads every key in turn
// whether it changed or not. The rate of a key last read before now then
// counts the time since as time without an increase, as a reading now
// would: a counter nobody increments any more falls to 0/s (from 10/s, in
// 27 s; from 1,000/s, in 50, as when polled), rather than showing its last
// rate until something reads it again, and is 0 from fadedOut on. It only
// moves forward, in steps of quietStep; the rates are as of the last step
// until the next.
//
// Sorted by rate, the order follows at the next read: only keys whose
// rate is not 0 can fade, and the order keeps those at its two ends, so
// those ends are sorted again, and the keys whose rates reached 0 placed
// among the others by name (see order.refade).
func (s *Store) QuietUntil(now time.Time) {
	if len(s.entries) == 0 {
		return
	}
	quiet := int64(now.Sub(s.epoch))
	if quiet-s.quiet < int64(quietStep) {
		return
	}
	s.quiet = quiet
	if s.sortKey == SortRate {
		s.order.refade = true
	}
}

// rateOf is e's rate as of its last reading or, when later, as of the
// moment the Store knows it has not changed since (see QuietUntil): the
// time in between folded in as a reading with no increase, as addReading
// would fold it; 0 from fadedOut on.
func (s *Store) rateOf(e *entry) float64 {
	return rateAsOf(e, s.quiet)
}

// rateAsOf is rateOf with the Store quiet up to quiet.
func rateAsOf(e *entry, quiet int64) float64 {
	r := e.rate()
	if r == 0 || quiet == 0 || quiet <= e.at {
		return r
	}
	secs := float64(quiet - e.at)
	if secs >= fadedOut {
		return 0
	}
	secs /= float64(time.Second)
	faded := float64(e.sumSecs) * math.Exp(-secs/rateHorizon)
	return r * faded / (faded + spanWeight(secs))
}

// hasRateAsOf reports whether rateAsOf(e, quiet) is not 0, without
// working it out.
func (e *entry) hasRateAsOf(quiet int64) bool {
	return e.rate() != 0 && (quiet == 0 || quiet <= e.at || float64(quiet-e.at) < fadedOut)
}

// rateChanged reports whether e's rate is worked out from other
// readings than before's, and either is not 0.
func (e *entry) rateChanged(before *entry) bool {
	return (e.rate() != 0 || before.rate() != 0) &&
		(e.at != before.at || e.sumDelta != before.sumDelta || e.sumSecs != before.sumSecs)
}
