package model

import (
	"math"
	"time"
)

// Bounds on what redisclient reads of one key, so that no key, however
// large, costs more than a few commands of constant size.
const (
	// MaxRaw is the bytes of a string read (GETRANGE 0 MaxRaw-1): no
	// counter is near as long, and a library's opaque state is shown by
	// its size, so only the start of a longer one is worth the transfer.
	MaxRaw        = 64 << 10
	MaxHashFields = 16   // a hash this small is read whole (HGETALL); a larger one, only KnownHashFields (HMGET)
	MaxListScan   = 1000 // a list this short is read whole (LRANGE) to count its hits inside the window
)

// Reading is what Read makes of an Observation: the layout, the number the
// limit applies to, and how it was found.
type Reading struct {
	Layout Layout
	// Value is the number compared with the limit: hits for a counter,
	// window, log or hash field, tokens left for a bucket; KindNone for
	// gcra, timestamp, opaque and other.
	Value        Value
	Remaining    float64 // the hits the limit still allows (see HasRemaining)
	HasRemaining bool    // false when no limit is known, or the key holds no count
	// At is the time the key holds: when a GCRA key frees (its theoretical
	// arrival time), a timestamp's time, a hash bucket's refill time when
	// it has one, when a block flag's TTL ends; zero otherwise. It is in UTC.
	At     time.Time
	Window WindowName // a window's name parts (LayoutWindow only)
	Clue   string     // how it was read and why this layout, for the detail screen
	Guess  bool       // the layout was inferred (no rule said it) and could be wrong
	Field  string     // the hash field read (a counter's, or a bucket's tokens), or a JSON or msgpack value's
	why    why
}

// RawCut reports whether the reading is of a string cut at MaxRaw, so that
// its text is only the start of the value.
func (r *Reading) RawCut() bool { return r.why.cut() }

// Read interprets o under rule at now: its layout (rule.Layout, or detected
// from the type, field names, the value's magnitude and the key's shape),
// its value and what the layout adds. rule.Window is the key's window: pass
// Rules.Effective's rule, which has the fallback's window when the rule has
// none. now is normally o.At; Read itself never reads the clock.
//
// Detection never hides a count: an integer string below 1e9 is always a
// counter or a window, its value shown and compared with the limit (but
// for a name ending in ".tokens", a two-string bucket's tokens left, shown
// too, and a 1 under a name that says block, a block flag); only numbers
// as large as times near now are read as times.
func Read(o *Observation, rule Rule, now time.Time) Reading {
	var r Reading
	switch o.Type {
	case "string":
		r = readString(o, rule, now)
	case "hash":
		r = readHash(o, rule, now)
	case "zset", "list":
		r = readLog(o, rule, now)
	default:
		r = Reading{Layout: LayoutOther, why: whyOtherType}
		if rule.Layout == LayoutOpaque {
			r = Reading{Layout: LayoutOpaque, why: whyRule + why(LayoutOpaque)}
		} else if rule.Layout != LayoutAuto {
			r.why = whyRuleMismatch + why(rule.Layout)
		}
	}
	r.Clue = r.why.text(o.Type)
	r.Guess = r.why.guess() && rule.Layout == LayoutAuto
	r.Remaining, r.HasRemaining = remaining(r.Layout, r.Value, r.At, rule, now)
	return r
}

// remaining is Reading.Remaining, as l's spec computes it.
func remaining(l Layout, v Value, at time.Time, rule Rule, now time.Time) (float64, bool) {
	return spec(l).remaining(v, at, rule, now)
}

// remainingCount is a count's remaining: whole hits left under the limit.
func remainingCount(v Value, _ time.Time, rule Rule, _ time.Time) (float64, bool) {
	n, ok := v.Number()
	if !ok || !finiteLimit(rule) {
		return 0, false
	}
	return math.Floor(max(rule.Limit-n, 0)), true
}

// remainingBucket is a bucket's remaining: its whole tokens.
func remainingBucket(v Value, _ time.Time, _ Rule, _ time.Time) (float64, bool) {
	n, ok := v.Number()
	if !ok {
		return 0, false
	}
	return math.Floor(max(n, 0)), true
}

// remainingGCRA is a GCRA key's remaining: the hits a burst of the limit's
// size allows before it refuses, as redis_rate computes them.
func remainingGCRA(_ Value, at time.Time, rule Rule, now time.Time) (float64, bool) {
	if at.IsZero() || !finiteLimit(rule) || rule.Window <= 0 {
		return 0, false
	}
	emission := float64(rule.Window) / rule.Limit
	ahead := max(float64(at.Sub(now)), 0)
	return math.Floor(min(max((float64(rule.Window)-ahead)/emission, 0), rule.Limit)), true
}

// remainingBlock is a block flag's remaining: none, while it exists.
func remainingBlock(Value, time.Time, Rule, time.Time) (float64, bool) { return 0, true }

// remainingNone is the remaining of a layout that holds no count.
func remainingNone(Value, time.Time, Rule, time.Time) (float64, bool) { return 0, false }

// finiteLimit reports whether rule has a limit that hits can be counted
// against: positive and finite.
func finiteLimit(rule Rule) bool { return rule.Limit > 0 && rule.Limit <= math.MaxFloat64 }

// gcraRefusing reports whether a GCRA key whose theoretical arrival time is
// tat refuses a hit at now: when tat is further ahead than the window less
// one emission interval (redis_rate's rule, with a burst of the limit).
func gcraRefusing(tat time.Time, rule Rule, now time.Time) bool {
	if tat.IsZero() || !finiteLimit(rule) || rule.Window <= 0 {
		return false
	}
	emission := float64(rule.Window) / rule.Limit
	return float64(tat.Sub(now)) > float64(rule.Window)-emission
}
