package model

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// quota is quota:u1 as a limiter that keeps a field a client's endpoint
// leaves it, read at now+at: each field given as name, value, PTTL (-1: no
// TTL of its own), with its TTLs read (FieldTTLs) as redisclient reads a
// hash one of whose fields has a TTL.
func quota(at time.Duration, fields ...any) Observation {
	o := hash("quota:u1")
	o.PTTL, o.At = PTTLNoExpiry, now.Add(at)
	for i := 0; i+2 < len(fields); i += 3 {
		f := Field{Name: fields[i].(string), Value: fields[i+1].(string), PTTL: int64(fields[i+2].(int))}
		o.Fields = append(o.Fields, f)
		o.FieldTTLs = o.FieldTTLs || f.PTTL >= 0
	}
	o.Len = int64(len(o.Fields))
	return o
}

var (
	apiID   = RowID("quota:u1", "api")
	loginID = RowID("quota:u1", "login")
)

// The Store holds a hash whose fields carry TTLs as a row a numeric field,
// each what NewCounter makes of the field's row: its name, its own TTL,
// the rule's limit and its own status; a field with no TTL beside fields
// that have one is no-expiry, whatever the rule expects.
func TestStoreHoldsARowAField(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute}}
	o := quota(0, "api", "17", 60000, "login", "3", -1, "note", "vip", 60000)
	s := NewStore(rules)
	if n := s.Apply(Batch{Observed: []Observation{o}}); n != 2 {
		t.Errorf("Apply counted %d changed rows, want 2", n)
	}
	rows := s.Rows(0, 10)
	if got := keys(rows); !slices.Equal(got, []string{apiID, loginID}) {
		t.Fatalf("rows %q, want api's and login's (note holds no number)", got)
	}
	if _, ok := s.Get("quota:u1"); ok || s.Len() != 2 {
		t.Errorf("the hash has a row of its own beside its fields' (%d rows)", s.Len())
	}
	for i, r := range Rows(&o) {
		want := NewCounter(&r, rules)
		got := mustGet(t, s, want.ID())
		if got != want || rows[i] != want {
			t.Errorf("%s:\nNewCounter %+v\nGet        %+v\nRows       %+v", want.Name(), want, got, rows[i])
		}
	}
	for _, tc := range []struct {
		id, name string
		status   Status
		pttl     int64
	}{
		{apiID, "quota:u1 › api", StatusOver, 60000},
		{loginID, "quota:u1 › login", StatusNoExpiry, PTTLNoExpiry},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := mustGet(t, s, tc.id)
			if c.Name() != tc.name || c.Key != "quota:u1" || !c.FieldRow || c.Status != tc.status || c.PTTL != tc.pttl || c.Value.Int == 0 {
				t.Errorf("%q: key %q field %q (row %v), %v, PTTL %d, value %v; want %s, PTTL %d",
					c.Name(), c.Key, c.Field, c.FieldRow, c.Status, c.PTTL, c.Value, tc.status, tc.pttl)
			}
			if !strings.Contains(c.Clue, "fields with TTLs of their own") || c.Guess {
				t.Errorf("%q read by %q (a guess: %v); want the field's TTL named", c.Name(), c.Clue, c.Guess)
			}
			if got := s.IndexOf(tc.id); got < 0 {
				t.Errorf("IndexOf(%q) = %d", tc.id, got)
			}
		})
	}
}

// A hash's rows follow its readings: a field gone from one (expired,
// HDEL) leaves at once, a new one arrives, the hash gone (its last field
// expired, DEL) or removed takes every row, a hash whose last field TTL
// went (HPERSIST, HSET) is one whole key's row again, and one that gains a
// field TTL is read field by field again. A reading older than the rows
// held changes nothing.
func TestStoreFollowsAHashsFields(t *testing.T) {
	whole := quota(0, "api", "17", -1, "login", "3", -1) // no field TTL: read whole
	for _, tc := range []struct {
		name    string
		then    Batch
		want    []string // the row IDs after
		changed int
	}{
		{"the same", Batch{Observed: []Observation{quota(time.Second, "api", "17", 59000, "login", "3", -1)}}, []string{apiID, loginID}, 0},
		{"a field expired", Batch{Observed: []Observation{quota(time.Second, "login", "3", -1, "x", "1", 5000)}}, []string{loginID, RowID("quota:u1", "x")}, 2},
		{"a field deleted", Batch{Observed: []Observation{quota(time.Second, "api", "17", 59000)}}, []string{apiID}, 1},
		{"the hash gone", Batch{Observed: []Observation{{Key: "quota:u1", Type: "none", PTTL: PTTLMissing, At: now.Add(time.Second)}}}, nil, 2},
		{"the hash removed", Batch{Removed: []string{"quota:u1"}}, nil, 2},
		{"no field TTL left", Batch{Observed: []Observation{func() Observation { o := whole; o.At = now.Add(time.Second); return o }()}}, []string{"quota:u1"}, 3},
		{"an older reading", Batch{Observed: []Observation{quota(-time.Second, "api", "1", 60000)}}, []string{apiID, loginID}, 0},
		{"an older whole reading", Batch{Observed: []Observation{func() Observation { o := whole; o.At = now.Add(-time.Second); return o }()}}, []string{apiID, loginID}, 0},
		{"a field's repair", Batch{Observed: []Observation{{Key: "quota:u1", Type: "hash", Field: "login", Fields: []Field{{Name: "login", Value: "3", PTTL: 60000}}, Len: 1, PTTL: 60000, At: now.Add(time.Second)}}},
			[]string{apiID, loginID}, 1},
		{"a field's repair finds it gone", Batch{Observed: []Observation{{Key: "quota:u1", Type: "hash", Field: "login", PTTL: PTTLMissing, At: now.Add(time.Second)}}}, []string{apiID}, 1},
		{"a field's repair finds the key gone", Batch{Observed: []Observation{{Key: "quota:u1", Type: "none", Field: "login", PTTL: PTTLMissing, At: now.Add(time.Second)}}}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
			s.Apply(Batch{Observed: []Observation{quota(0, "api", "17", 60000, "login", "3", -1)}})
			if n := s.Apply(tc.then); n != tc.changed {
				t.Errorf("Apply counted %d changed rows, want %d", n, tc.changed)
			}
			if got := keys(s.Rows(0, 10)); !slices.Equal(got, tc.want) {
				t.Errorf("rows %q, want %q", got, tc.want)
			}
			if s.Len() != len(tc.want) || s.Counts().Total != len(tc.want) {
				t.Errorf("Len %d, Total %d; want %d", s.Len(), s.Counts().Total, len(tc.want))
			}
			// And back: a reading with field TTLs makes the rows again.
			s.Apply(Batch{Observed: []Observation{quota(2*time.Second, "api", "18", 58000, "login", "4", -1)}})
			if got := keys(s.Rows(0, 10)); !slices.Equal(got, []string{apiID, loginID}) {
				t.Errorf("read with field TTLs again: rows %q", got)
			}
			if c := mustGet(t, s, loginID); c.Value.Int != 4 || c.Status != StatusNoExpiry {
				t.Errorf("login read again: %v %v", c.Value, c.Status)
			}
		})
	}
}

// A hash whose fields carry TTLs but hold no number is one whole key's
// row, as a snapshot reads it: not a counter, but a key the patterns
// watch.
func TestStoreHashOfTextFieldsIsWhole(t *testing.T) {
	s := NewStore(&Rules{})
	o := quota(0, "name", "bob", 60000)
	s.Apply(Batch{Observed: []Observation{o}})
	if got := keys(s.Rows(0, 10)); !slices.Equal(got, []string{"quota:u1"}) {
		t.Fatalf("rows %q, want the hash whole", got)
	}
	if got := Expand([]Observation{o}); len(got) != 1 || got[0].Field != "" {
		t.Errorf("Expand gave %d rows, want the hash whole, as the Store shows it", len(got))
	}
}

// The filter looks for its terms in a row's name, "key › field", and the
// sorts place each field's row as they place a key's: by name, a hash's
// rows together in their fields' order, before quota:u10.
func TestFieldRowsFilterAndSort(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}})
	u10 := quota(0, "api", "2", 60000)
	u10.Key = "quota:u10"
	s.Apply(Batch{Observed: []Observation{quota(0, "login", "3", -1, "api", "17", 60000), u10, str("quota:u2", "1")}})
	s.SetSort(SortKeyName)
	if got := keys(s.Rows(0, 10)); !slices.Equal(got, []string{apiID, loginID, "quota:u2", RowID("quota:u10", "api")}) {
		t.Errorf("by name: %q", got)
	}
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"login", []string{loginID}},
		{"u1 login", []string{loginID}},
		{"u1 ›", []string{apiID, loginID, RowID("quota:u10", "api")}},
		{"API", []string{apiID, RowID("quota:u10", "api")}},
		{"is:no-expiry", []string{loginID}},
		{"is:over api", []string{apiID}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			s.SetFilter(tc.query)
			for s.Filtering() {
				s.Visible()
			}
			if got := keys(s.Rows(0, 10)); !slices.Equal(got, tc.want) {
				t.Errorf("filter %q: %q, want %q", tc.query, got, tc.want)
			}
		})
	}
	s.SetFilter("")
	s.SetSort(SortStatus)
	if got := s.Rows(0, 1); len(got) != 1 || got[0].ID() != loginID {
		t.Errorf("by status, first %q; want login's row, the worst", keys(got))
	}
}

// A field's TTL pushed back on every hit while it grows (HINCRBY, then
// HEXPIRE without NX) makes that field's row extending, as a key's would,
// and leaves its sibling alone; its history, trend and rate are its own.
func TestFieldRowExtends(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 1000, ExpectTTL: true}})
	const step = 200 * time.Millisecond
	for i := range 350 { // 70 s of hits, each pushing api's deadline back to 10 s away
		s.Apply(Batch{Observed: []Observation{quota(time.Duration(i)*step, "api", strconv.Itoa(i+1), 10_000, "login", "3", 30_000)}})
	}
	api, login := mustGet(t, s, apiID), mustGet(t, s, loginID)
	if api.Status != StatusExtending || login.Status != StatusOK {
		t.Errorf("api %s, login %s; want api extending, login ok", api.Status, login.Status)
	}
	if api.Rate < 4 || login.Rate != 0 {
		t.Errorf("rates: api %.1f/s, login %.1f/s; want about 5/s and 0", api.Rate, login.Rate)
	}
	if h := s.History(apiID); len(h) == 0 || h[len(h)-1].Value != 349 {
		t.Errorf("api's history %v; want its own readings", h)
	}
	if h := s.History(loginID); h != nil {
		t.Errorf("login's history %v; want none: it never changed", h)
	}
	if _, ok := s.Trend(apiID, api.ObservedAt); !ok {
		t.Error("api's row has no trend")
	}
	if p, ok := s.Pushback(apiID); !ok || !p.Proven {
		t.Errorf("api's pushback %+v, %v; want proven", p, ok)
	}
}

// E repairs what EachProblem names: a field's row by its ID.
func TestEachProblemNamesAFieldsRow(t *testing.T) {
	s := NewStore(&Rules{Fallback: Rule{Limit: 10, Window: time.Minute}})
	s.Apply(Batch{Observed: []Observation{quota(0, "api", "17", 60000, "login", "3", -1)}})
	var got []string
	s.EachProblem(func(id string, _ Rule) { got = append(got, id) })
	if !slices.Equal(got, []string{loginID}) {
		t.Errorf("EachProblem named %q; want login's row", got)
	}
}

// A field's row says how many fields of its hash the last reading left
// unread (Observation.NotShown), as NewCounter does, for the detail's
// NotShownText; a reading that read them all, or the hash gone, leaves
// none said.
func TestStoreFieldRowsNotShown(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute}}
	s := NewStore(rules)
	for i, tc := range []struct {
		notShown int64
		gone     bool
		want     int64
	}{
		{notShown: 120, want: 120},
		{notShown: 80, want: 80},
		{notShown: 0, want: 0},
		{notShown: 50, want: 50},
		{gone: true},
		{notShown: 0, want: 0}, // back, read whole
	} {
		o := quota(time.Duration(i)*time.Second, "api", "17", 60000, "login", "3", -1)
		o.NotShown, o.NotShownNoTTL = tc.notShown, -1
		if tc.gone {
			o = Observation{Key: "quota:u1", Type: "none", PTTL: PTTLMissing, At: o.At}
		}
		s.Apply(Batch{Observed: []Observation{o}})
		if tc.gone {
			if _, ok := s.Get(loginID); ok || len(s.fields.notShown) != 0 {
				t.Errorf("reading %d: the hash gone, yet its rows or fields not shown stay: %v", i, s.fields.notShown)
			}
			continue
		}
		for _, id := range []string{apiID, loginID} {
			if got := mustGet(t, s, id).NotShown; got != tc.want {
				t.Errorf("reading %d: %q NotShown %d, want %d", i, id, got, tc.want)
			}
		}
		if r := Rows(&o); NewCounter(&r[0], rules).NotShown != tc.want {
			t.Errorf("reading %d: NewCounter's NotShown %d, want %d", i, NewCounter(&r[0], rules).NotShown, tc.want)
		}
	}
}

// The same hash read on two servers keeps two counts of fields not shown,
// one a server, as it keeps two rows a field: a reading on one server that
// read all its fields leaves the other server's count as it was.
func TestStoreFieldRowsNotShownPerServer(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute}}
	s := NewStore(rules)
	for i, tc := range []struct {
		server   string
		notShown int64
		want     map[string]int64 // server -> the login row's NotShown
	}{
		{server: "a", notShown: 120, want: map[string]int64{"a": 120}},
		{server: "b", notShown: 7, want: map[string]int64{"a": 120, "b": 7}},
		{server: "a", notShown: 0, want: map[string]int64{"a": 0, "b": 7}},
		{server: "b", notShown: 9, want: map[string]int64{"a": 0, "b": 9}},
	} {
		o := quota(time.Duration(i)*time.Second, "api", "17", 60000, "login", "3", -1)
		o.NotShown, o.NotShownNoTTL = tc.notShown, -1
		s.Apply(Batch{Server: tc.server, Observed: []Observation{o}})
		for server, want := range tc.want {
			c := mustGet(t, s, RowOf(server, "quota:u1", "login"))
			if c.Server != server || c.NotShown != want {
				t.Errorf("reading %d: the row on %q is on %q with NotShown %d, want %d", i, server, c.Server, c.NotShown, want)
			}
		}
	}
}
