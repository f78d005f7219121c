package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
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
		if fix := "fix: countertop repair, which sends PEXPIRE " + f[1] + " 60000 NX (if still a counter without a TTL)"; !strings.HasSuffix(l, fix) {
			t.Errorf("line %q does not end with how to fix it: %q", l, fix)
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
	if !strings.Contains(out.String(), "PEXPIRE k 500 NX") {
		t.Errorf("a 500ms window must be repaired with PEXPIRE k 500: %s", out.String())
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
			"nw:a", "fix: countertop repair, which sends PEXPIRE nw:a 45000 NX (if still a counter without a TTL)\n"},
		{"no rule", &model.Rules{List: []model.Rule{{Pattern: "nw:*", ExpectTTL: true}}, Fallback: model.Rule{ExpectTTL: true}},
			"other", "fix: pass --window (or give it a [[rule]] with a window), then countertop repair\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := model.NewStore(tc.rules)
			s.Apply(model.Batch{Observed: []model.Observation{{Key: tc.key, Type: "string", Raw: "3", PTTL: model.PTTLNoExpiry, At: time.Now()}}})
			var out strings.Builder
			if err := WriteProblems(&out, refs(s.Rows(0, 1)), tc.rules); err != nil {
				t.Fatal(err)
			}
			if !strings.HasSuffix(out.String(), tc.want) {
				t.Errorf("%s: got %q, want it to end %q", tc.name, out.String(), tc.want)
			}
		})
	}
}

// checkRows are counters of every kind check tells apart, read at t0, with
// names a terminal would act on.
func checkRows(t *testing.T) ([]*model.Counter, *model.Rules) {
	t.Helper()
	rules := testRules()
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: []model.Observation{
		read("rl:stuck\x1b[2J\xff", "150", model.PTTLNoExpiry, 0),
		read("rl:fresh\u202e", "3", model.PTTLNoExpiry, 0),
		read("rl:ok", "17", 60_000, 0),
		read("rl:u42:2024113008", "3", model.PTTLNoExpiry, 0), // a past hour's window, left behind
		read("views:home", "42", model.PTTLNoExpiry, 0),
		read("other", "x", 5_000, 0),
	}})
	return refs(s.Rows(0, s.Len())), rules
}

// A check's JSON is what encoding/json writes of the same document (with a
// two-space indent, and the characters a terminal would act on escaped as
// in a snapshot); problems are the snapshot's counter objects, with a reason.
func TestCheckJSONIsEncodingJSON(t *testing.T) {
	rows, rules := checkRows(t)
	at := t0.Add(10 * time.Second)
	patterns := []string{"rl:*", "views:*", "typo\x1b[31m*", "other"}
	evictions := []struct {
		servers []model.ServerEvictions
		unknown string
	}{
		{},
		{servers: []model.ServerEvictions{{Addr: "10.0.0.1:6379", Evicted: 1234, Policy: "allkeys-lru", Uptime: 3*time.Hour + 400*time.Millisecond}, {Addr: "10.0.0.2:6379", Policy: "noeviction"}}},
		{unknown: "the Redis user may not do this on 10.0.0.1:6379 (NOPERM \x1b[31m)"},
	}
	for _, minKeys := range []int{0, 1, 2} {
		for _, e := range evictions {
			check := NewCheck(rows, patterns, minKeys, rules)
			check.Evictions, check.EvictionsUnknown = e.servers, e.unknown
			var got bytes.Buffer
			if err := check.WriteJSON(&got, at); err != nil {
				t.Fatal(err)
			}
			if want := encodingCheckJSON(t, at, check); got.String() != want {
				t.Errorf("--min-keys %d, evictions %+v %q: got\n%s\nwant\n%s", minKeys, e.servers, e.unknown, got.String(), want)
			}
			checkTerminalSafe(t, got.String())
		}
	}
	// A watch of 10 s that saw rl:ok pushed back as it grew, under a
	// window of a minute, could not tell it: with the problems, and alone.
	var ok *model.Counter
	for _, c := range rows {
		if c.Key == "rl:ok" {
			ok = c
		}
	}
	pushed := []Pushed{{Counter: ok, Pushback: model.Pushback{Pushes: 3, Since: t0, Window: time.Minute, KnownBy: t0.Add(61 * time.Second)}}}
	for _, counters := range [][]*model.Counter{rows, {ok}} {
		check := NewCheck(counters, patterns[:1], 0, rules)
		check.Watched, check.Pushed = 10*time.Second, pushed
		var got bytes.Buffer
		if err := check.WriteJSON(&got, at); err != nil {
			t.Fatal(err)
		}
		if want := encodingCheckJSON(t, at, check); got.String() != want {
			t.Errorf("%d keys, one undecided: got\n%s\nwant\n%s", len(counters), got.String(), want)
		}
	}
}

// encodingCheckJSON is the check document as encoding/json writes it.
func encodingCheckJSON(t *testing.T, at time.Time, check *Check) string {
	t.Helper()
	rows, minKeys, rules := check.Counters, check.MinKeys, check.rules
	var patterns []string
	for _, p := range check.Patterns {
		patterns = append(patterns, p.Pattern)
	}
	type eviction struct {
		Server  string `json:"server"`
		Evicted int64  `json:"evicted_keys"`
		Policy  string `json:"maxmemory_policy"`
		UptimeS int64  `json:"uptime_s"`
	}
	type pattern struct {
		Pattern string `json:"pattern"`
		Keys    int    `json:"keys"`
		Enough  bool   `json:"enough"`
	}
	// row is what a problem and an undecided key both say of it, first.
	type row struct {
		Key       string  `json:"key"`
		Field     *string `json:"field"`
		Server    *string `json:"server"`
		Type      string  `json:"type"`
		Layout    string  `json:"layout"`
		Value     any     `json:"value"`
		Remaining any     `json:"remaining"`
		Raw       *string `json:"raw"`
		RawCut    bool    `json:"raw_truncated"`
		TTLMS     int64   `json:"ttl_ms"`
		Limit     any     `json:"limit"`
		WindowS   any     `json:"window_s"`
		Rule      *string `json:"rule"`
		Status    string  `json:"status"`
	}
	rowOf := func(c *model.Counter) row {
		f := referenceFields(c, at, rules)
		raw := model.JSONKey(c.Raw)
		r := row{Key: model.JSONKey(c.Key), Type: c.Type, Layout: c.Layout.String(), Value: f.value, Remaining: f.remaining, Raw: &raw, RawCut: f.rawCut, TTLMS: f.ttlMS, Limit: f.limit, WindowS: f.window,
			Status: c.Status.String()}
		if f.ruled {
			r.Rule = &f.pattern
		}
		if c.Server != "" {
			server := model.JSONKey(c.Server)
			r.Server = &server
		}
		return r
	}
	type problem struct {
		row
		Reason string `json:"reason"`
	}
	type undecided struct {
		row
		Pushes int     `json:"pushes"`
		WatchS float64 `json:"watch_s"`
		Reason string  `json:"reason"`
	}
	var statuses []string
	counts := map[string]int{}
	for s := range model.NumStatuses {
		statuses = append(statuses, s.String())
	}
	for _, c := range rows {
		counts[c.Status.String()]++
	}
	// A map would come out in key order; the statuses go most severe first.
	var st bytes.Buffer
	st.WriteString("{")
	for i, name := range statuses {
		if i > 0 {
			st.WriteString(",")
		}
		fmt.Fprintf(&st, "%q:%d", name, counts[name])
	}
	st.WriteString("}")
	doc := struct {
		TakenAt     string          `json:"taken_at"`
		Verdict     string          `json:"verdict"`
		ExitCode    int             `json:"exit_code"`
		KeysChecked int             `json:"keys_checked"`
		MinKeys     int             `json:"min_keys"`
		WatchedS    float64         `json:"watched_s"`
		Statuses    json.RawMessage `json:"statuses"`
		Patterns    []pattern       `json:"patterns"`
		Unmatched   []string        `json:"unmatched"`
		Problems    []problem       `json:"problems"`
		Undecided   []undecided     `json:"undecided"`
		Evictions   []eviction      `json:"evictions"`
		Unknown     *string         `json:"evictions_unknown,omitempty"`
	}{TakenAt: at.Format(time.RFC3339), Verdict: "healthy", KeysChecked: len(rows), MinKeys: minKeys, WatchedS: check.Watched.Seconds(), Statuses: st.Bytes(),
		Patterns: []pattern{}, Unmatched: []string{}, Problems: []problem{}, Undecided: []undecided{}, Evictions: []eviction{}}
	if check.EvictionsUnknown != "" {
		doc.Evictions, doc.Unknown = nil, &check.EvictionsUnknown
	}
	for _, p := range check.Pushed {
		u := undecided{row: rowOf(p.Counter), Pushes: p.Pushes, WatchS: (p.Window + 2*time.Second).Seconds(), Reason: check.undecidedReason(p)}
		doc.Undecided = append(doc.Undecided, u)
		doc.Verdict, doc.ExitCode = "could-not-tell", 2
	}
	for _, e := range check.Evictions {
		doc.Evictions = append(doc.Evictions, eviction{e.Addr, e.Evicted, e.Policy, int64(e.Uptime / time.Second)})
	}
	for _, p := range patterns {
		n := 0
		for _, c := range rows {
			if model.GlobMatch(p, c.Key) {
				n++
			}
		}
		doc.Patterns = append(doc.Patterns, pattern{model.JSONKey(p), n, n >= minKeys})
		if n == 0 {
			doc.Unmatched = append(doc.Unmatched, model.JSONKey(p))
		}
		if n < minKeys {
			doc.Verdict, doc.ExitCode = "problems", 1
		}
	}
	for s := range model.NumStatuses {
		if !s.Problem() {
			continue
		}
		for _, c := range rows {
			if c.Status != s {
				continue
			}
			p := problem{row: rowOf(c), Reason: problemReason(c, rules)}
			doc.Problems = append(doc.Problems, p)
			doc.Verdict, doc.ExitCode = "problems", 1
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		t.Fatal(err)
	}
	return escapeTerminalActive(buf.String())
}

// The text a check writes names each pattern that matched nothing, escaped,
// on its own line, and ends with the verdict.
func TestCheckText(t *testing.T) {
	rows, rules := checkRows(t)
	var out strings.Builder
	if err := NewCheck(rows, []string{"rl:*", "typo\x1b[31m*"}, 0, rules).WriteText(&out); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(lines) != 5 || !strings.HasPrefix(lines[0], `stuck      rl:stuck\e[2J\xff  `) || !strings.HasPrefix(lines[1], `no-expiry  rl:fresh\u202e  `) ||
		!strings.HasPrefix(lines[2], `leak       rl:u42:2024113008  `) || !strings.HasPrefix(lines[3], `unmatched  typo\e[31m*  no key matches this pattern`) ||
		lines[4] != "problems: 3 of 6 keys checked (1 stuck, 1 no-expiry, 1 leak)" {
		t.Errorf("got:\n%s", out.String())
	}
	checkTerminalSafe(t, out.String())

	// A server that evicted keys has a line before the verdict, which it
	// leaves as it was; one that evicted none has no line.
	check := NewCheck(rows, []string{"rl:*"}, 0, rules)
	check.Evictions = []model.ServerEvictions{{Addr: "10.0.0.1:6379", Evicted: 1234, Policy: "allkeys-lru", Uptime: 75 * time.Hour}, {Addr: "10.0.0.2:6379", Policy: "allkeys-lru"}}
	out.Reset()
	if err := check.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	lines = strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := "evicted    10.0.0.1:6379  1234 keys evicted since it started 3d03h ago (maxmemory-policy allkeys-lru): an evicted rate-limit counter is a limit reset early for its client; " +
		"INFO counts every key there, checked or not; raise maxmemory, or keep the counters where nothing evicts them"
	if len(lines) != 5 || lines[3] != want || lines[4] != "problems: 3 of 6 keys checked (1 stuck, 1 no-expiry, 1 leak)" {
		t.Errorf("got:\n%s\nwant line 4:\n%s", out.String(), want)
	}
	check.Evictions, check.EvictionsUnknown = nil, "the Redis user may not do this on 10.0.0.1:6379 (NOPERM \x1b[31m)"
	out.Reset()
	if err := check.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if lines = strings.Split(out.String(), "\n"); len(lines) < 2 || lines[3] != `note       evictions not counted: the Redis user may not do this on 10.0.0.1:6379 (NOPERM \e[31m)` {
		t.Errorf("INFO refused: got\n%s", out.String())
	}
	checkTerminalSafe(t, out.String())
}

// Each problem line names the layout, and says what the problem means for
// it: a log's hits, a bucket's tokens, a past window's key that leaks
// memory, a GCRA key that nothing frees.
func TestWriteProblemsPerLayout(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "*", Limit: 10, Window: time.Minute, ExpectTTL: true}}}
	now := time.Date(2026, 12, 1, 12, 0, 30, 0, time.UTC)
	minute := now.Unix() / 60
	obs := []model.Observation{
		{Key: "log", Type: "zset", Len: 30, Newest: float64(now.Unix() - 1), Oldest: float64(now.Unix() - 100), InWindow: 12},
		{Key: "bucket", Type: "hash", Len: 2, Fields: []model.Field{{Name: "tokens", Value: "0"}, {Name: "last", Value: strconv.FormatInt(now.Unix(), 10)}}},
		{Key: "rl:" + strconv.FormatInt(minute-10, 10), Type: "string", Raw: "4"},
		{Key: "rate:u1", Type: "string", Raw: "312931303.11663097"},
	}
	s := model.NewStore(rules)
	for i := range obs {
		obs[i].PTTL, obs[i].At = model.PTTLNoExpiry, now
		if obs[i].Type != "zset" {
			obs[i].Newest, obs[i].Oldest, obs[i].InWindow = math.NaN(), math.NaN(), -1
		}
	}
	s.Apply(model.Batch{Observed: obs})
	var out strings.Builder
	if err := WriteProblems(&out, refs(s.Rows(0, s.Len())), rules); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"stuck      log  log        value 12 >= limit 10 and no TTL: blocked forever",
		"stuck      bucket  bucket     0 tokens left and no TTL: empty for good, every hit refused",
		"leak       rl:" + strconv.FormatInt(minute-10, 10) + "  window     value 4 in a past window, no TTL: never read again, never freed, memory that only grows (and never evicted under a volatile-* policy); fix: countertop repair, which sends PEXPIRE rl:" + strconv.FormatInt(minute-10, 10) + " 60000 NX",
		"no-expiry  rate:u1  gcra       no TTL: the key is never freed",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("check lacks %q:\n%s", want, out.String())
		}
	}
}
