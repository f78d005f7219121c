package model

import (
	"math"
	"time"
)

// LogFalls is when the count of a log read in o (InWindow, as of o.At)
// falls with no write: when its oldest hit inside rule's window
// (InWindowFrom) leaves it; o.At when that hit was not read (the server
// refused the command), as the count may fall at any moment. Keyspace
// events and invalidations tell writes, not time passing, so a live feed
// vouches for a log's count only until then. ok is false when the count
// cannot fall so: no hit is inside the window, the window or the hits'
// times are not known, or the rule reads the key as another layout.
func LogFalls(o *Observation, rule Rule) (falls time.Time, ok bool) {
	if o.Type != "zset" && o.Type != "list" || o.InWindow <= 0 || rule.Window <= 0 ||
		rule.Layout != LayoutAuto && rule.Layout != LayoutLog {
		return time.Time{}, false
	}
	// The newest entry's magnitude gives the unit of every score, as for
	// the window's start (LogWindowStart).
	u, isTime := unitOf(max(o.Newest, o.Oldest))
	if !isTime {
		return time.Time{}, false
	}
	if math.IsNaN(o.InWindowFrom) || o.InWindowFrom == 0 {
		return o.At, true
	}
	ns := o.InWindowFrom * float64(unitScale[u])
	if ns <= 0 || ns >= math.MaxInt64-float64(rule.Window) {
		return time.Time{}, false
	}
	// Entries of the current window are after its start, so a hit leaves
	// after the read, whatever the rounding; counted from o.At, falls
	// keeps its monotonic clock, as TTLs do.
	d := time.Unix(0, int64(ns)).Add(rule.Window).Sub(o.At)
	return o.At.Add(max(d, 0)), true
}

// OldestInWindow is the oldest of a list log's entries (as LRANGE returns
// them) whose time is after start (from LogWindowStart); NaN when none is.
// It is InWindowFrom for a list, as CountInWindow is InWindow.
func OldestInWindow(entries []string, start float64) float64 {
	oldest := math.NaN()
	for _, e := range entries {
		if f := ParseScore(e); f > start && !(f >= oldest) {
			oldest = f
		}
	}
	return oldest
}
