package report

import (
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

func TestWriteProblemsOneLinePerProblem(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "ratelimit:*", Limit: 100, Window: 60 * time.Second, ExpectTTL: true}}}
	s := model.NewStore(rules)
	now := time.Now()
	s.Apply(model.Batch{Observed: []model.Observation{
		{Key: "ratelimit:stuck", Type: "string", Raw: "150", PTTL: model.PTTLNoExpiry, At: now},
		{Key: "ratelimit:fresh\x1b[2J", Type: "string", Raw: "3", PTTL: model.PTTLNoExpiry, At: now},
		{Key: "ratelimit:ok", Type: "string", Raw: "3", PTTL: 5000, At: now},
	}})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, s.Len())), rules); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("want one line per problem counter (2), got:\n%s", out.String())
	}
	want := map[string]string{"ratelimit:stuck": "stuck", `ratelimit:fresh\e[2J`: "no-expiry"}
	for _, l := range lines {
		f := strings.Fields(l)
		if want[f[1]] != f[0] {
			t.Errorf("line %q: want status %q for key %q", l, want[f[1]], f[1])
		}
		if !strings.Contains(l, "EXPIRE 60 NX") {
			t.Errorf("line %q does not say how to fix it", l)
		}
		if strings.ContainsRune(l, 0x1b) {
			t.Errorf("line %q carries a raw escape", l)
		}
	}
}

// The stuck counters come first, whatever their keys: clients over their
// limit are blocked by them now.
func TestWriteProblemsStuckFirst(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "*", Limit: 100, Window: time.Minute, ExpectTTL: true}}}
	s := model.NewStore(rules)
	now := time.Now()
	s.Apply(model.Batch{Observed: []model.Observation{
		{Key: "a", Type: "string", Raw: "1", PTTL: model.PTTLNoExpiry, At: now},
		{Key: "b", Type: "string", Raw: "500", PTTL: model.PTTLNoExpiry, At: now},
		{Key: "c", Type: "string", Raw: "2", PTTL: model.PTTLNoExpiry, At: now},
		{Key: "d", Type: "string", Raw: "101", PTTL: model.PTTLNoExpiry, At: now},
	}})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, s.Len())), rules); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		f := strings.Fields(l)
		got = append(got, f[0]+" "+f[1])
	}
	want := []string{"stuck b", "stuck d", "no-expiry a", "no-expiry c"}
	if strings.Join(got, ", ") != strings.Join(want, ", ") {
		t.Errorf("lines begin %q, want %q", got, want)
	}
}

func TestWriteProblemsSubSecondWindow(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "*", Window: 500 * time.Millisecond, ExpectTTL: true}}}
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: []model.Observation{{Key: "k", Type: "string", Raw: "1", PTTL: model.PTTLNoExpiry, At: time.Now()}}})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, 1)), rules); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "PEXPIRE 500 NX") {
		t.Errorf("a 500ms window must be repaired with PEXPIRE 500, not EXPIRE 0: %s", out.String())
	}
}

// A counter whose rule has no window cannot be repaired as it is: the fix
// says what to add first.
func TestWriteProblemsWithoutAWindow(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "*", ExpectTTL: true}}}
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: []model.Observation{{Key: "k", Type: "string", Raw: "1", PTTL: model.PTTLNoExpiry, At: time.Now()}}})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, 1)), rules); err != nil {
		t.Fatal(err)
	}
	if want := "fix: give its [[rule]] a window (or pass --window), then countertop repair\n"; !strings.HasSuffix(out.String(), want) {
		t.Errorf("got %q, want it to end %q", out.String(), want)
	}
}

// A rule with no window of its own takes the fallback's (--window, or
// [defaults] window), as repair does; a key no rule covers is told to pass
// --window, since it has no [[rule]] to give one.
func TestWriteProblemsTakeTheFallbacksWindow(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rules *model.Rules
		key   string
		want  string
	}{
		{"a rule without a window", &model.Rules{List: []model.Rule{{Pattern: "nw:*", Limit: 10, ExpectTTL: true}}, Fallback: model.Rule{Window: 45 * time.Second, ExpectTTL: true}},
			"nw:a", "fix: countertop repair (EXPIRE 45 NX)\n"},
		{"no rule", &model.Rules{List: []model.Rule{{Pattern: "nw:*", ExpectTTL: true}}, Fallback: model.Rule{ExpectTTL: true}},
			"other", "fix: pass --window (or give it a [[rule]] with a window), then countertop repair\n"},
	} {
		s := model.NewStore(tc.rules)
		s.Apply(model.Batch{Observed: []model.Observation{{Key: tc.key, Type: "string", Raw: "3", PTTL: model.PTTLNoExpiry, At: time.Now()}}})
		var out strings.Builder
		if err := WriteProblems(&out, refs(s.Rows(0, 1)), tc.rules); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out.String(), tc.want) {
			t.Errorf("%s: got %q, want it to end %q", tc.name, out.String(), tc.want)
		}
	}
}
