package model

import (
	"math"
	"time"
)

// Counter is what the Store knows about one key.
type Counter struct {
	Key        string
	Type       string // as TYPE reports it
	Raw        string // the stored string (strings only)
	Value      Value
	PTTL       int64     // as last observed: ms left, or PTTLNoExpiry
	ObservedAt time.Time // when PTTL was read (monotonic)
	Rule       int16     // index into Rules.List, -1 for the fallback
	Status     Status
	Rate       float64 // change per second, smoothed; 0 until two readings; see Store.QuietUntil
}

// NewCounter is o as the Store would hold it after this one reading: its
// value parsed, the first rule that matches its key, its status (Rate
// stays 0: a rate takes two readings). A snapshot, which reads each key
// once, needs nothing more.
func NewCounter(o *Observation, rules *Rules) Counter {
	c := Counter{Key: o.Key, Type: o.Type, PTTL: o.PTTL, ObservedAt: o.At, Rule: rules.matchIndex(o.Key)}
	if o.Type == "string" {
		c.Raw, c.Value = o.Raw, ParseValue(o.Raw)
	}
	c.Status = Evaluate(c.Type, c.Value, c.PTTL, rules.At(int(c.Rule)))
	return c
}

// HasTTL reports whether the key had an expiry when last read.
func (c *Counter) HasTTL() bool { return c.PTTL >= 0 }

// Deadline is when the key expires (zero when it has no TTL). A TTL too far
// off for a time.Duration (Redis allows millennia) counts as 292 years.
func (c *Counter) Deadline() time.Time {
	if !c.HasTTL() {
		return time.Time{}
	}
	return c.ObservedAt.Add(PTTLDuration(c.PTTL))
}

// PTTLDuration is a non-negative PTTL as a time.Duration, saturating
// instead of overflowing: Redis allows TTLs of millennia, and a duration
// ends at 292 years.
func PTTLDuration(pttl int64) time.Duration {
	const maxMillis = int64(math.MaxInt64 / time.Millisecond)
	return time.Duration(min(pttl, maxMillis)) * time.Millisecond
}

// TTLAt is the time left at now, counted down from the last reading and never
// negative; ok is false when the key has no TTL.
func (c *Counter) TTLAt(now time.Time) (left time.Duration, ok bool) {
	if !c.HasTTL() {
		return 0, false
	}
	left = c.Deadline().Sub(now)
	if left < 0 {
		left = 0
	}
	return left, true
}

// Expired reports whether the key's deadline has passed at now but no
// reading has said it is gone yet.
func (c *Counter) Expired(now time.Time) bool {
	return c.HasTTL() && !now.Before(c.Deadline())
}

// Percent is the value as a fraction of limit (1.0 = at the limit); ok is
// false when there is no limit or the value is not a number.
func (c *Counter) Percent(limit float64) (frac float64, ok bool) {
	n, isNum := c.Value.Number()
	if !isNum || limit <= 0 {
		return 0, false
	}
	return n / limit, true
}
