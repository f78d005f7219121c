package model

import (
	"math"
	"time"
)

// Counter is what the Store knows about one key.
type Counter struct {
	Key        string
	Server     string    // the server it was read on (Observation.Server); the same key on two servers is two counters
	Type       string    // as TYPE reports it
	Raw        string    // the stored string (strings only)
	Value      Value     // the number compared with the limit (see Reading.Value)
	PTTL       int64     // as last observed: ms left, or PTTLNoExpiry
	ObservedAt time.Time // when PTTL was read (monotonic)
	Rule       int16     // index into Rules.List, -1 for the fallback
	Status     Status
	Rate       float64   // change per second, smoothed; 0 until two readings; see Store.QuietUntil
	KnownUntil time.Time // until when a live feed vouches for the reading (Observation.KnownUntil); zero: while it is live

	// What Read made of the last reading (see Reading).
	Layout       Layout
	Remaining    float64 // hits the limit still allows, as of ObservedAt (see HasRemaining)
	HasRemaining bool
	At           time.Time  // gcra: when it frees; timestamp: its time; bucket: its refill time, when stored
	Window       WindowName // a window's name parts (LayoutWindow only)
	Clue         string     // how it was read and why this layout
	Guess        bool       // the layout was inferred and could be wrong
	Field        string     // the hash field read
	RawCut       bool       // Raw is only the first MaxRaw bytes of the value
	// FieldRow says the row is Field alone, of a hash whose fields carry
	// TTLs of their own (Rows): PTTL is the field's, and its repair gives
	// that field a TTL, never the key.
	FieldRow bool
	// NotShown, for a field's row, is how many fields of its hash were
	// left unread (Observation.NotShown): the detail says so (NotShownText).
	NotShown int64
}

// ID is what tells c's row apart from every other (RowOf): its key, or
// for a field's row its key and field, with its server among several.
func (c *Counter) ID() string {
	if c.FieldRow {
		return RowOf(c.Server, c.Key, c.Field)
	}
	return ServerKey(c.Server, c.Key)
}

// NameID is ID without the server: the same key (or hash field) on two
// servers has one NameID, two IDs.
func (c *Counter) NameID() string {
	if c.FieldRow {
		return RowID(c.Key, c.Field)
	}
	return c.Key
}

// Name is the row's name for people: "key › field" for a field's row.
func (c *Counter) Name() string {
	if c.FieldRow {
		return RowName(c.Key, c.Field)
	}
	return Printable(c.Key)
}

// NewCounter is o as the Store would hold it after this one reading: read
// (Read) under the first rule that matches its key, with its status, both
// as of o.At (Rate stays 0: a rate takes two readings). A snapshot, which
// reads each key once, needs nothing more.
func NewCounter(o *Observation, rules *Rules) Counter {
	c := Counter{Key: o.Key, Server: o.Server, Type: o.Type, PTTL: o.PTTL, ObservedAt: o.At, Rule: rules.matchIndex(o.Key)}
	rule := rowRule(rules.Effective(int(c.Rule)), o.Field)
	c.FieldRow = o.Field != ""
	if c.FieldRow {
		c.NotShown = o.NotShown
	}
	r := Read(o, rule, o.At)
	if o.Type == "string" {
		c.Raw = o.Raw
	}
	c.Value, c.Status = r.Value, Evaluate(&r, c.PTTL, rule, o.At)
	c.setReading(&r)
	return c
}

// rowRule is rule as it applies to the row of a key, or of its field
// when field is not "". A field's row is a counter of its own: its
// siblings have TTLs, so one without is lost even where the rule expects
// none.
func rowRule(rule Rule, field string) Rule {
	if field != "" {
		rule.Field, rule.ExpectTTL = field, true
	}
	return rule
}

// setReading copies what r says beyond the value into c.
func (c *Counter) setReading(r *Reading) {
	c.Layout, c.Remaining, c.HasRemaining = r.Layout, r.Remaining, r.HasRemaining
	c.At, c.Window, c.Clue, c.Guess, c.Field, c.RawCut = r.At, r.Window, r.Clue, r.Guess, r.Field, r.RawCut()
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

// Percent is how near the limit the key is, as a fraction of limit (1.0 =
// at the limit): the value's share of it, or for a bucket, whose value is
// the tokens left, the share used. ok is false when there is no limit or
// the value is not a number.
func (c *Counter) Percent(limit float64) (frac float64, ok bool) {
	return percentOf(c.Layout, c.Value, limit)
}

func percentOf(l Layout, v Value, limit float64) (float64, bool) {
	n, isNum := v.Number()
	if !isNum || limit <= 0 {
		return 0, false
	}
	if spec(l).Drains {
		return (limit - n) / limit, true
	}
	return n / limit, true
}
