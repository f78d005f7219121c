package ui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// quotaModel is a dashboard on a real Redis with hash-field TTLs (Redis
// 7.4 and later) holding quota:u1 = {api: 17, its own TTL of a minute;
// login: 3, none}, a limiter's hash a field an endpoint whose login field
// lost its TTL, read as the feed reads it, under a rule of limit 10.
func quotaModel(t *testing.T) (*Model, *redistest.Server) {
	t.Helper()
	s, c := realWriter(t)
	s.RequireFieldTTL(t)
	s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
	rules := &model.Rules{List: []model.Rule{{Pattern: "quota:*", Limit: 10, Window: time.Minute, ExpectTTL: true}}}
	return fetchedModel(t, c, rules, 140, 30, "quota:u1"), s
}

// The table shows a row a field, named "key › field", each with its own
// value and status: the field left without a TTL is the no-expiry one. Its
// detail says that this one field keeps the whole hash alive, and that e
// gives that field its TTL, not the hash.
func TestFieldRowsOnScreen(t *testing.T) {
	m, _ := quotaModel(t)
	screen := plain(m)
	if line := lineWith(t, screen, "quota:u1 › login"); !strings.Contains(line, "no-expiry") || !strings.Contains(line, " 3 ") {
		t.Errorf("login's row %q; want its value 3 and no-expiry", line)
	}
	if !strings.Contains(screen, "2 rows") {
		t.Errorf("the header does not count the hash's 2 rows:\n%s", screen)
	}
	if line := lineWith(t, screen, "quota:u1 › api"); !strings.Contains(line, "over") || !strings.Contains(line, "17") {
		t.Errorf("api's row %q; want its value 17, over its limit of 10", line)
	}
	m = selectKey(t, m, model.RowID("quota:u1", "login"))
	m, _ = press(m, "<enter>")
	detail := strings.Join(strings.Fields(plain(m)), " ")
	for _, want := range []string{
		"quota:u1 › login",
		model.FieldKeepsHashAlive,
		"Press e to send HPEXPIRE quota:u1 60000 NX FIELDS 1 login (if the field still holds a number without a TTL).",
	} {
		if !strings.Contains(detail, strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the detail does not say %q:\n%s", want, plain(m))
		}
	}
}

// +, - and i on a field's row add to that field, and say the command they
// send, as Redis runs it; its siblings are left as they are.
func TestIncrementsOnAFieldRow(t *testing.T) {
	m, s := quotaModel(t)
	m = selectKey(t, m, model.RowID("quota:u1", "login"))
	mon := s.Monitor(t)
	for _, tc := range []struct {
		keys, shown string
		want        string // login afterwards
	}{
		{"+", "HINCRBY quota:u1 login 1", "4"},
		{"-", "HINCRBY quota:u1 login -1", "3"},
		{"i5<enter>", "HINCRBY quota:u1 login 5", "8"},
	} {
		t.Run(tc.keys, func(t *testing.T) {
			m2, cmd := press(m, tc.keys)
			if st := statusText(m2); st != tc.shown+" …" {
				t.Errorf("while sent: status %q, want %q", st, tc.shown+" …")
			}
			m = run(t, m2, cmd)
			sent, _ := mon.Next(t, "HINCRBY")
			if got := strings.Join(sent, " "); got != tc.shown {
				t.Errorf("Redis ran %q; the screen said %q", got, tc.shown)
			}
			if got := s.Do(t, "HGET", "quota:u1", "login"); got != tc.want {
				t.Errorf("login = %v, want %s (status %q)", got, tc.want, statusText(m))
			}
			if got := s.Do(t, "HGET", "quota:u1", "api"); got != "17" {
				t.Errorf("api = %v: the increment of login's row reached another field", got)
			}
			if c, ok := m.store.Get(model.RowID("quota:u1", "login")); !ok || c.Value.Int == 0 || !c.FieldRow || c.Field != "login" {
				t.Errorf("login's row after the write: %+v, %v", c, ok)
			}
			if !strings.HasPrefix(statusText(m), tc.shown+" -> "+tc.want) {
				t.Errorf("status %q, want it to say %s -> %s", statusText(m), tc.shown, tc.want)
			}
		})
	}
}

// e on a field's row sends the field's repair, HPEXPIRE NX on that field
// alone, as the screen says it, and the hash gets no TTL of its own: the
// row's TTL is the field's. E counts a field's row as a hash field and
// sends it the same repair.
func TestRepairsOnAFieldRow(t *testing.T) {
	m, s := quotaModel(t)
	m = selectKey(t, m, model.RowID("quota:u1", "login"))
	mon := s.Monitor(t)
	m, cmd := press(m, "e")
	shown := "HPEXPIRE quota:u1 60000 NX FIELDS 1 login"
	if st := statusText(m); !strings.HasPrefix(st, shown+" (if the field still holds a number without a TTL)") {
		t.Fatalf("status %q, want the field's repair", st)
	}
	m = run(t, m, cmd)
	if sent, _ := mon.Next(t, "HPEXPIRE"); strings.Join(sent, " ") != shown {
		t.Errorf("Redis ran %q; the screen said %q", sent, shown)
	}
	if p := s.Do(t, "PTTL", "quota:u1").(int64); p != model.PTTLNoExpiry {
		t.Errorf("the hash got a TTL of %dms: every field would go with it", p)
	}
	c, _ := m.store.Get(model.RowID("quota:u1", "login"))
	if c.PTTL <= 0 || c.PTTL > 60000 || c.Status == model.StatusNoExpiry {
		t.Errorf("login's row after the repair: PTTL %d, %s; want its new TTL", c.PTTL, c.Status)
	}
	if !strings.Contains(statusText(m), "-> set") {
		t.Errorf("status %q", statusText(m))
	}

	// E: the repair of every problem in view, a field's among them.
	s.Do(t, "HPERSIST", "quota:u1", "FIELDS", "1", "login")
	s.Do(t, "HSET", "quota:u1", "search", "2")
	refresh(t, m, "quota:u1")
	m, _ = press(m, "E")
	dialog := dialogText(m)
	for _, want := range []string{"2 hash fields, window 1m00s:", "HPEXPIRE KEY 60000 NX FIELDS 1 FIELD"} {
		if !strings.Contains(dialog, want) {
			t.Errorf("dialog %q, want it to say %q", dialog, want)
		}
	}
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	var fields []string
	for range 2 {
		sent, _ := mon.Next(t, "HPEXPIRE")
		fields = append(fields, sent[len(sent)-1])
	}
	if slices.Sort(fields); !slices.Equal(fields, []string{"login", "search"}) {
		t.Errorf("E repaired the fields %q, want login and search", fields)
	}
	if st := statusText(m); !strings.HasPrefix(st, "repaired 2 of 2") {
		t.Errorf("status %q", st)
	}
}

// refresh reads key again into m's Store, as the feed would.
func refresh(t *testing.T, m *Model, key string) {
	t.Helper()
	obs, err := m.writer.(*redisclient.Client).Fetch(context.Background(), []string{key})
	if err != nil {
		t.Fatal(err)
	}
	m.store.Apply(model.Batch{Observed: obs})
}

// d on a field's row deletes the key, and the dialog says so: the whole
// hash goes, not the field alone; every row of it leaves.
func TestDeleteFromAFieldRow(t *testing.T) {
	m, s := quotaModel(t)
	m = selectKey(t, m, model.RowID("quota:u1", "login"))
	m, _ = press(m, "d")
	if d := dialogText(m); !strings.Contains(d, "DEL quota:u1 The whole hash goes, every field in it and not login alone") {
		t.Fatalf("dialog %q", d)
	}
	m, cmd := press(m, "y")
	m = run(t, m, cmd)
	if n := s.Do(t, "EXISTS", "quota:u1").(int64); n != 0 {
		t.Errorf("quota:u1 still exists")
	}
	if m.store.Len() != 0 {
		t.Errorf("%d rows left after the hash was deleted", m.store.Len())
	}
}
