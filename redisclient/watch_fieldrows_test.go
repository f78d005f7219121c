package redisclient_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// fieldRules: a limiter of 10 hits in 2 s a field of its quota:* hashes,
// each field its own window (HEXPIRE); extending is proven once a field
// has grown with its deadline pushed back for longer than 2 s.
func fieldRules() *model.Rules {
	return &model.Rules{
		List:     []model.Rule{{Pattern: "quota:*", Limit: 10, Window: 2 * time.Second, ExpectTTL: true}},
		Fallback: model.Rule{ExpectTTL: true},
	}
}

// watchFields watches quota:* in mode, as startIn does (no periodic
// re-scan in events and tracking within the test, so that only what they
// follow changes the rows; polling every 50 ms), into a Store with
// fieldRules, and waits for the first full pass.
func watchFields(t *testing.T, s *redistest.Server, mode model.WatchMode) *feed {
	t.Helper()
	o := redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{Patterns: []string{"quota:*"}, Interval: 50 * time.Millisecond},
		Mode:        mode,
		ResyncEvery: time.Hour,
	}
	if mode == model.WatchTracking {
		o.Interval = slowPoll
	}
	return startWatchInto(t, connect(t, s), fieldRules(), o)
}

// inEveryFieldMode runs test in every watch mode, polling included, each on a
// Redis of its own that mode can follow (serverArgs) and that has
// hash-field TTLs.
func inEveryFieldMode(t *testing.T, test func(t *testing.T, s *redistest.Server, mode model.WatchMode)) {
	for _, mode := range append(pushModes(), model.WatchPoll) {
		t.Run(mode.String(), func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, serverArgs(mode)...)
			s.RequireFieldTTL(t)
			test(t, s, mode)
		})
	}
}

// fieldRow is the Store's row of key's field.
func (f *feed) fieldRow(key, field string) (model.Counter, bool) {
	return f.store.Get(model.RowID(key, field))
}

// waitRows waits until key's rows are those of fields, each a field's
// row, and no whole key's row is held for it.
func (f *feed) waitRows(key string, fields ...string) {
	f.t.Helper()
	f.until(fmt.Sprintf("%s's rows %q", key, fields), func() string {
		var rows []string
		for _, c := range f.store.Rows(0, f.store.Len()) {
			if c.Key == key {
				rows = append(rows, c.Name())
			}
		}
		want := make([]string, len(fields))
		for i, field := range fields {
			want[i] = model.RowName(key, field)
		}
		if fmt.Sprint(rows) != fmt.Sprint(want) {
			return fmt.Sprintf("rows %q", rows)
		}
		return ""
	})
}

// fieldChanges are the changes a hash of fields with TTLs goes through,
// from quota:u1 = {api: 17, TTL 60 s; login: 3, no TTL}, each followed by
// the rows it shows once the feed has read it.
var fieldChanges = []change{
	{"a row a field", func(t *testing.T, s *redistest.Server, f *feed) {
		f.waitRows("quota:u1", "api", "login")
		login, _ := f.fieldRow("quota:u1", "login")
		if login.Name() != "quota:u1 › login" || login.Status != model.StatusNoExpiry || login.HasTTL() || login.Value.Int != 3 {
			t.Errorf("%s: %s, value %v, PTTL %d; want no-expiry, 3, no TTL", login.Name(), login.Status, login.Value, login.PTTL)
		}
		if api, _ := f.fieldRow("quota:u1", "api"); api.Status != model.StatusOver || api.PTTL <= 0 || api.PTTL > 60000 {
			t.Errorf("%s: %s, PTTL %d; want over its limit of 10, with the field's TTL", api.Name(), api.Status, api.PTTL)
		}
	}},
	{"a new field", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HSET", "quota:u1", "search", "2")
		s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "search")
		f.waitRows("quota:u1", "api", "login", "search")
		f.waitFor("search's TTL", func() bool { c, _ := f.fieldRow("quota:u1", "search"); return c.PTTL > 0 })
	}},
	{"hincrby", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HINCRBY", "quota:u1", "login", "2")
		f.waitFor("login = 5", func() bool { c, _ := f.fieldRow("quota:u1", "login"); return c.Value.Int == 5 })
	}},
	{"hincrbyfloat", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HINCRBYFLOAT", "quota:u1", "login", "0.5")
		f.waitFor("login = 5.5", func() bool { c, _ := f.fieldRow("quota:u1", "login"); return c.Value.Float == 5.5 })
	}},
	{"hset clears a field's TTL", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HSET", "quota:u1", "search", "4")
		f.waitFor("search = 4, no-expiry", func() bool {
			c, _ := f.fieldRow("quota:u1", "search")
			return c.Value.Int == 4 && !c.HasTTL() && c.Status == model.StatusNoExpiry
		})
	}},
	{"hexpire gives a field its TTL", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HEXPIRE", "quota:u1", "60", "FIELDS", "1", "search")
		f.waitFor("search's TTL", func() bool { c, _ := f.fieldRow("quota:u1", "search"); return c.PTTL > 50000 })
	}},
	{"hpersist", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HPERSIST", "quota:u1", "FIELDS", "1", "search")
		f.waitFor("search without TTL", func() bool { c, ok := f.fieldRow("quota:u1", "search"); return ok && !c.HasTTL() })
	}},
	{"a field that expires leaves", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HPEXPIRE", "quota:u1", "200", "FIELDS", "1", "search")
		f.waitRows("quota:u1", "api", "login")
	}},
	{"hdel", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HDEL", "quota:u1", "login")
		f.waitRows("quota:u1", "api")
	}},
	{"the hash's last field expires", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HPEXPIRE", "quota:u1", "200", "FIELDS", "1", "api")
		f.waitFor("quota:u1 gone", func() bool { return f.store.Len() == 0 })
	}},
	{"del", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HSET", "quota:u2", "api", "1", "login", "1")
		s.Do(t, "HEXPIRE", "quota:u2", "60", "FIELDS", "1", "api")
		f.waitRows("quota:u2", "api", "login")
		s.Do(t, "DEL", "quota:u2")
		f.waitFor("quota:u2 gone", func() bool { return f.store.Len() == 0 })
	}},
	{"the last field TTL goes", func(t *testing.T, s *redistest.Server, f *feed) {
		s.Do(t, "HSET", "quota:u3", "api", "1", "login", "1")
		s.Do(t, "HEXPIRE", "quota:u3", "60", "FIELDS", "1", "api")
		f.waitRows("quota:u3", "api", "login")
		s.Do(t, "HPERSIST", "quota:u3", "FIELDS", "1", "api")
		f.waitFor("quota:u3 read whole", func() bool { _, ok := f.store.Get("quota:u3"); return ok && f.store.Len() == 1 })
	}},
}

// A limiter's hash whose fields carry TTLs of their own (Redis 7.4 and
// later) is a row a field in every mode, and each change to it (HSET,
// HINCRBY, HINCRBYFLOAT, HEXPIRE, HPERSIST, a field expiring, HDEL, DEL)
// shows: in events and tracking by what they follow alone, with no pass
// over the keys, so a field that expires leaves at once; polling, at its
// next read. Events mode needs no class beyond the ones it asks for
// (K$gxehzl): every hash-field event is h's, and a hash whose last field
// goes sends g's del.
func TestHashFieldsInEveryMode(t *testing.T) {
	t.Parallel()
	inEveryFieldMode(t, func(t *testing.T, s *redistest.Server, mode model.WatchMode) {
		s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
		s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
		f := watchFields(t, s, mode)
		for _, c := range fieldChanges {
			t.Run(c.name, func(t *testing.T) { c.do(t, s, f) })
		}
		if !watchingIn(f.state, mode) || f.state.LastError != "" || strings.Contains(f.state.Note, "re-read every") {
			t.Errorf("state %+v; want %v, healthy, no type re-read every interval", f.state, mode)
		}
		if mode.Spec().Push && f.passes != 1 {
			t.Errorf("%d full passes; want %v alone to keep the rows right", f.passes, mode)
		}
	})
}

// A client that sends HINCRBY then HEXPIRE 2 without NX on every hit
// pushes its field's window back for ever: that field's row is extending
// once it has grown so for longer than 2 s, in every mode, and a client
// that sends HEXPIRE NX is not, nor is the field beside it left alone.
func TestFieldExtendingInEveryMode(t *testing.T) {
	t.Parallel()
	inEveryFieldMode(t, func(t *testing.T, s *redistest.Server, mode model.WatchMode) {
		s.Do(t, "HSET", "quota:u4", "login", "1")
		f := watchFields(t, s, mode)
		const every = 200 * time.Millisecond
		s.Repeat(t, every, []any{"HINCRBY", "quota:u4", "api", "1"}, []any{"HEXPIRE", "quota:u4", "2", "FIELDS", "1", "api"})
		s.Repeat(t, every, []any{"HINCRBY", "quota:u4", "search", "1"}, []any{"HEXPIRE", "quota:u4", "2", "NX", "FIELDS", "1", "search"})
		var first time.Time
		f.untilWithin(8*time.Second, "quota:u4 › api extending", func() string {
			for _, field := range []string{"search", "login"} {
				if c, _ := f.fieldRow("quota:u4", field); c.Status == model.StatusExtending {
					t.Fatalf("%s is extending (value %v, TTL %d ms): its window is kept", c.Name(), c.Value, c.PTTL)
				}
			}
			c, ok := f.fieldRow("quota:u4", "api")
			if !ok {
				return "api not read yet"
			}
			if first.IsZero() {
				first = c.ObservedAt
			}
			if c.Status == model.StatusExtending && c.ObservedAt.Sub(first) < 2*time.Second {
				t.Fatalf("api extending %s after it was first read, before it outgrew its 2 s window", c.ObservedAt.Sub(first))
			}
			if c.Status != model.StatusExtending {
				return fmt.Sprintf("api is %s, value %v, TTL %d ms", c.Status, c.Value, c.PTTL)
			}
			return ""
		})
		if c, _ := f.fieldRow("quota:u4", "login"); c.Status != model.StatusNoExpiry {
			t.Errorf("login, the field left without a TTL, is %s; want no-expiry", c.Status)
		}
	})
}
