package model

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// valueCase is a key the second round of limiters writes, the rule it is
// read under, and what Read and Evaluate make of it at now.
type valueCase struct {
	name   string
	o      Observation
	rule   Rule
	layout Layout
	value  string    // the Value as FormatFloat writes it; "" for none
	status Status    // Evaluate's, with the observation's PTTL
	at     time.Time // Reading.At
	field  string
	clue   string // part of the clue
	window *WindowName
}

// noTTL is o without an expiry.
func noTTL(o Observation) Observation {
	o.PTTL = PTTLNoExpiry
	return o
}

// valueCases are issue 29's shapes: window starts in ns and µs.
func valueCases() []valueCase {
	limit := Rule{Pattern: "*", Limit: 10, ExpectTTL: true}
	minute := Rule{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}
	return []valueCase{
		// 1. Window starts in ns and µs in the name, as s and ms are.
		{name: "ns start after a hash tag (mennanov/limiters), this minute",
			o: str("{fw}1796160060000000000", "3"), rule: limit, layout: LayoutWindow, value: "3", status: StatusOK, clue: "epoch",
			window: &WindowName{Identity: "{fw}", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "ns start after @, the rule's window",
			o: str("key@1796160060000000000", "9"), rule: minute, layout: LayoutWindow, value: "9", status: StatusWarn,
			window: &WindowName{Identity: "key", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "µs start, this minute",
			o: str("rl:u42:1796160060000000", "4"), rule: limit, layout: LayoutWindow, value: "4", status: StatusOK,
			window: &WindowName{Identity: "rl:u42", Part: "1796160060000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "a past ns window without a TTL leaks",
			o: noTTL(str("{fw}1796150000000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusLeak,
			window: &WindowName{Identity: "{fw}", Part: "1796150000000000000", Start: secs(1796150000), Length: time.Minute, Past: true}},
		{name: "a past µs window without a TTL leaks",
			o: noTTL(str("rl:u42|1796150000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusLeak,
			window: &WindowName{Identity: "rl:u42", Part: "1796150000000000", Start: secs(1796150000), Length: time.Minute, Past: true}},
		{name: "the current ns window without a TTL is no-expiry",
			o: noTTL(str("{fw}1796160060000000000", "4")), rule: minute, layout: LayoutWindow, value: "4", status: StatusNoExpiry,
			window: &WindowName{Identity: "{fw}", Part: "1796160060000000000", Start: secs(1796160060), Length: time.Minute}},
		{name: "19 digits that are no time near now (a snowflake id) are part of the name",
			o: str("order:1996160060000000000", "4"), rule: limit, layout: LayoutCounter, value: "4", status: StatusOK},
		{name: "digits right after a name, no hash tag, are part of it",
			o: str("fw1796160060000000000", "4"), rule: limit, layout: LayoutCounter, value: "4", status: StatusOK},
	}
}

func TestReadValues(t *testing.T) {
	for _, tt := range valueCases() {
		t.Run(tt.name, func(t *testing.T) {
			r := Read(&tt.o, tt.rule, now)
			if r.Layout != tt.layout {
				t.Fatalf("layout %v, want %v (clue: %s)", r.Layout, tt.layout, r.Clue)
			}
			value := ""
			if n, ok := r.Value.Number(); ok {
				value = strconv.FormatFloat(n, 'g', -1, 64)
			}
			if value != tt.value {
				t.Errorf("value %q, want %q", value, tt.value)
			}
			if st := Evaluate(&r, tt.o.PTTL, tt.rule, now); st != tt.status {
				t.Errorf("status %v, want %v", st, tt.status)
			}
			if d := r.At.Sub(tt.at); r.At.IsZero() != tt.at.IsZero() || d > time.Microsecond || d < -time.Microsecond {
				t.Errorf("at %v, want %v", r.At, tt.at)
			}
			if r.Field != tt.field {
				t.Errorf("field %q, want %q", r.Field, tt.field)
			}
			if !strings.Contains(r.Clue, tt.clue) {
				t.Errorf("clue %q does not say %q", r.Clue, tt.clue)
			}
			var w WindowName
			if tt.window != nil {
				w = *tt.window
			}
			if r.Window != w {
				t.Errorf("window %+v\nwant %+v", r.Window, w)
			}
			// The Store holds what NewCounter reads, the stored string
			// included (a decoded count is not its text).
			rules := &Rules{Fallback: tt.rule}
			s := NewStore(rules)
			s.Apply(Batch{Observed: []Observation{tt.o}})
			got, want := mustGet(t, s, tt.o.Key), NewCounter(&tt.o, rules)
			if got.Raw != tt.o.Raw {
				t.Errorf("the Store's raw %q, stored %q", got.Raw, tt.o.Raw)
			}
			got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
			if got != want {
				t.Errorf("\nNewCounter %+v\nthe Store  %+v", want, got)
			}
		})
	}
}

// The window keys of an identity ending in a hash tag are siblings, as
// those after a separator are.
func TestWindowSiblingsAfterAHashTag(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
	keys := []string{"{fw}1796160060000000000", "{fw}1796160000000000000", "{fw}x:1796160000000000000", "{fwx}1796160000000000000"}
	var obs []Observation
	for _, k := range keys {
		obs = append(obs, str(k, "1"))
	}
	s.Apply(Batch{Observed: obs})
	c := mustGet(t, s, keys[0])
	got, more := s.WindowSiblings(c.Key, c.Window.Identity, 5)
	if len(got) != 1 || more != 0 || got[0].Key != keys[1] {
		t.Errorf("siblings of %s (identity %q): %v and %d more; want only %s", c.Key, c.Window.Identity, got, more, keys[1])
	}
}
