package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Shape is what a key held when a repair chose it. The repair gives the key
// an expiry only if it still holds that when the repair arrives: another
// client may have turned the counter into a hash, or deleted it, meanwhile.
// Redis checks Type and Number; Layout only names the shape for people.
type Shape struct {
	Layout Layout
	Type   string // as TYPE reported it: "string", "hash", "zset", "list", ...
	Number bool   // a string that held a number, as ParseValue reads one, must still hold one
}

// ShapeCounter is a counter: a string that holds a number.
var ShapeCounter = Shape{Layout: LayoutCounter, Type: "string", Number: true}

// ShapeOf returns the shape c was read as, and false when c holds nothing
// countertop reads as rate-limit state, which no repair gives an expiry.
func ShapeOf(c *Counter) (Shape, bool) {
	if !spec(c.Layout).State || c.Type == "" || c.Type == "none" {
		return Shape{}, false
	}
	number := c.Type == "string" && !c.RawCut && ParseValue(c.Raw).Kind != KindNone
	if c.FieldRow {
		number = c.Value.Kind != KindNone
	}
	return Shape{Layout: c.Layout, Type: c.Type, Number: number}, true
}

// Noun returns what the repair checks the key still is, in a sentence: "a
// counter", "a number" (a GCRA time, a timestamp), "a string", "a hash".
func (s Shape) Noun() string {
	switch {
	case s.Number:
		return spec(s.Layout).NumberNoun
	case s.Type == "zset":
		return "a sorted set"
	}
	return "a " + Printable(s.Type)
}

// Expiry is the repair of one key that `repair`, `e` and `E` send: in one
// atomic step, the key is checked to still hold Shape and to have no TTL,
// and only then is Command run. Everything that shows a repair shows
// String, and redisclient sends Command, so the two cannot disagree.
type Expiry struct {
	Key    string
	Window time.Duration // at least 1ms; sent in whole milliseconds
	Shape  Shape         // what the key was read as
	// Field, when set, is the hash field that gets the TTL, not the key:
	// the repair of a field's row (Counter.FieldRow). Shape is then the
	// hash's, Number saying the field must still hold a number.
	Field string
	// Server is where the key is, among several servers (Counter.Server):
	// the writer of that server sends it. "" with one.
	Server string
}

// RepairOf returns the repair of c's row with window: its key's, or its
// field's for a field's row. False as ShapeOf says.
func RepairOf(c *Counter, window time.Duration) (Expiry, bool) {
	shape, ok := ShapeOf(c)
	e := Expiry{Key: c.Key, Window: window, Shape: shape, Server: c.Server}
	if c.FieldRow {
		e.Field = c.Field
	}
	return e, ok
}

// Command returns the command the repair runs once its checks pass, as it
// is sent: PEXPIRE key ms NX, or HPEXPIRE key ms NX FIELDS 1 field for a
// field. NX adds nothing to the checks, but keeps a TTL safe from a repair
// even where the checks could not run.
func (e Expiry) Command() []string {
	ms := strconv.FormatInt(e.Window.Milliseconds(), 10)
	if e.Field != "" {
		return []string{"HPEXPIRE", e.Key, ms, "NX", "FIELDS", "1", e.Field}
	}
	return []string{"PEXPIRE", e.Key, ms, "NX"}
}

// String returns the repair as the screen shows it, the key escaped:
// "PEXPIRE ratelimit:x 60000 NX (if still a counter without a TTL)", or
// "HPEXPIRE quota:u1 60000 NX FIELDS 1 login (if the field still holds a
// number without a TTL)".
func (e Expiry) String() string {
	args := e.Command()
	args[1] = Printable(args[1])
	if e.Field != "" {
		args[6] = Printable(args[6])
		return strings.Join(args, " ") + " (if the field still holds a number without a TTL)"
	}
	return strings.Join(args, " ") + " (if still " + e.Shape.Noun() + " without a TTL)"
}

// ExpiryOutcome is what a repair of one key did.
type ExpiryOutcome uint8

const (
	ExpiryFailed    ExpiryOutcome = iota // Redis could not be asked, or refused: see the error
	ExpirySet                            // the key was as read and had no TTL: it has one now
	ExpiryChanged                        // the key holds something else than it was read as: left alone
	ExpiryGone                           // the key no longer exists
	ExpiryHadTTL                         // the key has a TTL already (given meanwhile): left as it is
	ExpiryFieldTTLs                      // a hash whose fields carry TTLs (or may: too many to check at once): a key's TTL would end them all, left alone
	numExpiryOutcomes
)

// RepairTally counts what a repair of many keys did, each key once.
type RepairTally struct {
	outcomes [numExpiryOutcomes]int
	Skipped  int // not sent: no window is known for them
	// Untouched were not sent: the repair stopped at a refusal that every
	// key meets alike (a read-only replica), rather than meet it once a key.
	Untouched int
}

// Add counts one key's outcome.
func (t *RepairTally) Add(o ExpiryOutcome) { t.outcomes[o]++ }

// Count returns how many keys had outcome o.
func (t RepairTally) Count(o ExpiryOutcome) int { return t.outcomes[o] }

// Total returns how many keys were counted, skipped ones included.
func (t RepairTally) Total() int {
	n := t.Skipped + t.Untouched
	for _, c := range t.outcomes {
		n += c
	}
	return n
}

// String returns the summary a user reads once a repair is done, which
// accounts for every key: "repaired 3 of 7; 2 had changed since they were
// read, 1 no longer existed, 1 had a TTL already, 0 failed", then how many
// were not touched when the repair stopped early. What none of the keys
// did is left out, except failures.
func (t RepairTally) String() string {
	parts := []string{}
	if n := t.Count(ExpiryChanged); n == 1 {
		parts = append(parts, "1 had changed since it was read")
	} else if n > 1 {
		parts = append(parts, fmt.Sprintf("%d had changed since they were read", n))
	}
	if n := t.Count(ExpiryGone); n > 0 {
		parts = append(parts, fmt.Sprintf("%d no longer existed", n))
	}
	if n := t.Count(ExpiryHadTTL); n > 0 {
		parts = append(parts, fmt.Sprintf("%d had a TTL already", n))
	}
	if n := t.Count(ExpiryFieldTTLs); n > 0 {
		parts = append(parts, fmt.Sprintf("%d had fields with TTLs of their own", n))
	}
	if t.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped (no window known)", t.Skipped))
	}
	parts = append(parts, fmt.Sprintf("%d failed", t.Count(ExpiryFailed)))
	if t.Untouched > 0 {
		parts = append(parts, fmt.Sprintf("%d not touched", t.Untouched))
	}
	return fmt.Sprintf("repaired %d of %d; %s", t.Count(ExpirySet), t.Total(), strings.Join(parts, ", "))
}

// FieldTTLsLeftAlone is why a repair left a hash alone (ExpiryFieldTTLs),
// for the dashboard and repair alike.
const FieldTTLsLeftAlone = "its fields carry TTLs of their own, or could not all be checked for one " +
	"(too many fields, or a user who may not run HPTTL), and a TTL on the key would end every field at once"

// Holding returns what o's key holds, for a sentence: "a number", "text"
// (a string that is no number), "a hash", "a sorted set".
func Holding(o Observation) string {
	switch {
	case o.Type == "string" && ParseValue(o.Raw).Kind != KindNone:
		return "a number"
	case o.Type == "string":
		return "text"
	case o.Type == "zset":
		return "a sorted set"
	}
	return "a " + Printable(o.Type)
}
