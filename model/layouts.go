package model

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Layout is how a key holds its rate-limit state, as its library writes it
// (see ARCHITECTURE.md's Layouts). A Rule's zero Layout, LayoutAuto, asks Read
// to detect it; a Reading's Layout is never LayoutAuto.
//
// Everything the code asks of a layout is its entry in layouts (Spec):
// a layout is a constant here, an entry there, and the rule in Read that
// detects it. Only detection (Read) compares a Layout with a constant.
type Layout uint8

const (
	LayoutAuto      Layout = iota // a rule's default: detect the layout
	LayoutCounter                 // a string holding a count, or a hash field read as one
	LayoutWindow                  // a counter whose name carries its window
	LayoutLog                     // a sorted set or list of hit times
	LayoutBucket                  // a token bucket: tokens left
	LayoutGCRA                    // a theoretical arrival time
	LayoutTimestamp               // an epoch time
	LayoutOpaque                  // binary state
	LayoutBlock                   // a flag that refuses a client while it exists
	LayoutOther                   // nothing countertop reads as rate-limit state
	NumLayouts
)

// LayoutSpec is what the rest of the code asks of a layout. A zero field
// of Words means the layout is spoken of as a count is.
type LayoutSpec struct {
	// Name is the layout as config, JSON, CSV, check and the detail spell
	// it, and a rule's layout = "Name" asks for: once given, never changed.
	Name string
	// Cell is the table's LAYOUT cell: Name, shortened where it is longer
	// than the column (7 cells).
	Cell string
	// Ruled reports whether a rule may impose it (ParseLayout): all but
	// other, which is only what Read says of a key that holds none.
	Ruled bool
	// HashField reports whether a rule's field (a hash's) goes with it:
	// Read reads a hash as it, and FieldReads says what of the field.
	HashField  bool
	FieldReads string // for config's message: "the field's count"
	// Decodes reports whether a rule's json_field goes with it: Read
	// reads a JSON object's or msgpack map's field as its value.
	Decodes bool
	// State reports whether the key holds rate-limit state countertop
	// reads, to which a repair may give an expiry (ShapeOf).
	State bool
	// Shows is what the VALUE cell shows of a reading.
	Shows Shows
	// Drains reports whether the value is what is left (a bucket's
	// tokens), so that less is worse: the share of the limit used is
	// limit - value, a trend keeps a span's lowest, a chart is empty at 0.
	Drains bool
	// WindowTTL reports whether the key's TTL is its window's, set once:
	// one pushed back while it grows for longer than a whole window is
	// extending, one far longer than the window gets a Note. Logs,
	// buckets and GCRA keys move it on every hit by design.
	WindowTTL bool
	// NamedWindow reports whether the key's name carries its window
	// (Reading.Window): a past window's key leaks, its siblings are listed.
	NamedWindow bool
	// Refuses reports whether the key refuses a client while it exists (a
	// block flag): the detail lists the hits keys beside it (BlockHits).
	Refuses bool
	// NumberNoun is what a repair checks that a key read as this layout
	// still is, when it held a number (Shape.Noun): "a counter", "a number".
	NumberNoun string
	// Refusal is why the dashboard's writes (+, -, i: command, such as
	// INCRBY) refuse a key of type typ whose hash field read is field, to
	// follow "Nothing was sent: KEY "; "" when they apply to it.
	Refusal func(typ, field, command string) string
	// Words are what the detail screen and check say of the key.
	Words LayoutWords

	// Evaluate's status of a reading (lost: no TTL where the rule expects
	// one; past: a window that has passed), and Reading.Remaining.
	status    func(v Value, at time.Time, past, lost bool, rule Rule, warnAt float64, now time.Time) Status
	remaining func(v Value, at time.Time, rule Rule, now time.Time) (float64, bool)
}

// Shows is what the VALUE cell shows of a reading of a layout.
type Shows uint8

const (
	ShowsNumber Shows = iota // the value (tokens left when Drains); the type of a key holding no number
	ShowsFreeAt              // when a GCRA key frees (Reading.At)
	ShowsTime                // the time the key holds (Reading.At)
	ShowsSize                // the size of opaque state
)

// LayoutWords are the sentences on a key of a layout that differ from a
// count's; where a field is zero, the detail screen and check say what
// they say of a count, from its value, limit and TTL.
type LayoutWords struct {
	Leak  string                         // the detail's subject for a leak: "A time that has passed, with no TTL"
	Over  func(at, now time.Time) string // the detail on an over status (at: Reading.At)
	OK    string                         // the detail on an ok status
	Stuck string                         // the detail on a stuck status

	CheckLeak     string                    // check's reason for a leak, before the fix
	CheckStuck    func(value string) string // check's reason for stuck, value as check writes it
	CheckNoExpiry func(value string) string // check's reason for no-expiry
}

// layouts is every layout's spec, keyed by its constant so that no name
// can shift to another layout; TestLayoutTable fails on a layout without
// an entry.
var layouts = [NumLayouts]LayoutSpec{
	LayoutAuto: {
		Name: "auto", Cell: "—", Ruled: true, HashField: true, Decodes: true, NumberNoun: "a number",
		Refusal: refuseOther, Words: LayoutWords{CheckNoExpiry: checkNeverFreed},
		status: statusNone, remaining: remainingNone,
	},
	LayoutCounter: {
		Name: "counter", Cell: "counter", Ruled: true, HashField: true, FieldReads: "the field's count", Decodes: true,
		State: true, WindowTTL: true, NumberNoun: "a counter",
		Refusal: refuseCount,
		status:  statusCount, remaining: remainingCount,
	},
	LayoutWindow: {
		Name: "window", Cell: "window", Ruled: true, Decodes: true,
		State: true, WindowTTL: true, NamedWindow: true, NumberNoun: "a counter",
		Refusal: refuseCount,
		status:  statusWindow, remaining: remainingCount,
	},
	LayoutLog: {
		Name: "log", Cell: "log", Ruled: true,
		State: true, NumberNoun: "a number",
		Refusal: refuseLog,
		status:  statusCount, remaining: remainingCount,
	},
	LayoutBucket: {
		Name: "bucket", Cell: "bucket", Ruled: true, HashField: true, FieldReads: "its tokens", Decodes: true,
		State: true, Drains: true, NumberNoun: "a number",
		Refusal: refuseBucket,
		Words: LayoutWords{
			Over: func(time.Time, time.Time) string {
				return "Empty: no tokens left, so requests it limits are refused until it refills."
			},
			CheckStuck: func(value string) string {
				return value + " tokens left and no TTL: empty for good, every hit refused, it will never reset"
			},
			CheckNoExpiry: func(value string) string { return value + " tokens left, no TTL: the key is never freed" },
		},
		status: statusBucket, remaining: remainingBucket,
	},
	LayoutGCRA: {
		Name: "gcra", Cell: "gcra", Ruled: true, HashField: true, FieldReads: "its time",
		State: true, Shows: ShowsFreeAt, NumberNoun: "a number",
		Refusal: refuseFixed("is a GCRA key: its limiter SETs a new arrival time on each hit, and adding to it would be a time far off" + writesCounters),
		Words: LayoutWords{
			Over: func(at, now time.Time) string {
				return fmt.Sprintf("Refusing hits: its arrival time is more than a window ahead; it frees in %s.", FormatDuration(max(0, at.Sub(now))))
			},
			OK:            "A GCRA key letting hits through: it holds when the limiter frees, not a count.",
			CheckNoExpiry: checkNeverFreed,
		},
		status: statusGCRA, remaining: remainingGCRA,
	},
	LayoutTimestamp: {
		Name: "timestamp", Cell: "time", Ruled: true,
		State: true, Shows: ShowsTime, NumberNoun: "a number",
		Refusal: refuseFixed("holds a time: its limiter SETs when the block ends" + writesCounters),
		Words: LayoutWords{
			Leak:          "A time that has passed, with no TTL",
			OK:            "A time a limiter keeps (a block's end, a window's start); only its expiry is checked.",
			CheckLeak:     "a time in the past, no TTL: never read again, never freed, memory that only grows (and never evicted under a volatile-* policy)",
			CheckNoExpiry: checkNeverFreed,
		},
		status: statusTimestamp, remaining: remainingNone,
	},
	LayoutOpaque: {
		Name: "opaque", Cell: "opaque", Ruled: true,
		State: true, Shows: ShowsSize, NumberNoun: "a number",
		Refusal: refuseFixed("holds opaque state: only the library that serialised it can change it" + writesCounters),
		Words: LayoutWords{
			OK:            "State a library serialised; countertop cannot read it, so only its expiry is checked.",
			CheckNoExpiry: checkNeverFreed,
		},
		status: statusOpaque, remaining: remainingNone,
	},
	LayoutBlock: {
		Name: "block", Cell: "block", Ruled: true,
		State: true, Shows: ShowsFreeAt, Refuses: true, NumberNoun: "a number",
		Refusal: refuseFixed("is a block flag: its limiter sets it to refuse a client until it expires, and it counts nothing" + writesCounters),
		Words: LayoutWords{
			Over: func(at, now time.Time) string {
				if at.IsZero() {
					return "Refusing its client: a limiter refuses every request while this flag exists, and its rule expects no TTL, so until someone deletes it."
				}
				return fmt.Sprintf("Refusing its client: a limiter refuses every request while this flag exists, for another %s (its TTL).", FormatDuration(max(0, at.Sub(now))))
			},
			Stuck: "A block flag with no TTL: its client is refused for good, for as long as the key exists.",
			CheckStuck: func(value string) string {
				return "a block flag (" + value + ") with no TTL: its client is refused forever"
			},
		},
		status: statusBlock, remaining: remainingBlock,
	},
	LayoutOther: {
		Name: "other", Cell: "—", NumberNoun: "a number",
		Refusal: refuseOther, Words: LayoutWords{CheckNoExpiry: checkNeverFreed},
		status: statusNone, remaining: remainingNone,
	},
}

// unknownLayout is the spec of a value past the table: read as other.
var unknownLayout = func() LayoutSpec {
	s := layouts[LayoutOther]
	s.Name = "unknown"
	return s
}()

// spec is l's entry, for model's own use without a copy.
func spec(l Layout) *LayoutSpec {
	if l < NumLayouts {
		return &layouts[l]
	}
	return &unknownLayout
}

// Spec returns what the code asks of l: its entry in the table.
func (l Layout) Spec() LayoutSpec { return *spec(l) }

// String is the layout as the config, JSON, CSV and check spell it.
func (l Layout) String() string { return spec(l).Name }

// ParseLayout reads a rule's `layout`: "auto" or one of the layouts a rule
// may impose (every layout but other, which is what Read says of a key
// that holds none).
func ParseLayout(name string) (Layout, error) {
	var names []string
	for l := range NumLayouts {
		if !layouts[l].Ruled {
			continue
		}
		if strings.EqualFold(name, layouts[l].Name) {
			return l, nil
		}
		names = append(names, layouts[l].Name)
	}
	return LayoutAuto, fmt.Errorf("layout %q is not one countertop knows: use %s", name, orList(names))
}

// HashFieldLayouts names the layouts a rule's field may go with, and what
// each reads of the field, for a message: `"counter" (the field's count),
// "bucket" (its tokens) or "gcra" (its time)`.
func HashFieldLayouts() string {
	var names []string
	for _, s := range layouts {
		if s.HashField && s.FieldReads != "" {
			names = append(names, fmt.Sprintf("%q (%s)", s.Name, s.FieldReads))
		}
	}
	return orList(names)
}

// DecodedLayouts names the layouts a rule's json_field may go with, for a
// message: `"counter", "window" or "bucket"`.
func DecodedLayouts() string {
	var names []string
	for _, s := range layouts {
		if s.Decodes && s.State { // not auto
			names = append(names, strconv.Quote(s.Name))
		}
	}
	return orList(names)
}

// orList is "a, b or c".
func orList(items []string) string {
	if len(items) < 2 {
		return strings.Join(items, "")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}
