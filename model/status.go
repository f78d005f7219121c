package model

// Status is the one verdict countertop gives a counter. Lower is more severe.
type Status uint8

const (
	StatusStuck      Status = iota // no TTL, TTL expected, value >= limit: blocked forever
	StatusNoExpiry                 // no TTL where the rule expects one
	StatusOver                     // value >= limit
	StatusWarn                     // value >= WarnAt * limit
	StatusOK                       // a number with a TTL, under the limit
	StatusNotCounter               // another type, or a value that is not a number
	NumStatuses
)

var statusNames = [NumStatuses]string{"stuck", "no-expiry", "over", "warn", "ok", "not-counter"}

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

// Problem reports whether the status is one `check` fails on.
func (s Status) Problem() bool { return s == StatusStuck || s == StatusNoExpiry }

// Evaluate gives the status of a value with the given type and PTTL under rule.
// Non-strings and non-numbers are StatusNotCounter; otherwise the first of
// stuck, no-expiry, over, warn, ok that holds, as ../DESIGN.md's table says.
// A negative pttl means no expiry. A rule without a limit (Limit <= 0)
// makes no counter stuck, over or warn.
func Evaluate(typ string, v Value, pttl int64, rule Rule) Status {
	n, isNum := v.Number()
	if typ != "string" || !isNum {
		return StatusNotCounter
	}
	atLimit := rule.Limit > 0 && n >= rule.Limit
	if pttl < 0 && rule.ExpectTTL {
		if atLimit {
			return StatusStuck
		}
		return StatusNoExpiry
	}
	if atLimit {
		return StatusOver
	}
	warnAt := rule.WarnAt
	if warnAt <= 0 {
		warnAt = DefaultWarnAt
	}
	if rule.Limit > 0 && n >= warnAt*rule.Limit {
		return StatusWarn
	}
	return StatusOK
}
