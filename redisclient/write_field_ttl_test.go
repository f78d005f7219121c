package redisclient_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// fieldTTLRules says the hashes fq:* count per field (field_ttls), the
// others nothing.
var fieldTTLRules = model.Rules{List: []model.Rule{{Pattern: "fq:*", ExpectTTL: true, FieldTTLs: true}}, Fallback: model.Rule{ExpectTTL: true}}

// connectRules connects to s with rules.
func connectRules(t *testing.T, s *redistest.Server, rules model.Rules) *redisclient.Client {
	t.Helper()
	return connectURL(t, redisclient.Options{URL: s.URL(), Rules: &rules})
}

// writesRan is the writes the server ran from when m started, or last
// stopped, to the ECHO it sends now, as people would type them: what an
// increment really sent, whoever's words say otherwise.
func writesRan(t *testing.T, s *redistest.Server, m *redistest.Monitor) []string {
	t.Helper()
	s.Do(t, "ECHO", "writes end here")
	var writes []string
	for _, r := range m.Until(t, "ECHO") {
		switch strings.ToUpper(r.Args[0]) {
		case "HINCRBY", "HINCRBYFLOAT", "HPEXPIRE", "HEXPIRE", "PEXPIRE", "EXPIRE", "HSET", "HPERSIST", "DEL":
			if !r.ByScript {
				t.Errorf("%q was sent on its own, not in the increment's one atomic step", r.Args)
			}
			writes = append(writes, strings.Join(r.Args, " "))
		}
	}
	return writes
}

// fieldPTTL is field's HPTTL as the server reports it.
func fieldPTTL(t *testing.T, s *redistest.Server, key, field string) int64 {
	t.Helper()
	return s.Do(t, "HPTTL", key, "FIELDS", "1", field).([]any)[0].(int64)
}

// hashOfFieldTTLs sets key to the hash api=17, login=3 in which api alone
// has a TTL of its own, of a minute: a hash that counts per field, whose
// login has no TTL yet.
func hashOfFieldTTLs(t *testing.T, s *redistest.Server, key string) {
	t.Helper()
	s.Do(t, "HSET", key, "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", key, "60000", "FIELDS", "1", "api")
}

// An increment of a hash field whose hash counts per field (a field has a
// TTL of its own, or the rule says so) is HINCRBY then HPEXPIRE ... NX of
// that field, in one script; never a key's TTL, which would end every
// field at once. What the result says was sent is what the server ran.
func TestIncrFieldWithItsOwnTTL(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	c := connectRules(t, s, fieldTTLRules)
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		key, field string
		setup      [][]any
		window     time.Duration
		sent       []string // what the server ran
		gave       bool     // the field had no TTL and got one
		fieldTTL   bool     // read as a field with a TTL of its own
		ttl        int64    // the field's TTL afterwards: -1, or about window
	}{
		{name: "a field that lost its TTL gets one", key: "quota:u1", field: "login",
			setup:  [][]any{{"HSET", "quota:u1", "api", "17", "login", "3"}, {"HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api"}},
			window: time.Minute, sent: []string{"HINCRBY quota:u1 login 1", "HPEXPIRE quota:u1 60000 NX FIELDS 1 login"}, gave: true, fieldTTL: true, ttl: 60000},
		{name: "a field with a TTL keeps it", key: "quota:u2", field: "api",
			setup:  [][]any{{"HSET", "quota:u2", "api", "4"}, {"HPEXPIRE", "quota:u2", "30000", "FIELDS", "1", "api"}},
			window: time.Minute, sent: []string{"HINCRBY quota:u2 api 1", "HPEXPIRE quota:u2 60000 NX FIELDS 1 api"}, fieldTTL: true, ttl: 30000},
		{name: "a new field of such a hash", key: "quota:u3", field: "search",
			setup:  [][]any{{"HSET", "quota:u3", "api", "4"}, {"HPEXPIRE", "quota:u3", "60000", "FIELDS", "1", "api"}},
			window: time.Minute, sent: []string{"HINCRBY quota:u3 search 1", "HPEXPIRE quota:u3 60000 NX FIELDS 1 search"}, fieldTTL: true, ttl: 60000},
		{name: "no-expire leaves the field without one", key: "quota:u4", field: "login",
			setup:  [][]any{{"HSET", "quota:u4", "api", "17", "login", "3"}, {"HPEXPIRE", "quota:u4", "60000", "FIELDS", "1", "api"}},
			window: 0, sent: []string{"HINCRBY quota:u4 login 1"}, fieldTTL: true, ttl: -1},
		{name: "the rule says fields count before any has a TTL", key: "fq:u1", field: "api",
			setup:  [][]any{{"HSET", "fq:u1", "api", "1", "login", "2"}},
			window: time.Minute, sent: []string{"HINCRBY fq:u1 api 1", "HPEXPIRE fq:u1 60000 NX FIELDS 1 api"}, gave: true, fieldTTL: true, ttl: 60000},
		{name: "the rule says so of a new hash", key: "fq:u2", field: "api",
			window: time.Minute, sent: []string{"HINCRBY fq:u2 api 1", "HPEXPIRE fq:u2 60000 NX FIELDS 1 api"}, fieldTTL: true, ttl: 60000},
		{name: "a hash that counts as a whole gets the key's TTL", key: "rl:h", field: "hits",
			setup:  [][]any{{"HSET", "rl:h", "hits", "1", "bytes", "900"}},
			window: time.Minute, sent: []string{"HINCRBY rl:h hits 1", "PEXPIRE rl:h 60000"}, gave: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, cmd := range tc.setup {
				s.Do(t, cmd...)
			}
			m := s.Monitor(t)
			one := by(t, "1")
			r, err := c.IncrField(ctx, tc.key, tc.field, one, tc.window)
			if err != nil {
				t.Fatal(err)
			}
			sent := writesRan(t, s, m)
			if !slices.Equal(sent, tc.sent) {
				t.Errorf("the server ran %q, want %q", sent, tc.sent)
			}
			if tc.fieldTTL && r.Sent(one) != strings.Join(tc.sent, ", ") {
				t.Errorf("the increment says it sent %q; the server ran %q", r.Sent(one), sent)
			}
			if r.FieldTTL != tc.fieldTTL || r.GaveTTL != tc.gave {
				t.Errorf("FieldTTL %v, GaveTTL %v; want %v, %v", r.FieldTTL, r.GaveTTL, tc.fieldTTL, tc.gave)
			}
			got := fieldPTTL(t, s, tc.key, tc.field)
			if tc.ttl < 0 && got != -1 || tc.ttl > 0 && (got <= 0 || got > tc.ttl) {
				t.Errorf("the field's TTL is %dms afterwards, want %d or a little less", got, tc.ttl)
			}
			if tc.fieldTTL {
				if p := pttl(t, s, tc.key); p != model.PTTLNoExpiry {
					t.Errorf("the hash got a TTL of %dms: every field would go with it", p)
				}
				if r.FieldPTTL != got && (r.FieldPTTL < got || r.FieldPTTL-got > 5000) {
					t.Errorf("the increment says the field's TTL is %d, the server %d", r.FieldPTTL, got)
				}
				if !r.Observation.FieldTTLs || r.Observation.FieldPTTL(tc.field) == model.PTTLMissing {
					t.Errorf("the hash as read afterwards is not read field by field: %+v", r.Observation)
				}
			}
		})
	}
}

// With no window known, an increment of a field without a TTL of a hash
// that counts per field sends nothing and says the field needs one; one of
// a field with a TTL needs none.
func TestIncrFieldWithItsOwnTTLNeedsAWindow(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.RequireFieldTTL(t)
	ctx := context.Background()
	hashOfFieldTTLs(t, s, "quota:u1")
	m := s.Monitor(t)
	r, err := c.IncrField(ctx, "quota:u1", "login", by(t, "1"), model.WindowUnknown)
	if !errors.Is(err, model.ErrNeedsWindow) || !r.FieldTTL {
		t.Fatalf("IncrField with no window = %+v, %v; want the field's need of a window", r, err)
	}
	checkSentence(t, err, "HINCRBY quota:u1 login 1 was not sent: field login of quota:u1 has no TTL and no window is known to give it one", "")
	if sent := writesRan(t, s, m); len(sent) > 0 {
		t.Errorf("the server ran %q", sent)
	}
	if _, err := c.IncrField(ctx, "quota:u1", "api", by(t, "1"), model.WindowUnknown); err != nil {
		t.Errorf("a field with a TTL needs no window: %v", err)
	}
	if sent := writesRan(t, s, m); !slices.Equal(sent, []string{"HINCRBY quota:u1 api 1"}) {
		t.Errorf("the server ran %q, want the HINCRBY alone", sent)
	}
}

// A user who may not run HPEXPIRE, or HPTTL, where the increment needs
// them, gets one sentence that says which and why, and nothing changes:
// an increment without its field's TTL is the bug itself.
func TestIncrFieldWithItsOwnTTLNoPerm(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	ctx := context.Background()
	for _, tc := range []struct {
		deny, want string
	}{
		{"-hpexpire", "HINCRBY quota:u1 login 1 failed: the Redis user may not do this on " + s.Addr +
			" (NOPERM this user has no permissions to run the 'hpexpire' command on this key, which gives the field its own TTL in the same step) — grant it with ACL SETUSER"},
		{"-hpttl", "(NOPERM this user has no permissions to run the 'hpttl' command on this key, which tells whether the window goes to the field, whose TTL is its own, or to the hash)"},
	} {
		t.Run(tc.deny, func(t *testing.T) {
			s.Do(t, "DEL", "quota:u1")
			hashOfFieldTTLs(t, s, "quota:u1")
			c := connectAs(t, s, "+@all", tc.deny)
			_, err := c.IncrField(ctx, "quota:u1", "login", by(t, "1"), time.Minute)
			checkSentence(t, err, tc.want, "")
			if !redisclient.Refused(err) {
				t.Errorf("Refused(%v) = false, want true", err)
			}
			if v := s.Do(t, "HGET", "quota:u1", "login"); v != "3" || fieldPTTL(t, s, "quota:u1", "login") != -1 || pttl(t, s, "quota:u1") != -1 {
				t.Errorf("login = %v, its TTL %d, the hash's %d: want all untouched", v, fieldPTTL(t, s, "quota:u1", "login"), pttl(t, s, "quota:u1"))
			}
		})
	}
}

// A burst on a field with a TTL of its own gives it its window once, and
// says the field's TTL afterwards, not the hash's.
func TestBurstOnAFieldWithItsOwnTTL(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.RequireFieldTTL(t)
	hashOfFieldTTLs(t, s, "quota:u1")
	r, err := c.Burst(context.Background(), "quota:u1", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 200, Clients: 4, Field: "login"})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Agree() || r.Expired || !r.GaveTTL || r.Sent != 200 {
		t.Errorf("burst: sent %d, expected %v, observed %v, expired %v, gave a TTL %v", r.Sent, r.Expected, r.Observed, r.Expired, r.GaveTTL)
	}
	if ttl := r.After.FieldPTTL("login"); !r.After.FieldTTLs || ttl <= 0 || ttl > 60000 {
		t.Errorf("after the burst login's TTL reads %d (fields read with TTLs: %v)", ttl, r.After.FieldTTLs)
	}
	if p := pttl(t, s, "quota:u1"); p != model.PTTLNoExpiry {
		t.Errorf("the hash got a TTL of %dms", p)
	}
}
