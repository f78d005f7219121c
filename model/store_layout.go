package model

import "math"

// What the Store keeps of a reading's layout. An entry holds the layout and
// Read's reason (a byte each, in what was padding), and, when the value is
// none, the time a gcra or timestamp key holds, in the bits the value would
// use. The rest of a Reading is rebuilt from those when a Counter is asked
// for: the clue from the reason, a window's name parts from the key, what
// remains from the value and the rule. Only a hash's field and a hash
// bucket's refill time need more room, kept aside for hash keys alone.

// note is what the Store keeps of a hash's reading beyond its entry.
type note struct {
	field string
	at    int64 // a bucket's refill time, ns since 1970; 0: none
}

// read is Read and Evaluate of o under the rule at index rule, as of o.At.
func (s *Store) read(o *Observation, rule int16) (Reading, Status) {
	eff := rowRule(s.rules.Effective(int(rule)), o.Field)
	r := Read(o, eff, o.At)
	st := Evaluate(&r, o.PTTL, eff, o.At)
	return r, s.pair(o, &r, st, rule)
}

// numOf is what an entry's num holds for r: its value's bits, or when it
// has none, the time it holds (0: none).
func numOf(r *Reading) uint64 {
	switch r.Value.Kind {
	case KindInt:
		return uint64(r.Value.Int)
	case KindFloat:
		return math.Float64bits(r.Value.Float)
	case KindNone:
	}
	if r.At.IsZero() {
		return 0
	}
	return uint64(r.At.UnixNano())
}

// note keeps what r says that the entry of key cannot hold, and drops what
// an earlier reading left. A hash field's row (field, its row's field)
// needs no note of the field it is read from: its ID says it.
func (s *Store) note(key string, r *Reading, field string) {
	n := note{field: r.Field}
	if field != "" && n.field == field {
		n.field = ""
	}
	if r.Value.Kind != KindNone && !r.At.IsZero() {
		n.at = r.At.UnixNano()
	}
	if n == (note{}) {
		if len(s.notes) != 0 {
			delete(s.notes, key)
		}
		return
	}
	if s.notes == nil {
		s.notes = map[string]note{}
	}
	s.notes[key] = n
}

// setReading fills in what Read said of e's last reading, as
// Counter.setReading does from the Reading itself.
func (s *Store) setReading(c *Counter, e *entry) {
	rule := s.rules.Effective(int(e.rule))
	r := Reading{Layout: e.layout, Value: c.Value, why: e.why}
	if e.kind == KindNone && e.num != 0 {
		r.At = unixUTC(int64(e.num))
	}
	if c.FieldRow {
		r.Field = c.Field
	}
	if n, ok := s.notes[e.key]; ok {
		if n.field != "" {
			r.Field = n.field
		}
		if n.at != 0 {
			r.At = unixUTC(n.at)
		}
	}
	if spec(e.layout).NamedWindow {
		if e.why == whyRuleNoPart {
			r.Window = WindowName{Identity: c.Key}
		} else {
			r.Window, _, _ = parseWindowName(c.Key, rule.Window, c.ObservedAt, spec(rule.Layout).NamedWindow)
		}
	}
	r.Clue = e.why.text(c.Type)
	r.Guess = e.why.guess() && rule.Layout == LayoutAuto
	r.Remaining, r.HasRemaining = remaining(r.Layout, r.Value, r.At, rule, c.ObservedAt)
	c.setReading(&r)
}
