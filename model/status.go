package model

import "time"

// Status is the one verdict countertop gives a counter. Lower is more severe.
type Status uint8

const (
	StatusStuck      Status = iota // no TTL, TTL expected, at the limit: blocked forever
	StatusExtending                // a counter that grew past a whole window, its TTL pushed back: its window never closes
	StatusNoExpiry                 // no TTL where the rule expects one
	StatusLeak                     // a past window's key (or a past time) with no TTL: never read again, never freed
	StatusOver                     // at the limit: value >= limit, an empty bucket, a GCRA key refusing hits
	StatusWarn                     // near the limit: value >= WarnAt * limit, a bucket nearly empty
	StatusOK                       // a number with a TTL, under the limit
	StatusNotCounter               // another type, or a value that is not a number
	NumStatuses
)

var statusNames = [NumStatuses]string{"stuck", "extending", "no-expiry", "leak", "over", "warn", "ok", "not-counter"}

// String is the status as the CLI, JSON and the dashboard spell it.
func (s Status) String() string {
	if s < NumStatuses {
		return statusNames[s]
	}
	return "unknown"
}

// ParseStatus is the inverse of String.
func ParseStatus(name string) (Status, bool) {
	for i, n := range statusNames {
		if n == name {
			return Status(i), true
		}
	}
	return 0, false
}

// Problem reports whether the status is one `check` fails on: a key that
// never expires where it should, or whose window never closes.
func (s Status) Problem() bool {
	return s == StatusStuck || s == StatusExtending || s == StatusNoExpiry || s == StatusLeak
}

// Repairable reports whether a repair (an expiry set where there is none)
// fixes a problem status: not extending, whose key has a TTL, and whose
// fix is in the client that keeps pushing it back.
func (s Status) Repairable() bool { return s.Problem() && s != StatusExtending }

// Evaluate gives the status of r, a reading with the given PTTL (negative:
// no expiry), under rule (rule.Window being the key's, as Read takes it)
// at now: the first of ARCHITECTURE.md's statuses that holds for r's layout.
//
//   - counter, window, log: with no TTL where one is expected, a past
//     window is leak, a value at the limit stuck, any other no-expiry;
//     with one, over, warn or ok by the value.
//   - bucket: the value is the tokens left, so at the limit means empty
//     (less than one token: the next hit is refused): stuck without a TTL,
//     over with one; warn when WarnAt of the limit (its capacity) or more
//     is used.
//   - gcra: over while it refuses hits (see gcraRefusing), never from the
//     size of its number; no-expiry without a TTL.
//   - timestamp: without a TTL, leak once its time has passed, no-expiry
//     before; opaque: no-expiry without a TTL; both ok otherwise.
//   - block: stuck without a TTL (where one is expected), over with one:
//     its client is refused while it exists.
//   - other, and a counting layout without a number: not-counter.
//
// A rule with ExpectTTL false makes no key no-expiry, leak or stuck; one
// without a limit (Limit <= 0) makes none stuck, over or warn by its value.
func Evaluate(r *Reading, pttl int64, rule Rule, now time.Time) Status {
	lost := pttl < 0 && rule.ExpectTTL
	warnAt := rule.WarnAt
	if warnAt <= 0 {
		warnAt = DefaultWarnAt
	}
	// The reading's parts, not r: r would escape through the func value.
	return spec(r.Layout).status(r.Value, r.At, r.Window.Past, lost, rule, warnAt, now)
}

// statusCount is Evaluate for a count (counter, log) of value v: lost is
// no TTL where the rule expects one; past, a window that has passed.
func statusCount(v Value, _ time.Time, _, lost bool, rule Rule, warnAt float64, _ time.Time) Status {
	n, isNum := v.Number()
	if !isNum {
		return StatusNotCounter
	}
	atLimit := rule.Limit > 0 && n >= rule.Limit
	switch {
	case lost && atLimit:
		return StatusStuck
	case lost:
		return StatusNoExpiry
	case atLimit:
		return StatusOver
	case rule.Limit > 0 && n >= warnAt*rule.Limit:
		return StatusWarn
	}
	return StatusOK
}

// statusWindow is Evaluate for a window counter: a count, but leaked when
// its window has passed.
func statusWindow(v Value, at time.Time, past, lost bool, rule Rule, warnAt float64, now time.Time) Status {
	if _, isNum := v.Number(); isNum && lost && past {
		return StatusLeak
	}
	return statusCount(v, at, past, lost, rule, warnAt, now)
}

// statusBucket is Evaluate for a bucket, whose value is the tokens left.
func statusBucket(v Value, _ time.Time, _, lost bool, rule Rule, warnAt float64, _ time.Time) Status {
	n, isNum := v.Number()
	if !isNum {
		return StatusNotCounter
	}
	empty := n < 1
	switch {
	case lost && empty:
		return StatusStuck
	case lost:
		return StatusNoExpiry
	case empty:
		return StatusOver
	case rule.Limit > 0 && rule.Limit-n >= warnAt*rule.Limit: // as much used as a counter's warn
		return StatusWarn
	}
	return StatusOK
}

// statusGCRA is Evaluate for a GCRA key: over while it refuses hits.
func statusGCRA(_ Value, at time.Time, _, lost bool, rule Rule, _ float64, now time.Time) Status {
	switch {
	case lost:
		return StatusNoExpiry
	case gcraRefusing(at, rule, now):
		return StatusOver
	}
	return StatusOK
}

// statusTimestamp is Evaluate for a time: leaked once it has passed.
func statusTimestamp(_ Value, at time.Time, _, lost bool, _ Rule, _ float64, now time.Time) Status {
	switch {
	case lost && !at.IsZero() && at.Before(now):
		return StatusLeak
	case lost:
		return StatusNoExpiry
	}
	return StatusOK
}

// statusOpaque is Evaluate for opaque state: only its expiry is checked.
func statusOpaque(_ Value, _ time.Time, _, lost bool, _ Rule, _ float64, _ time.Time) Status {
	if lost {
		return StatusNoExpiry
	}
	return StatusOK
}

// statusBlock is Evaluate for a block flag: its client is refused while
// it exists, for good when it has no TTL.
func statusBlock(_ Value, _ time.Time, _, lost bool, _ Rule, _ float64, _ time.Time) Status {
	if lost {
		return StatusStuck
	}
	return StatusOver
}

// statusNone is Evaluate for a key that holds no rate-limit state.
func statusNone(Value, time.Time, bool, bool, Rule, float64, time.Time) Status {
	return StatusNotCounter
}
