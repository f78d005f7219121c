package model

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

// names is the rows as "server/key", in order.
func serverRows(rows []Counter) []string {
	out := make([]string, len(rows))
	for i, c := range rows {
		out[i] = c.Server + "/" + c.Name()
	}
	return out
}

// A key of one name on two servers is two rows, each with its server's
// value; a removal on one server leaves the other's row; the filter's
// server: term keeps one server's rows.
func TestStoreRowsOfSeveralServers(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Server: "eu-1", Observed: []Observation{read("rl:1", "5", 60000, 0), read("rl:2", "7", 60000, 0)}})
	s.Apply(Batch{Server: "us-1", Observed: []Observation{read("rl:1", "100", PTTLNoExpiry, 0)}})

	if got, want := serverRows(s.Rows(0, 10)), []string{"eu-1/rl:1", "us-1/rl:1", "eu-1/rl:2"}; !slices.Equal(got, want) {
		t.Fatalf("rows = %q, want %q", got, want)
	}
	us := mustGet(t, s, RowOf("us-1", "rl:1", ""))
	if us.Key != "rl:1" || us.Value.Int != 100 || us.Status != StatusStuck {
		t.Errorf("us-1's rl:1 = %q %v %s, want rl:1 100 stuck", us.Key, us.Value.Int, us.Status)
	}
	if eu := mustGet(t, s, RowOf("eu-1", "rl:1", "")); eu.Value.Int != 5 || eu.Status != StatusOK || eu.ID() != RowOf("eu-1", "rl:1", "") {
		t.Errorf("eu-1's rl:1 = %v %s (ID %q), want 5 ok", eu.Value.Int, eu.Status, eu.ID())
	}

	s.SetFilter("server:US-1")
	for s.Filtering() {
		s.Visible()
	}
	if got, want := serverRows(s.Rows(0, 10)), []string{"us-1/rl:1"}; !slices.Equal(got, want) {
		t.Errorf("server:US-1 keeps %q, want %q", got, want)
	}
	s.SetFilter("server:eu-1 rl:2")
	for s.Filtering() {
		s.Visible()
	}
	if got, want := serverRows(s.Rows(0, 10)), []string{"eu-1/rl:2"}; !slices.Equal(got, want) {
		t.Errorf("server:eu-1 rl:2 keeps %q, want %q", got, want)
	}
	s.SetFilter("")

	s.Apply(Batch{Server: "us-1", Removed: []string{"rl:1"}})
	if got, want := serverRows(s.Rows(0, 10)), []string{"eu-1/rl:1", "eu-1/rl:2"}; !slices.Equal(got, want) {
		t.Errorf("after us-1 removed rl:1, rows = %q, want %q", got, want)
	}
}

// A hash read field by field on two servers is rows of each server's
// fields, and a repair's answer for one field (Observation.Server set)
// lands on its server's row.
func TestStoreFieldRowsOfSeveralServers(t *testing.T) {
	s := NewStore(testRules())
	hash := func(v string) Observation {
		return Observation{Key: "rl:h", Type: "hash", PTTL: PTTLNoExpiry, FieldTTLs: true, At: t0, Len: 1,
			Fields: []Field{{Name: "f", Value: v, PTTL: 30000}}}
	}
	s.Apply(Batch{Server: "a", Observed: []Observation{hash("3")}})
	s.Apply(Batch{Server: "b", Observed: []Observation{hash("4")}})
	if got, want := serverRows(s.Rows(0, 10)), []string{"a/rl:h › f", "b/rl:h › f"}; !slices.Equal(got, want) {
		t.Fatalf("rows = %q, want %q", got, want)
	}
	o := Observation{Key: "rl:h", Field: "f", Server: "b", Type: "hash", PTTL: 20000, At: t0.Add(time.Second), Len: 1,
		Fields: []Field{{Name: "f", Value: "9", PTTL: 20000}}}
	s.Apply(Batch{Observed: []Observation{o}})
	if c := mustGet(t, s, RowOf("b", "rl:h", "f")); c.Value.Int != 9 || !c.FieldRow || c.Field != "f" || c.Server != "b" {
		t.Errorf("b's field row = %+v, want 9", c)
	}
	if c := mustGet(t, s, RowOf("a", "rl:h", "f")); c.Value.Int != 3 {
		t.Errorf("a's field row = %v, want 3 untouched", c.Value.Int)
	}
}

// Rows of several servers sort as one list: by value or TTL each row
// finds its place by its own reading, whatever its server, so that the
// highest count or the nearest expiry anywhere comes first; a key's rows
// on two servers come together only under the sort by name (or a tie),
// by server name, runs of digits by their number (eu-9 before eu-10);
// reversed, each order is its mirror image.
func TestSortRowsOfSeveralServers(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Server: "eu-10", Observed: []Observation{read("rl:1", "90", 50_000, 0), read("rl:2", "7", 40_000, 0)}})
	s.Apply(Batch{Server: "eu-9", Observed: []Observation{read("rl:1", "5", 10_000, 0), read("rl:3", "7", PTTLNoExpiry, 0)}})
	s.Apply(Batch{Server: "us", Observed: []Observation{read("rl:1", "60", 30_000, 0)}})
	for _, tc := range []struct {
		sort    SortKey
		reverse bool
		want    []string
	}{
		{SortKeyName, false, []string{"eu-9/rl:1", "eu-10/rl:1", "us/rl:1", "eu-10/rl:2", "eu-9/rl:3"}},
		{SortKeyName, true, []string{"eu-9/rl:3", "eu-10/rl:2", "us/rl:1", "eu-10/rl:1", "eu-9/rl:1"}},
		{SortValue, false, []string{"eu-10/rl:1", "us/rl:1", "eu-10/rl:2", "eu-9/rl:3", "eu-9/rl:1"}}, // a tie (7) by name
		{SortValue, true, []string{"eu-9/rl:1", "eu-9/rl:3", "eu-10/rl:2", "us/rl:1", "eu-10/rl:1"}},
		{SortTTL, false, []string{"eu-9/rl:3", "eu-9/rl:1", "us/rl:1", "eu-10/rl:2", "eu-10/rl:1"}}, // no expiry first
		{SortTTL, true, []string{"eu-10/rl:1", "eu-10/rl:2", "us/rl:1", "eu-9/rl:1", "eu-9/rl:3"}},
	} {
		t.Run(fmt.Sprintf("%s reversed %v", tc.sort, tc.reverse), func(t *testing.T) {
			s.SetSort(tc.sort)
			s.SetReverse(tc.reverse)
			for s.Sorting() {
				s.Visible()
			}
			if got := serverRows(s.Rows(0, 10)); !slices.Equal(got, tc.want) {
				t.Errorf("rows = %q, want %q", got, tc.want)
			}
		})
	}
}
