package model

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestExpiryCommandAndText(t *testing.T) {
	for _, tc := range []struct {
		e    Expiry
		args []string
		text string
	}{
		{Expiry{"ratelimit:x", time.Minute, ShapeCounter, "", ""}, []string{"PEXPIRE", "ratelimit:x", "60000", "NX"},
			"PEXPIRE ratelimit:x 60000 NX (if still a counter without a TTL)"},
		{Expiry{"k", 1500 * time.Millisecond, ShapeCounter, "", ""}, []string{"PEXPIRE", "k", "1500", "NX"},
			"PEXPIRE k 1500 NX (if still a counter without a TTL)"},
		// The key is sent as it is and shown escaped.
		{Expiry{"rl:\x1b[2J", time.Second, ShapeCounter, "", ""}, []string{"PEXPIRE", "rl:\x1b[2J", "1000", "NX"},
			`PEXPIRE rl:\e[2J 1000 NX (if still a counter without a TTL)`},
		// A field's repair gives the field its TTL, never the whole hash.
		{Expiry{"quota:u1", time.Minute, Shape{Layout: LayoutCounter, Type: "hash", Number: true}, "log\x1bin", ""},
			[]string{"HPEXPIRE", "quota:u1", "60000", "NX", "FIELDS", "1", "log\x1bin"},
			`HPEXPIRE quota:u1 60000 NX FIELDS 1 log\ein (if the field still holds a number without a TTL)`},
	} {
		t.Run(tc.e.Key, func(t *testing.T) {
			if got := tc.e.Command(); !slices.Equal(got, tc.args) {
				t.Errorf("%+v: Command() = %q, want %q", tc.e, got, tc.args)
			}
			if got := tc.e.String(); got != tc.text {
				t.Errorf("%+v: String() = %q, want %q", tc.e, got, tc.text)
			}
		})
	}
}

func TestShapeOf(t *testing.T) {
	rules := &Rules{List: []Rule{{Pattern: "field:*", Field: "hits", ExpectTTL: true}}, Fallback: Rule{ExpectTTL: true}}
	for _, tc := range []struct {
		o    Observation
		ok   bool
		noun string
	}{
		{Observation{Key: "c", Type: "string", Raw: "7"}, true, "a counter"},
		{Observation{Key: "c", Type: "string", Raw: "2.5"}, true, "a counter"},
		{Observation{Key: "rl:29936001", Type: "string", Raw: "3"}, true, "a counter"},
		{Observation{Key: "c", Type: "string", Raw: "hello"}, false, ""},
		{Observation{Key: "field:a", Type: "hash", Len: 1, Fields: []Field{{Name: "hits", Value: "3"}}}, true, "a hash"},
		{Observation{Key: "log", Type: "zset", Len: 2, Newest: 1.7e9, Oldest: 1.7e9, InWindow: 2}, true, "a sorted set"},
	} {
		t.Run(tc.o.Type+" "+tc.o.Key+" "+tc.o.Raw, func(t *testing.T) {
			o := tc.o
			o.PTTL, o.At = PTTLNoExpiry, time.Now()
			c := NewCounter(&o, rules)
			shape, ok := ShapeOf(&c)
			if ok != tc.ok || ok && (shape.Type != o.Type || shape.Noun() != tc.noun) {
				t.Errorf("ShapeOf(%s %s read as %v) = %+v (%q), %v; want %q, %v", o.Type, o.Key, c.Layout, shape, shape.Noun(), ok, tc.noun, tc.ok)
			}
		})
	}
}

// The summary counts every key once: its parts add up to the total.
func TestRepairTally(t *testing.T) {
	var tally RepairTally
	if got, want := tally.String(), "repaired 0 of 0; 0 failed"; got != want {
		t.Errorf("empty: %q, want %q", got, want)
	}
	for o, n := range map[ExpiryOutcome]int{ExpirySet: 3, ExpiryChanged: 2, ExpiryGone: 1, ExpiryHadTTL: 4, ExpiryFailed: 1} {
		for range n {
			tally.Add(o)
		}
	}
	tally.Skipped = 2
	want := "repaired 3 of 13; 2 had changed since they were read, 1 no longer existed, 4 had a TTL already, 2 skipped (no window known), 1 failed"
	if got := tally.String(); got != want || tally.Total() != 13 {
		t.Errorf("%q (total %d), want %q", got, tally.Total(), want)
	}
	tally.Untouched = 7 // stopped early: counted, and said last
	want = strings.Replace(want, "of 13", "of 20", 1) + ", 7 not touched"
	if got := tally.String(); got != want || tally.Total() != 20 {
		t.Errorf("%q (total %d), want %q", got, tally.Total(), want)
	}
	var one RepairTally
	one.Add(ExpiryChanged)
	if got, want := one.String(), "repaired 0 of 1; 1 had changed since it was read, 0 failed"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestHolding(t *testing.T) {
	for _, tc := range []struct {
		o    Observation
		want string
	}{
		{Observation{Type: "string", Raw: "5"}, "a number"},
		{Observation{Type: "string", Raw: "hello"}, "text"},
		{Observation{Type: "hash"}, "a hash"},
		{Observation{Type: "zset"}, "a sorted set"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := Holding(tc.o); got != tc.want {
				t.Errorf("Holding(%+v) = %q, want %q", tc.o, got, tc.want)
			}
		})
	}
}

// A hash whose fields carry TTLs is one row a numeric field, and the
// repair of a field's row names the field: a key-level PEXPIRE would end
// every field of the hash a window later.
func TestRepairOfFieldRow(t *testing.T) {
	at := time.Now()
	o := Observation{Key: "quota:u1", Type: "hash", PTTL: PTTLNoExpiry, At: at, Len: 3, FieldTTLs: true,
		Fields: []Field{{Name: "api", Value: "17", PTTL: 60000}, {Name: "login", Value: "3", PTTL: PTTLNoExpiry}, {Name: "note", Value: "hi", PTTL: 5}}}
	rows := Rows(&o)
	if len(rows) != 2 {
		t.Fatalf("Rows gave %d rows, want 2 (the numeric fields)", len(rows))
	}
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: false}}
	api, login := NewCounter(&rows[0], rules), NewCounter(&rows[1], rules)
	if api.Name() != "quota:u1 › api" || api.Status != StatusOver || api.PTTL != 60000 {
		t.Errorf("api row: %s %v PTTL %d, want quota:u1 › api over with its own TTL", api.Name(), api.Status, api.PTTL)
	}
	if login.Status != StatusNoExpiry {
		t.Errorf("login row: %v, want no-expiry (its siblings have TTLs)", login.Status)
	}
	e, ok := RepairOf(&login, time.Minute)
	if !ok || !slices.Equal(e.Command(), []string{"HPEXPIRE", "quota:u1", "60000", "NX", "FIELDS", "1", "login"}) {
		t.Errorf("RepairOf(login) = %q, %v; want HPEXPIRE of the field", e.Command(), ok)
	}
	if rows := Rows(&Observation{Key: "k", Type: "hash", Fields: o.Fields}); len(rows) != 1 || rows[0].Field != "" {
		t.Errorf("a hash without field TTLs read as %d rows, want itself", len(rows))
	}
}
