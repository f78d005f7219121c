package redisclient_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// fieldsOf is o's fields as name=PTTL, in o's order.
func fieldsOf(o model.Observation) []string {
	var out []string
	for _, f := range o.Fields {
		out = append(out, f.Name+"="+strconv.FormatInt(min(f.PTTL, 1), 10)) // any TTL reads 1
	}
	return out
}

// A rule's field_ttls reads the hashes it matches field by field before
// any field has a TTL, each field a row with no TTL; field = "NAME" beside
// it keeps that field alone. A hash with neither key nor field TTLs and no
// such rule reads as it did.
func TestRuleReadsFieldByField(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	rules := model.Rules{List: []model.Rule{
		{Pattern: "fq:one:*", ExpectTTL: true, FieldTTLs: true, Field: "api"},
		{Pattern: "fq:*", ExpectTTL: true, FieldTTLs: true},
	}, Fallback: model.Rule{ExpectTTL: true}}
	c := connectRules(t, s, rules)
	for _, k := range []string{"fq:u1", "fq:one:u1", "rl:u1"} {
		s.Do(t, "HSET", k, "api", "4", "login", "2", "note", "text")
	}
	obs, err := c.Fetch(context.Background(), []string{"fq:u1", "fq:one:u1", "rl:u1"})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		fieldTTLs bool
		fields    []string
		rows      int
	}{
		{true, []string{"api=-1", "login=-1", "note=-1"}, 2}, // the note is no number: no row
		{true, []string{"api=-1"}, 1},
		{false, []string{"api=-1", "login=-1", "note=-1"}, 1}, // a row for the hash, as before field TTLs
	} {
		o := obs[i]
		if o.FieldTTLs != want.fieldTTLs || !slices.Equal(fieldsOf(o), want.fields) || len(model.Rows(&o)) != want.rows {
			t.Errorf("%s: field by field %v, fields %q, %d rows; want %v, %q, %d", o.Key, o.FieldTTLs, fieldsOf(o), len(model.Rows(&o)), want.fieldTTLs, want.fields, want.rows)
		}
	}
	for _, row := range model.Rows(&obs[0]) {
		if c := model.NewCounter(&row, &rules); c.Status != model.StatusNoExpiry || c.Name() != "fq:u1 › "+row.Field {
			t.Errorf("%s reads %s; want no-expiry: a field without a TTL where the rule expects its own", c.Name(), c.Status)
		}
	}
}

// hsetMany gives key n fields f00000..., each holding its number, in HSETs
// of 1000, and a TTL of ttl ms to each (0: none), in HPEXPIREs of 1000.
func hsetMany(t *testing.T, s *redistest.Server, key string, n int, ttl int64) {
	t.Helper()
	for from := 0; from < n; from += 1000 {
		set := []any{"HSET", key}
		expire := []any{"HPEXPIRE", key, ttl, "FIELDS", min(1000, n-from)}
		for i := from; i < min(from+1000, n); i++ {
			name := fmt.Sprintf("f%05d", i)
			set = append(set, name, i)
			expire = append(expire, name)
		}
		s.Do(t, set...)
		if ttl > 0 {
			s.Do(t, expire...)
		}
	}
}

// A hash too large to read whole whose fields carry TTLs is listed a page
// at a time (HSCAN) up to what a key shows, its fields' TTLs read in
// batches (HPTTL), never read whole (no HGETALL, HKEYS, HVALS); how many
// more fields it holds is said, and check counts those without a TTL, a
// page at a time too.
func TestLargeHashIsListedInPages(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	const n, shown, lost = 20_000, 50, 7
	hsetMany(t, s, "quota:big", n, 600_000)
	for i := range lost {
		s.Do(t, "HSET", "quota:big", fmt.Sprintf("z%d", i), i+1) // the client died before HEXPIRE
	}
	s.Do(t, "HSET", "quota:big", "note", "not a number") // no TTL either, but no counter
	c := connectURL(t, redisclient.Options{URL: s.URL(), MaxFields: shown})
	ctx := context.Background()

	m := s.Monitor(t)
	obs, err := c.Fetch(ctx, []string{"quota:big"})
	if err != nil {
		t.Fatal(err)
	}
	checkBounded(t, s, m, shown)
	o := obs[0]
	if !o.FieldTTLs || len(o.Fields) != shown || o.NotShown != n+lost+1-shown || o.NotShownNoTTL != -1 {
		t.Fatalf("read field by field %v, %d fields, %d not shown (%d without a TTL); want true, %d, %d, unknown",
			o.FieldTTLs, len(o.Fields), o.NotShown, o.NotShownNoTTL, shown, n+lost+1-shown)
	}
	if !slices.IsSortedFunc(o.Fields, func(a, b model.Field) int { return strings.Compare(a.Name, b.Name) }) {
		t.Errorf("the fields shown are not in name order: %q", fieldsOf(o))
	}
	want := int64(lost)
	for _, f := range o.Fields {
		if f.Name[0] == 'z' {
			want-- // shown: a row of its own, not counted beyond
		}
	}
	if err := c.CountNotShown(ctx, &o); err != nil {
		t.Fatal(err)
	}
	checkBounded(t, s, m, 250)
	if o.NotShownNoTTL != want {
		t.Errorf("counted %d fields not shown without a TTL, want %d", o.NotShownNoTTL, want)
	}
	if got := model.NotShownText(o.NotShown, o.NotShownNoTTL); !strings.HasPrefix(got, strconv.FormatInt(o.NotShown, 10)+" more fields not shown, ") {
		t.Errorf("it says %q", got)
	}
}

// checkBounded reads from m what the server ran until the ECHO it sends
// now, and checks that no command read a whole hash, each HSCAN asked for
// page fields, and each HPTTL for at most 250.
func checkBounded(t *testing.T, s *redistest.Server, m *redistest.Monitor, page int) {
	t.Helper()
	s.Do(t, "ECHO", "reads end here")
	scans := 0
	for _, r := range m.Until(t, "ECHO") {
		switch name := strings.ToUpper(r.Args[0]); name {
		case "HGETALL", "HKEYS", "HVALS", "HRANDFIELD", "SORT":
			t.Errorf("a read sent %s %q: the whole hash at once", name, r.Args[1])
		case "HSCAN":
			scans++
			if i := slices.IndexFunc(r.Args, func(a string) bool { return strings.EqualFold(a, "COUNT") }); i < 0 || r.Args[i+1] != strconv.Itoa(page) {
				t.Errorf("HSCAN %q: want COUNT %d", r.Args[1:], page)
			}
		case "HPTTL":
			if n, _ := strconv.Atoi(r.Args[3]); n > 250 {
				t.Errorf("HPTTL of %d fields at once, want at most 250", n)
			}
		}
	}
	if scans == 0 {
		t.Error("the hash was not listed with HSCAN")
	}
}

// A large hash whose fields have no TTL reads as before field TTLs, by the
// field names countertop knows; on a server without HPTTL, after the first
// read that learns it, it is not listed at all.
func TestLargeHashWithoutFieldTTLs(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	hsetMany(t, s, "bucket:big", 30, 0)
	s.Do(t, "HSET", "bucket:big", "tokens", "7")
	ctx := context.Background()
	if _, err := c.Fetch(ctx, []string{"bucket:big"}); err != nil {
		t.Fatal(err)
	}
	m := s.Monitor(t)
	obs, err := c.Fetch(ctx, []string{"bucket:big"})
	if err != nil {
		t.Fatal(err)
	}
	if o := obs[0]; o.FieldTTLs || !slices.Equal(fieldsOf(o), []string{"tokens=0"}) || o.NotShown != 0 {
		t.Errorf("read field by field %v, fields %q, %d not shown; want the known fields, as before field TTLs", o.FieldTTLs, fieldsOf(o), o.NotShown)
	}
	s.Do(t, "ECHO", "reads end here")
	listed := slices.ContainsFunc(m.Until(t, "ECHO"), func(r redistest.Ran) bool { return strings.EqualFold(r.Args[0], "HSCAN") })
	if field := s.Kind(t).FieldTTL; listed != field {
		t.Errorf("on a server with field TTLs %v, the second read listed the hash: %v", field, listed)
	}
}

// A large hash's listing and its count for check go through the budget,
// as every read does: told 100 commands a second, the count of a hash
// listed in about 160 commands keeps to it.
func TestFieldListingHoldsToTheBudget(t *testing.T) {
	t.Parallel()
	const budget = 100
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	hsetMany(t, s, "quota:big", 20_000, 600_000)
	c := connectURL(t, redisclient.Options{URL: s.URL(), MaxCommands: budget, MaxFields: 20})
	ctx := context.Background()
	m := meterOf(t, s)
	obs, err := c.Fetch(ctx, []string{"quota:big"})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CountNotShown(ctx, &obs[0]); err != nil || obs[0].NotShownNoTTL != 0 {
		t.Fatalf("count: %v, %d without a TTL; want 0", err, obs[0].NotShownNoTTL)
	}
	rate, span := m.perSecond()
	withinBudget(t, rate, span, budget)
}
