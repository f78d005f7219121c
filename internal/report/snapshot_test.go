package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/countertop/countertop/model"
)

// snapshotRows is a Store's view of some awkward keys, ten seconds after
// they were read.
func snapshotRows(t *testing.T) ([]*model.Counter, *model.Rules, time.Time) {
	t.Helper()
	rules := testRules()
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: []model.Observation{
		read("rl:\x1b[31m", "9223372036854775807", 60_000, 0),
		read("line\nbreak", "2.5", model.PTTLNoExpiry, 0),
		read("bad\xffbyte", "text\xfe", 5_000, 0),
		read(`back\slash`, "-3", 5_000, 0),
		{Key: "rl:hash", Type: "hash", PTTL: model.PTTLNoExpiry, At: t0},
		read("views:home", "1e400", model.PTTLNoExpiry, 0),
		read("rl:inf", "inf", model.PTTLNoExpiry, 0),
	}})
	return refs(s.Rows(0, s.Len())), rules, t0.Add(10 * time.Second)
}

func TestWriteSnapshotJSON(t *testing.T) {
	rows, rules, at := snapshotRows(t)
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatJSON, at, rows, rules); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.Contains(out, `"value": 9223372036854775807,`) {
		t.Errorf("the largest int64 is not written verbatim:\n%s", out)
	}
	if strings.ContainsAny(out, "\x1b\uFFFD") || !utf8.ValidString(out) { // not escaped, or replaced by U+FFFD
		t.Errorf("raw control or invalid bytes in JSON:\n%q", out)
	}

	type counter struct {
		Key       string   `json:"key"`
		Field     *string  `json:"field"`
		Server    *string  `json:"server"`
		Type      string   `json:"type"`
		Layout    string   `json:"layout"`
		Value     *float64 `json:"value"`
		Remaining *float64 `json:"remaining"`
		Raw       *string  `json:"raw"`
		RawCut    bool     `json:"raw_truncated"`
		TTLMS     int64    `json:"ttl_ms"`
		Limit     *float64 `json:"limit"`
		WindowS   *float64 `json:"window_s"`
		Rule      *string  `json:"rule"`
		Status    string   `json:"status"`
	}
	var doc struct {
		TakenAt  string    `json:"taken_at"`
		WatchedS *float64  `json:"watched_s"`
		Counters []counter `json:"counters"`
	}
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("decode: %v\n%s", err, out)
	}
	if doc.TakenAt != "2025-03-01T12:00:10Z" {
		t.Errorf("taken_at = %q", doc.TakenAt)
	}
	if doc.WatchedS == nil || *doc.WatchedS != 0 {
		t.Errorf("watched_s = %v, want 0 for one pass", doc.WatchedS)
	}
	byKey := map[string]counter{}
	for _, c := range doc.Counters {
		byKey[c.Key] = c
	}
	if len(byKey) != len(rows) {
		t.Fatalf("%d counters, want %d: %v", len(byKey), len(rows), byKey)
	}

	esc, ok := byKey["rl:\x1b[31m"] // JSON's \u001b gives back the real name
	if !ok || esc.Layout != "counter" || esc.Status != "over" || *esc.Remaining != 0 || esc.TTLMS != 50_000 || *esc.Limit != 100 || *esc.WindowS != 60 || *esc.Rule != "rl:*" {
		t.Errorf("rl:ESC = %+v", esc)
	}
	if c := byKey["line\nbreak"]; *c.Value != 2.5 || *c.Remaining != 7 || *c.Raw != "2.5" || c.TTLMS != -1 || c.Rule != nil ||
		*c.Limit != 10 || c.WindowS != nil || c.Status != "no-expiry" {
		t.Errorf("line break = %+v", c)
	}
	// A byte that is not text makes the value opaque state: only the expiry
	// checks apply to it, and it has a TTL.
	if c := byKey[`bad\xffbyte`]; c.Layout != "opaque" || c.Value != nil || c.Remaining != nil || *c.Raw != `text\xfe` || c.Status != "ok" {
		t.Errorf("bad byte = %+v", c)
	}
	if c := byKey[`back\slash`]; *c.Value != -3 {
		t.Errorf("backslash = %+v", c)
	}
	if c := byKey["rl:hash"]; c.Type != "hash" || c.Layout != "other" || c.Value != nil || c.Remaining != nil || c.Raw != nil || c.Status != "not-counter" {
		t.Errorf("hash = %+v", c)
	}
	if c := byKey["views:home"]; c.Value != nil || *c.Raw != "1e400" || c.Limit != nil || c.Status != "not-counter" {
		t.Errorf("a number beyond float64 = %+v", c)
	}
	// Redis will not increment inf: it holds no number, and is not stuck.
	if c := byKey["rl:inf"]; c.Value != nil || *c.Raw != "inf" || c.TTLMS != -1 || c.Status != "not-counter" {
		t.Errorf("inf = %+v", c)
	}

	// Every field is in every counter, null or not.
	var loose struct{ Counters []map[string]json.RawMessage }
	if err := json.Unmarshal(buf.Bytes(), &loose); err != nil {
		t.Fatal(err)
	}
	for _, c := range loose.Counters {
		if len(c) != 14 {
			t.Errorf("counter has %d fields: %s", len(c), c["key"])
		}
	}
}

// encodingJSON is the snapshot document as encoding/json writes it: the
// reference the JSON a Snapshot writes by hand must match byte for byte.
func encodingJSON(t testing.TB, takenAt time.Time, rows []*model.Counter, rules *model.Rules) string {
	t.Helper()
	type counter struct {
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
	doc := struct {
		TakenAt  string    `json:"taken_at"`
		WatchedS float64   `json:"watched_s"`
		Counters []counter `json:"counters"`
	}{TakenAt: takenAt.Format(time.RFC3339), Counters: []counter{}}
	for _, c := range rows {
		f := referenceFields(c, takenAt, rules)
		jc := counter{Key: model.JSONKey(c.Key), Type: model.JSONKey(c.Type), Layout: c.Layout.String(), Value: f.value, Remaining: f.remaining, RawCut: f.rawCut, TTLMS: f.ttlMS, Limit: f.limit, WindowS: f.window, Status: c.Status.String()}
		if c.Type == "string" {
			raw := model.JSONKey(c.Raw)
			jc.Raw = &raw
		}
		if f.ruled {
			jc.Rule = &f.pattern
		}
		if c.Server != "" {
			server := model.JSONKey(c.Server)
			jc.Server = &server
		}
		doc.Counters = append(doc.Counters, jc)
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

// escapeTerminalActive is encoding/json's output with the characters it
// writes raw but a terminal could act on as \u escapes: DEL and the C1
// controls (Unicode's Cc past ASCII's C0, which encoding/json escapes
// already) and the bidirectional controls (Unicode's Bidi_Control). They
// can only stand inside strings, where JSON reads \uXXXX as the same
// character. The tables are Unicode's, not model's own list; the
// characters a terminal draws as nothing are model's (model.Invisible,
// which model's TestInvisible checks).
func escapeTerminalActive(doc string) string {
	var b strings.Builder
	for _, r := range doc {
		if (unicode.Is(unicode.Cc, r) && r >= 0x7f) || unicode.Is(unicode.Bidi_Control, r) || model.Invisible(r) {
			for _, u := range utf16.AppendRune(nil, r) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// referenceFields are the numbers of c's JSON object as the reference
// writers take them from the Counter and its Rule, without the writers'
// helpers: integers exactly (json.Number), floats as float64 for
// encoding/json to format; nil for null.
type reference struct {
	value, remaining, limit, window any
	ttlMS                           int64
	pattern                         string
	ruled                           bool
	rawCut                          bool // the string was not read whole
}

func referenceFields(c *model.Counter, takenAt time.Time, rules *model.Rules) reference {
	r := reference{ttlMS: -1}
	switch {
	case c.Value.Kind == model.KindInt:
		r.value = json.Number(strconv.FormatInt(c.Value.Int, 10))
	case c.Value.Kind == model.KindFloat:
		r.value = c.Value.Float // encoding/json fails on ±Inf or NaN, which a value never is
	}
	if c.HasRemaining {
		r.remaining = c.Remaining
	}
	if c.HasTTL() {
		r.ttlMS = max(c.Deadline().Sub(takenAt), 0).Milliseconds()
	}
	rule := rules.At(int(c.Rule))
	if rule.Limit > 0 {
		r.limit = rule.Limit
	}
	if rule.Window > 0 {
		r.window = rule.Window.Seconds()
	}
	r.pattern, r.ruled = rule.Pattern, c.Rule >= 0 && int(c.Rule) < len(rules.List)
	r.rawCut = c.Type == "string" && (c.RawCut || len(c.Raw) >= model.MaxRaw)
	return r
}

// text is v as encoding/json writes it, "" for nil: a CSV field.
func (r reference) text(t testing.TB, v any) string {
	if v == nil {
		return ""
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// bigNumbers are rules and counters whose numbers strconv's 'g' would
// write with an exponent: a limit of a million, a window of two weeks, a
// float value of 1500000.5.
func bigNumbers(rules *model.Rules, at time.Time) (*model.Rules, []*model.Counter) {
	big := *rules
	big.List = append(slices.Clone(rules.List), model.Rule{Pattern: "big:*", Limit: 1_000_000, Window: 14 * 24 * time.Hour, ExpectTTL: true})
	o := model.Observation{Key: "big:1", Type: "string", Raw: "1500000.5", PTTL: 1000, At: at}
	c := model.NewCounter(&o, &big)
	tiny := model.Observation{Key: "big:2", Type: "string", Raw: "0.0000005", PTTL: 1000, At: at}
	d := model.NewCounter(&tiny, &big)
	return &big, []*model.Counter{&c, &d}
}

// checkReference fails unless writeSnapshot writes rows in format exactly
// as the reference writer does, and returns what it wrote.
func checkReference(t *testing.T, format string, at time.Time, rows []*model.Counter, rules *model.Rules,
	reference func(testing.TB, time.Time, []*model.Counter, *model.Rules) string) string {
	t.Helper()
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, format, at, rows, rules); err != nil {
		t.Fatal(err)
	}
	if want := reference(t, at, rows, rules); buf.String() != want {
		t.Errorf("%s writer:\n%q\nthe reference:\n%q", format, buf.String(), want)
	}
	return buf.String()
}

// fuzzReference checks that any key, type, value and TTL is written in
// format as the reference writer writes it, with nothing a terminal could
// act on; and that JSON gives back the real strings.
func fuzzReference(f *testing.F, format string, reference func(testing.TB, time.Time, []*model.Counter, *model.Rules) string) {
	rules := testRules()
	f.Fuzz(func(t *testing.T, key, typ, raw string, pttl int64) {
		o := model.Observation{Key: key, Type: typ, Raw: raw, PTTL: max(pttl, model.PTTLNoExpiry), At: t0}
		c := model.NewCounter(&o, rules)
		out := checkReference(t, format, t0.Add(time.Second), []*model.Counter{&c}, rules, reference)
		checkTerminalSafe(t, out)
		if format == FormatJSON {
			checkJSONStrings(t, out, &c)
		}
	})
}

// checkJSONStrings fails unless the one counter in the JSON document out
// reads back as c's key, type and raw value (model.JSONKey's form: the real
// string, where it is UTF-8).
func checkJSONStrings(t *testing.T, out string, c *model.Counter) {
	t.Helper()
	var doc struct {
		Counters []struct {
			Key   string  `json:"key"`
			Field *string `json:"field"`
			Type  string  `json:"type"`
			Raw   *string `json:"raw"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil || len(doc.Counters) != 1 {
		t.Fatalf("decode: %v, %d counters\n%s", err, len(doc.Counters), out)
	}
	got := doc.Counters[0]
	if got.Key != model.JSONKey(c.Key) || got.Type != model.JSONKey(c.Type) {
		t.Errorf("JSON reads back key %q type %q, want %q %q", got.Key, got.Type, model.JSONKey(c.Key), model.JSONKey(c.Type))
	}
	if c.Type == "string" && (got.Raw == nil || *got.Raw != model.JSONKey(c.Raw)) {
		t.Errorf("JSON reads back raw %v, want %q", got.Raw, model.JSONKey(c.Raw))
	}
}

func TestWriteSnapshotJSONIsEncodingJSON(t *testing.T) {
	rows, rules, at := snapshotRows(t)
	rules, big := bigNumbers(rules, at)
	rows = append(rows, big...)
	rows = append(rows, &model.Counter{Key: "quote\"<&>\u2028\u2029\b\f\t\r\x7f\x00é", Type: "string", Raw: "1.5e300", ObservedAt: at, Rule: 0})
	rows = append(rows, &model.Counter{Key: hostileKey, Type: "string\u009b", Raw: hostileKey, ObservedAt: at, Rule: 0})
	rows = append(rows, &model.Counter{Key: "kept: \u00a0\u00ff\u2027\u202f\u200c\u200d\ufe0f\u2764", Type: "string", Raw: "1", ObservedAt: at, Rule: 0})
	rows = append(rows, &model.Counter{Key: "invisible: \u200b\u2065\u206a\ufeff\u00ad\uffff\U000e0041\U0001d173", Type: "string", Raw: "1", ObservedAt: at, Rule: 0})
	rows = append(rows, &model.Counter{Key: "unknown rule", Type: "string", Raw: "1", ObservedAt: at, Rule: 99})
	rows = append(rows, &model.Counter{Key: "on a server", Server: "eu-1", Type: "string", Raw: "1", ObservedAt: at, Rule: 0},
		&model.Counter{Key: "on an odd server", Server: hostileKey, Type: "string", Raw: "1", ObservedAt: at, Rule: 0})
	for _, rows := range [][]*model.Counter{rows, rows[:1], nil} {
		checkReference(t, FormatJSON, at, rows, rules, encodingJSON)
	}
}

// Any key, type or value is written as encoding/json would write it.
func FuzzWriteSnapshotJSON(f *testing.F) {
	f.Add("rl:1", "string", "5", int64(60_000))
	f.Add("bad\xffbyte\x1b", "hash", "", int64(-1))
	f.Add("\u2028\"\\", "string", "-1.5e-7", int64(0))
	f.Add(hostileKey, "string\u202e", "\u009b"+hostileKey, int64(-1))
	fuzzReference(f, FormatJSON, encodingJSON)
}

// A snapshot of watched counters says for how long, in seconds, and
// again after its first Write: the setting outlives the rows.
func TestWriteSnapshotJSONWatched(t *testing.T) {
	s := NewSnapshot(FormatJSON, testRules())
	s.Watched(3500 * time.Millisecond)
	for range 2 {
		var buf bytes.Buffer
		if err := s.Write(&buf, t0); err != nil {
			t.Fatal(err)
		}
		var doc struct {
			WatchedS float64 `json:"watched_s"`
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil || doc.WatchedS != 3.5 || !strings.Contains(buf.String(), "\n  \"watched_s\": 3.5,\n") {
			t.Errorf("watched_s = %v (%v), want 3.5:\n%s", doc.WatchedS, err, buf.String())
		}
	}
}

func TestWriteSnapshotJSONEmpty(t *testing.T) {
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatJSON, t0, nil, testRules()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"counters": []`) {
		t.Errorf("no counters should be an empty list:\n%s", buf.String())
	}
}

func TestWriteSnapshotCSV(t *testing.T) {
	rows, rules, at := snapshotRows(t)
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatCSV, at, rows, rules); err != nil {
		t.Fatal(err)
	}
	checkTerminalSafe(t, buf.String())
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(records[0], ","); got != "key,type,layout,value,remaining,raw,ttl_ms,limit,window_s,rule,status,raw_truncated,server" {
		t.Errorf("header = %s", got)
	}
	want := map[string]string{
		`rl:\e[31m`:   `rl:\e[31m,string,counter,9223372036854775807,0,9223372036854775807,50000,100,60,rl:*,over,false,`,
		`line\nbreak`: `line\nbreak,string,counter,2.5,7,2.5,-1,10,,,no-expiry,false,`,
		"rl:inf":      "rl:inf,string,other,,,inf,-1,100,60,rl:*,not-counter,false,",
		"views:home":  "views:home,string,other,,,1e400,-1,,,views:*,not-counter,false,",
		`bad\xffbyte`: `bad\xffbyte,string,opaque,,,text\xfe,0,10,,,ok,false,`,
		`back\\slash`: `back\\slash,string,counter,-3,13,-3,0,10,,,ok,false,`,
		"rl:hash":     "rl:hash,hash,other,,,,-1,100,60,rl:*,not-counter,false,",
	}
	for _, r := range records[1:] {
		if w, ok := want[r[0]]; ok && strings.Join(r, ",") != w {
			t.Errorf("row %s\n want %s", strings.Join(r, ","), w)
		}
	}
	if len(records) != len(rows)+1 {
		t.Errorf("%d records for %d rows", len(records), len(rows))
	}
}

// encodingCSV is the snapshot as encoding/csv writes the same records: the
// reference the CSV a Snapshot writes by hand must match byte for byte.
func encodingCSV(t testing.TB, takenAt time.Time, rows []*model.Counter, rules *model.Rules) string {
	t.Helper()
	var buf bytes.Buffer
	cw := csv.NewWriter(&buf)
	cw.Write([]string{"key", "type", "layout", "value", "remaining", "raw", "ttl_ms", "limit", "window_s", "rule", "status", "raw_truncated", "server"})
	for _, c := range rows {
		f := referenceFields(c, takenAt, rules)
		rule := ""
		if f.ruled {
			rule = model.Printable(f.pattern)
		}
		cw.Write([]string{
			model.Printable(c.Key), model.Printable(c.Type), c.Layout.String(), f.text(t, f.value), f.text(t, f.remaining), model.Printable(c.Raw),
			strconv.FormatInt(f.ttlMS, 10), f.text(t, f.limit), f.text(t, f.window), rule, c.Status.String(), strconv.FormatBool(f.rawCut), model.Printable(c.Server),
		})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func TestWriteSnapshotCSVIsEncodingCSV(t *testing.T) {
	rows, rules, at := snapshotRows(t)
	rules, big := bigNumbers(rules, at)
	rows = append(rows, big...)
	for _, key := range []string{`\.`, " lead", "\tlead", `say "hi"`, "a,b", "", "\u00a0nbsp", "é"} {
		rows = append(rows, &model.Counter{Key: key, Type: "string", Raw: key, ObservedAt: at, Rule: 0})
		rows = append(rows, &model.Counter{Key: "on " + key, Server: key, Type: "string", Raw: "1", ObservedAt: at, Rule: 0})
	}
	for _, rows := range [][]*model.Counter{rows, rows[:1], nil} {
		checkReference(t, FormatCSV, at, rows, rules, encodingCSV)
	}
}

// Any key, type or value is written as encoding/csv would write it.
func FuzzWriteSnapshotCSV(f *testing.F) {
	f.Add("rl:1", "string", "5", int64(60_000))
	f.Add(" a,\"b\"", "hash", "", int64(-1))
	f.Add(`\.`, "string", "\r\n", int64(0))
	f.Add(hostileKey, "string\u202e", "\u009b"+hostileKey, int64(-1))
	fuzzReference(f, FormatCSV, encodingCSV)
}

// Past parallelRows, rows are written in two halves at once: the output is
// still what encoding/json and encoding/csv write, row after row, and the
// table is aligned on every row.
func TestWriteSnapshotInHalves(t *testing.T) {
	rules := testRules()
	var rows []*model.Counter
	for i := range parallelRows + 3 {
		o := model.Observation{Key: fmt.Sprintf("rl:%06d", i), Type: "string", Raw: strconv.Itoa(i % 150), PTTL: int64(i * 997 % 90_000_000), At: t0}
		if i == parallelRows-5 {
			o = model.Observation{Key: "rl:" + strings.Repeat("w", 70), Type: "hash", PTTL: model.PTTLNoExpiry, At: t0} // the widest, in the second half
		}
		c := model.NewCounter(&o, rules)
		rows = append(rows, &c)
	}
	at := t0.Add(time.Second)
	write := func(format string) string {
		var buf bytes.Buffer
		if err := writeSnapshot(&buf, format, at, rows, rules); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	if write(FormatJSON) != encodingJSON(t, at, rows, rules) {
		t.Error("JSON in halves is not what encoding/json writes")
	}
	if write(FormatCSV) != encodingCSV(t, at, rows, rules) {
		t.Error("CSV in halves is not what encoding/csv writes")
	}
	lines := strings.Split(strings.TrimSuffix(write(FormatTable), "\n"), "\n")
	col := strings.Index(lines[0], "LAYOUT")
	if col != 3+70+tableGap {
		t.Errorf("the widest key (73 runes) is in the second half, but LAYOUT starts at %d", col)
	}
	for i, l := range lines[1:] {
		if !strings.HasPrefix(l, model.Printable(rows[i].Key)+" ") || l[col-tableGap:col] != "  " || l[col] == ' ' {
			t.Fatalf("line %d is %q, want the row of %s with LAYOUT at %d", i+1, l, rows[i].Key, col)
		}
	}
}

// The table is what text/tabwriter writes of the same cells, at sizes below,
// at and past parallelRows, with the widest cell of every column in the
// second half (measured by the other goroutine) and keys in runes, not bytes.
func TestWriteSnapshotTableIsTabwriter(t *testing.T) {
	rules, _ := bigNumbers(testRules(), t0)
	at := t0.Add(time.Second)
	for _, n := range []int{0, 1, parallelRows - 1, parallelRows, parallelRows + 1, 3*parallelRows + 7} {
		rows := make([]*model.Counter, n)
		for i := range rows {
			o := model.Observation{Key: fmt.Sprintf("rl:é%d", i), Type: "string", Raw: strconv.Itoa(i % 97), PTTL: int64(i%50) * 1000, At: t0}
			if i == n-1 && n > 1 { // the widest of each column, last
				o = model.Observation{Key: "big:" + strings.Repeat("ü", 60), Type: "string", Raw: strings.Repeat("9", 45), PTTL: model.PTTLNoExpiry, At: t0}
			}
			c := model.NewCounter(&o, rules)
			rows[i] = &c
		}
		var got bytes.Buffer
		if err := writeSnapshot(&got, FormatTable, at, rows, rules); err != nil {
			t.Fatal(err)
		}
		if want := tabwriterTable(t, at, rows, rules); got.String() != want {
			gl, wl := strings.Split(got.String(), "\n"), strings.Split(want, "\n")
			for i := range min(len(gl), len(wl)) {
				if gl[i] != wl[i] {
					t.Fatalf("%d rows: line %d differs from text/tabwriter's:\n%q\n%q", n, i, gl[i], wl[i])
				}
			}
			t.Fatalf("%d rows: %d lines, text/tabwriter wrote %d", n, len(gl), len(wl))
		}
	}
}

// tabwriterTable is the table of rows as text/tabwriter writes the same
// cells: the reference for the table's layout.
func tabwriterTable(_ testing.TB, at time.Time, rows []*model.Counter, rules *model.Rules) string {
	var want bytes.Buffer
	tw := tabwriter.NewWriter(&want, 0, 8, tableGap, ' ', 0)
	for _, c := range tableHeader {
		fmt.Fprint(tw, c.Title()+"\t")
	}
	fmt.Fprintln(tw, "STATUS")
	texts := newRuleTexts(rules)
	for _, c := range rows {
		cells := tableCells(c, texts, maxTableKey)
		fmt.Fprintf(tw, "%s\t%s\t%s\n", strings.Join(cells[:], "\t"), appendTTL(nil, ttlLeft(c.PTTL, at.Sub(c.ObservedAt))), c.Status)
	}
	tw.Flush()
	return want.String()
}

// A snapshot's counters arrive a pipeline's worth at a time, in SCAN's
// order, now and then a key twice (SCAN may repeat one, and the stripes of
// a walk overlap). Each format writes them in key order, each key once as
// it was last read, exactly as the standard library's writers write those
// rows: the table's columns are as wide as the rows written, not as the
// readings left out.
func TestSnapshotWritesEachKeyOnceInKeyOrder(t *testing.T) {
	rules := testRules()
	at := t0.Add(time.Minute)
	read := func(key, raw string, pttl int64, when time.Duration) model.Observation {
		return model.Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: t0.Add(when)}
	}
	small := [][]model.Observation{
		{read("rl:c", "3", 5000, 0), read("rl:b", strings.Repeat("7", 30), model.PTTLNoExpiry, 0)},
		{read("rl:a", "1", 60_000, time.Millisecond), read("rl:b", "2", 59_000, 2*time.Millisecond)},
		{read("rl:d", "4", 1000, 3*time.Millisecond)},
	}
	cases := map[string][][]model.Observation{"4 keys": small}

	// The prefix every key shares shrinks in a later batch (rl:user:00 to
	// nothing), and one key is read three times, its widest reading first.
	cases["a shrinking prefix"] = [][]model.Observation{
		{read("rl:user:0002:login", strings.Repeat("9", 25), 7000, 0), read("rl:user:0001:login", "1", 5000, 0)},
		{read("rl:user:0010:login", "10", 3000, time.Millisecond), read("rl:user:0002:login", "22", 6000, 2*time.Millisecond)},
		{read("a", "0", model.PTTLNoExpiry, 3*time.Millisecond), read("rl:user:0002:login", "2", 5000, 4*time.Millisecond)},
	}

	// Past parallelRows, in batches of 500 (a SCAN-like order), one key in
	// 50 read twice, its later reading in a later batch.
	rng := rand.New(rand.NewPCG(3, 4))
	var all []model.Observation
	for i := range 3*parallelRows + 7 {
		key := fmt.Sprintf("rl:%d:%s", rng.IntN(1_000_000), strings.Repeat("é", i%7))
		all = append(all, read(key, strconv.Itoa(i%1000), int64(rng.IntN(90_000_000)), time.Duration(i)*time.Microsecond))
		if i%50 == 0 {
			all = append(all, read(key, strings.Repeat("8", 20+i%30), int64(rng.IntN(90_000_000)), time.Duration(i+5000)*time.Microsecond))
		}
	}
	cases["past parallelRows"] = slices.Collect(slices.Chunk(all, 500))

	for name, batches := range cases {
		t.Run(name, func(t *testing.T) {
			latest := map[string]*model.Counter{}
			for _, b := range batches {
				for i := range b {
					if old, ok := latest[b[i].Key]; !ok || b[i].At.After(old.ObservedAt) {
						c := model.NewCounter(&b[i], rules)
						latest[b[i].Key] = &c
					}
				}
			}
			want := slices.SortedFunc(maps.Values(latest), func(a, b *model.Counter) int { return model.CompareKeys(a.Key, b.Key) })
			for format, reference := range map[string]func(testing.TB, time.Time, []*model.Counter, *model.Rules) string{
				FormatTable: tabwriterTable, FormatJSON: encodingJSON, FormatCSV: encodingCSV,
			} {
				s := NewSnapshot(format, rules)
				for _, b := range batches {
					s.Add(b)
				}
				var got bytes.Buffer
				if err := s.Write(&got, at); err != nil {
					t.Fatal(err)
				}
				if ref := reference(t, at, want, rules); got.String() != ref {
					gl, wl := strings.Split(got.String(), "\n"), strings.Split(ref, "\n")
					for i := range min(len(gl), len(wl)) {
						if gl[i] != wl[i] {
							t.Fatalf("%s, %s: line %d differs from the reference:\n%q\n%q", name, format, i, gl[i], wl[i])
						}
					}
					t.Fatalf("%s, %s: %d lines, the reference has %d", name, format, len(gl), len(wl))
				}
			}
		})
	}
}

// One long row (a 64 KiB value, escaped to four times that in JSON) does
// not make the snapshot hold megabytes for each batch after it: the room
// it makes for a batch is a guess from the rows so far, kept small.
func TestSnapshotRoomForABatchStaysSmall(t *testing.T) {
	s := NewSnapshot(FormatJSON, testRules())
	s.Add([]model.Observation{{Key: "rl:big", Type: "string", Raw: strings.Repeat("\x01", 64<<10), PTTL: 1000, At: t0}})
	batch := make([]model.Observation, 500)
	for i := range batch {
		batch[i] = model.Observation{Key: fmt.Sprintf("rl:%d", i), Type: "string", Raw: "1", PTTL: 1000, At: t0}
	}
	s.Add(batch)
	if room, used := cap(s.batches[1].text), len(s.batches[1].text); room > 1<<20 {
		t.Errorf("500 short rows (%d bytes) after a long one were given room for %d bytes", used, room)
	}
}

// A snapshot that cannot be written says why, in every format.
func TestSnapshotWriteFails(t *testing.T) {
	for _, format := range Formats {
		t.Run(format, func(t *testing.T) {
			s := NewSnapshot(format, testRules())
			s.Add([]model.Observation{{Key: "rl:1", Type: "string", Raw: "1", PTTL: 1000, At: t0}})
			if err := s.Write(failingWriter{}, t0); !errors.Is(err, errDiskFull) {
				t.Errorf("%s: Write to a failing writer returned %v, want %v", format, err, errDiskFull)
			}
		})
	}
}

var errDiskFull = errors.New("no space left on device")

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errDiskFull }

func TestWriteSnapshotTable(t *testing.T) {
	rows, rules, at := snapshotRows(t)
	rows = append(rows, &model.Counter{Key: "long", Type: "string", Raw: strings.Repeat("x", 100), PTTL: 90_061_000, ObservedAt: at, Status: model.StatusOK, Layout: model.LayoutOther})
	// A log: its value is the hits its layout reads.
	log := model.Observation{Key: "rl:log", Type: "zset", PTTL: 30_000, At: at, Len: 40, Newest: float64(at.Unix()), Oldest: float64(at.Unix() - 100), InWindow: 12}
	logRow := model.NewCounter(&log, rules)
	rows = append(rows, &logRow)
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatTable, at, rows, rules); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	checkTerminalSafe(t, out)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(rows)+1 {
		t.Fatalf("%d lines for %d rows:\n%s", len(lines), len(rows), out)
	}
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"KEY", "LAYOUT", "VALUE", "LEFT", "LIMIT", "TTL", "STATUS"}) {
		t.Errorf("header: %q", lines[0])
	}
	var words []string
	for _, l := range lines {
		words = append(words, strings.Join(strings.Fields(l), " "))
	}
	for _, want := range []string{
		`rl:\e[31m counter 9223372036854775807 0 100 50s over`,
		`line\nbreak counter 2.5 7 10 no expiry no-expiry`,
		`bad\xffbyte opaque text\xfe - 10 0.0s ok`,
		`back\\slash counter -3 13 10 0.0s ok`,
		"rl:hash other (hash) - 100 no expiry not-counter",
		"views:home other 1e400 - - no expiry not-counter",
		"rl:inf other inf - 100 no expiry not-counter",
		"long other " + strings.Repeat("x", 39) + "… - 100 1d01h ok",
		"rl:log log 12 88 100 30s ok",
	} {
		if !slices.Contains(words, want) {
			t.Errorf("table lacks the row %q:\n%s", want, out)
		}
	}
	col := strings.Index(lines[0], "VALUE")
	for _, l := range lines[1:] {
		if l[col-2:col] != "  " || l[col] == ' ' {
			t.Errorf("VALUE does not start at column %d in %q", col, l)
		}
	}
}

// checkTerminalSafe fails when out holds bytes a terminal could act on:
// a control character but the line break (C0, DEL, C1: U+009B is a CSI),
// a line or paragraph separator, a bidirectional control that would
// reorder what follows it, or bytes that are not UTF-8.
func checkTerminalSafe(t *testing.T, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("output is not UTF-8:\n%q", out)
		return
	}
	for _, r := range out {
		if (unicode.Is(unicode.Cc, r) && r != '\n') || r == '\u2028' || r == '\u2029' || unicode.Is(unicode.Bidi_Control, r) {
			t.Errorf("output holds %U:\n%q", r, out)
			return
		}
	}
}

// hostileKey holds what a terminal acts on but JSON writes raw: DEL, C1
// controls (U+009B is a CSI: "\u009b2J" clears some screens), every
// bidirectional control, and the line separators and ESC for good measure.
const hostileKey = "rl:\x7f\u0085\u009b2J\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028\u2029\x1b[2J:end"

// A key, type, value and rule pattern with hostileKey's characters reach
// the terminal escaped in every format, JSON included (as \u escapes, which
// give back the real strings).
func TestSnapshotHostileKeyIsTerminalSafe(t *testing.T) {
	rules := &model.Rules{
		List:     []model.Rule{{Pattern: "rl:*\u202e*", Limit: 100, Window: time.Minute, ExpectTTL: true}},
		Fallback: model.Rule{Limit: 10, ExpectTTL: true},
	}
	o := model.Observation{Key: hostileKey, Type: "string", Raw: "\u009b" + hostileKey, PTTL: 30_000, At: t0}
	c := model.NewCounter(&o, rules)
	h := model.Counter{Key: "\u202ehash\u0085", Type: "hash\u2066\x7f", PTTL: model.PTTLNoExpiry, ObservedAt: t0, Rule: -1, Status: model.StatusNotCounter}
	if c.Rule != 0 {
		t.Fatalf("the hostile key matched rule %d, want 0", c.Rule)
	}
	rows := []*model.Counter{&c, &h}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := writeSnapshot(&buf, format, t0.Add(time.Second), rows, rules); err != nil {
			t.Fatal(err)
		}
		t.Run(format, func(t *testing.T) { checkTerminalSafe(t, buf.String()) })
		if format != FormatJSON {
			continue
		}
		var doc struct {
			Counters []struct{ Key, Type, Raw, Rule string }
		}
		if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
			t.Fatalf("decode: %v\n%s", err, buf.String())
		}
		if got := doc.Counters[0]; got.Key != c.Key || got.Raw != c.Raw || got.Rule != rules.List[0].Pattern {
			t.Errorf("JSON reads back %+q, want key %+q, raw %+q, rule %+q", got, c.Key, c.Raw, rules.List[0].Pattern)
		}
		if got := doc.Counters[1]; got.Key != h.Key || got.Type != h.Type {
			t.Errorf("JSON reads back %+q, want key %+q, type %+q", got, h.Key, h.Type)
		}
		for _, esc := range []string{`\u007f`, `\u0085`, `\u009b`, `\u061c`, `\u200e`, `\u202e`, `\u2069`, `\u2028`, `\u001b`} {
			if !strings.Contains(buf.String(), esc) {
				t.Errorf("JSON lacks the escape %s:\n%s", esc, buf.String())
			}
		}
	}
}

func TestSnapshotFormats(t *testing.T) {
	for _, f := range Formats {
		if !ValidFormat(f) {
			t.Errorf("ValidFormat(%q) = false", f)
		}
	}
	if ValidFormat("yaml") || ValidFormat("") {
		t.Error("ValidFormat accepts an unknown format")
	}
	err := writeSnapshot(&bytes.Buffer{}, "yaml", t0, nil, testRules())
	if err == nil || !strings.Contains(err.Error(), "yaml") || !strings.Contains(err.Error(), "table, json, csv") {
		t.Errorf("unknown format: err = %v", err)
	}
}

func TestAppendTTL(t *testing.T) {
	for ms, want := range map[int64]string{
		-1:          "no expiry",
		0:           "0.0s",
		850:         "0.8s",
		42_900:      "42s",
		307_000:     "5m07s",
		11_100_000:  "3h05m",
		187_200_000: "2d04h",
		// A TTL in years reads in years; one of millions of years (Redis
		// takes them), not as the longest time.Duration, 106751d23h.
		40_003_200_000:            "1y098d",
		9_200_000_000_000_000_000: "> 100y",
	} {
		t.Run(fmt.Sprint(ms), func(t *testing.T) {
			if got := string(appendTTL(nil, ms)); got != want {
				t.Errorf("appendTTL(%d) = %q, want %q", ms, got, want)
			}
		})
	}
}

// ttl_ms is the PTTL Redis gave, less the time since it was read, even
// past what a time.Duration holds (PEXPIREAT far in the future).
func TestTTLMSBeyondADuration(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		pttl  int64
		since time.Duration
		want  int64
	}{
		{9223370240817087231, 1500 * time.Microsecond, 9223370240817087229},
		{60_000, 1500 * time.Microsecond, 59_998}, // 59,998.5 ms, cut as a Duration is
		{60_000, 0, 60_000},
		{1, time.Second, 0},
		{model.PTTLNoExpiry, time.Second, -1},
		{60_000, math.MaxInt64, 0}, // read ages ago (a zero ObservedAt): nothing left, not a wrap
	} {
		t.Run(fmt.Sprintf("%d after %v", tc.pttl, tc.since), func(t *testing.T) {
			if got := ttlLeft(tc.pttl, tc.since); got != tc.want {
				t.Errorf("ttlLeft(PTTL %d, %v later) = %d, want %d", tc.pttl, tc.since, got, tc.want)
			}
		})
	}
	// A Snapshot counts read times from its own start: readings with no
	// time, from long ago, or after the moment written come out as
	// encoding/json writes them too.
	var rows []*model.Counter
	for i, read := range []time.Time{{}, at.Add(-200 * 365 * 24 * time.Hour), at.Add(-time.Second), at, at.Add(time.Second)} {
		rows = append(rows, &model.Counter{Key: fmt.Sprintf("rl:%d", i), Type: "string", Raw: "1", PTTL: 60_000, ObservedAt: read})
	}
	checkReference(t, FormatJSON, at, rows, testRules(), encodingJSON)
}

// writeSnapshot writes rows, in the order given, as a Snapshot writes its
// counters in key order: added in batches of 500, as a pipeline's worth
// arrives, each row rendered as it is added, and put together when
// written. The rows are taken as they are, not classified again.
func writeSnapshot(w io.Writer, format string, at time.Time, rows []*model.Counter, rules *model.Rules) error {
	s := NewSnapshot(format, rules)
	var order []place
	for from := 0; from < len(rows); from += 500 {
		batch := rows[from:min(from+500, len(rows))]
		for i := range batch {
			order = append(order, place{batch: uint32(from / 500), i: uint32(i)})
		}
		s.add(len(batch), "", func(i int) model.Counter { return *batch[i] })
	}
	return s.write(w, at, order)
}

// A rule with no window of its own takes the fallback's (--window, or
// [defaults] window) in a snapshot, as repair gives it.
func TestSnapshotWindowOfARuleWithoutOne(t *testing.T) {
	rules := &model.Rules{List: []model.Rule{{Pattern: "nw:*", Limit: 10, ExpectTTL: true}}, Fallback: model.Rule{Window: 45 * time.Second, ExpectTTL: true}}
	s := model.NewStore(rules)
	s.Apply(model.Batch{Observed: []model.Observation{read("nw:a", "3", model.PTTLNoExpiry, 0)}})
	for format, want := range map[string]string{FormatJSON: `"window_s": 45,`, FormatCSV: "nw:a,string,counter,3,7,3,-1,10,45,nw:*,no-expiry,false,\n"} {
		t.Run(format, func(t *testing.T) {
			var buf bytes.Buffer
			if err := writeSnapshot(&buf, format, t0, refs(s.Rows(0, 1)), rules); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%s: %q does not hold %q", format, buf.String(), want)
			}
		})
	}
}

// The table measures each TTL before it writes it: the width is the length
// of what it then writes, at every unit's edges and far past them.
func TestTTLWidthIsTheTTLsLength(t *testing.T) {
	edges := []int64{-2, -1, 0, 1, 99, 100, 9_949, 9_999, 10_000, 59_999, 60_000, 599_999, 600_000,
		3_599_999, 3_600_000, 35_999_999, 36_000_000, 86_399_999, 86_400_000, 863_999_999, 864_000_000,
		8_639_999_999, 8_640_000_000, 31_535_999_999, 31_536_000_000, 3_153_600_000_000, 3_153_600_000_001, math.MaxInt64 / int64(time.Millisecond), math.MaxInt64}
	for _, ms := range edges {
		if got, want := ttlWidth(ms), len(appendTTL(nil, ms)); got != want {
			t.Errorf("ttlWidth(%d) = %d, but the table writes %q", ms, got, appendTTL(nil, ms))
		}
	}
}

func FuzzTTLWidth(f *testing.F) {
	f.Add(int64(59_999))
	f.Add(int64(math.MaxInt64))
	f.Fuzz(func(t *testing.T, ms int64) {
		if got, want := ttlWidth(ms), len(appendTTL(nil, ms)); got != want {
			t.Errorf("ttlWidth(%d) = %d, but the table writes %q", ms, got, appendTTL(nil, ms))
		}
	})
}

// One name of a megabyte does not pad every row of the table to its
// length: the table cuts it as the dashboard does, keeping its beginning
// and end, while JSON and CSV keep the whole name.
func TestSnapshotTableCutsLongNames(t *testing.T) {
	rules := testRules()
	huge := "rl:" + strings.Repeat("tenant-", 1<<20/7) + "end"
	var rows []*model.Counter
	for i := range 30 {
		c := model.NewCounter(&model.Observation{Key: fmt.Sprintf("rl:%02d", i), Type: "string", Raw: "1", PTTL: 60_000, At: t0}, rules)
		rows = append(rows, &c)
	}
	c := model.NewCounter(&model.Observation{Key: huge, Type: "string", Raw: "1", PTTL: 60_000, At: t0}, rules)
	rows = append(rows, &c)

	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatTable, t0, rows, rules); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != 32 {
		t.Fatalf("%d lines for 31 rows", len(lines))
	}
	for i, l := range lines {
		if n := model.Cells(l); n > maxTableKey+60 {
			t.Fatalf("line %d is %d cells wide; a key is cut at %d", i, n, maxTableKey)
		}
	}
	last := strings.Fields(lines[31])[0]
	if model.Cells(last) != maxTableKey || !strings.HasPrefix(last, "rl:tenant-") || !strings.HasSuffix(last, "tenant-end") || !strings.Contains(last, "…") {
		t.Errorf("the long name reads %q (%d cells), want its start and end around a … in %d cells", last, model.Cells(last), maxTableKey)
	}
	if col := strings.Index(lines[0], "LAYOUT"); col != maxTableKey+tableGap {
		t.Errorf("LAYOUT starts at %d, want %d", col, maxTableKey+tableGap)
	}
	for _, format := range []string{FormatJSON, FormatCSV} {
		t.Run(format, func(t *testing.T) {
			buf.Reset()
			if err := writeSnapshot(&buf, format, t0, rows, rules); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(buf.String(), huge) {
				t.Errorf("%s does not hold the whole name", format)
			}
		})
	}
}

// On a terminal (FitTo), the table's lines fit its width: the names are
// cut to what the other columns leave, and a table whose names fit is
// the table without FitTo.
func TestSnapshotTableFitsTheTerminal(t *testing.T) {
	rules := testRules()
	var rows []*model.Counter
	for i := range 5 {
		key := fmt.Sprintf("ratelimit:api:POST:/v2/organizations/%d/projects/deployments:user:%d", i, 1000+i)
		c := model.NewCounter(&model.Observation{Key: key, Type: "string", Raw: strconv.Itoa(i * 30), PTTL: 60_000, At: t0}, rules)
		rows = append(rows, &c)
	}
	write := func(width int) []string {
		s := NewSnapshot(FormatTable, rules)
		s.FitTo(width)
		s.add(len(rows), "", func(i int) model.Counter { return *rows[i] })
		order := make([]place, len(rows))
		for i := range order {
			order[i] = place{i: uint32(i)}
		}
		var buf bytes.Buffer
		if err := s.write(&buf, t0, order); err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	}
	for _, width := range []int{80, 100, 120} {
		lines := write(width)
		for i, l := range lines {
			if model.Cells(l) > width {
				t.Errorf("at %d columns, line %d is %d cells: %q", width, i, model.Cells(l), l)
			}
		}
		if key := strings.Fields(lines[1])[0]; !strings.HasPrefix(key, "ratelimit:") || !strings.HasSuffix(key, "user:1000") {
			t.Errorf("at %d columns the first key reads %q", width, key)
		}
	}
	var want bytes.Buffer
	if err := writeSnapshot(&want, FormatTable, t0, rows, rules); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(write(200), "\n") + "\n"; got != want.String() {
		t.Errorf("at 200 columns every name fits, but the table differs:\n%s\nwant\n%s", got, want.String())
	}
	// However narrow the terminal, a name keeps minTableKey cells.
	if key := strings.Fields(write(20)[1])[0]; model.Cells(key) != minTableKey {
		t.Errorf("at 20 columns the key reads %q", key)
	}
}

// A string that was not read whole (model.Counter.RawCut; or a raw of 64
// KiB, all redisclient reads of a string until it says so) is said to be
// cut in every format: JSON with raw_truncated, CSV in a column of that
// name, the table after the value.
func TestSnapshotSaysRawIsCut(t *testing.T) {
	rules := testRules()
	var rows []*model.Counter
	for i, o := range []model.Observation{
		{Raw: strings.Repeat("7", model.MaxRaw), RawCut: true},
		{Raw: strings.Repeat("7", 512)}, // read whole
		{Raw: strings.Repeat("7", 65535)},
		{Raw: strings.Repeat("7", 65536)},
	} {
		o.Key, o.Type, o.PTTL, o.At = fmt.Sprintf("rl:%d", i), "string", 60_000, t0
		c := model.NewCounter(&o, rules)
		rows = append(rows, &c)
	}
	doc := checkReference(t, FormatJSON, t0, rows, rules, encodingJSON)
	if strings.Count(doc, `"raw_truncated": false`) != 2 || strings.Count(doc, `"raw_truncated": true`) != 2 {
		t.Errorf("want the two raws that were not read whole said to be cut:\n%.2000s", doc)
	}
	checkReference(t, FormatCSV, t0, rows, rules, encodingCSV)
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatTable, t0, rows, rules); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	for i, cut := range []bool{true, false, false, true} {
		if strings.Contains(lines[i+1], strings.Repeat("7", 39)+"… (read in part)  -     100") != cut {
			t.Errorf("row %d is %scut, but the table reads:\n%s", i, map[bool]string{false: "not "}[cut], lines[i+1])
		}
	}
}

// An integer value is written with all its digits, past 2^53 too, where a
// reader that holds numbers as float64 rounds it; raw holds the stored
// text exactly, a decimal's included, whose value is the nearest float64.
func TestSnapshotJSONValueIsExact(t *testing.T) {
	rules := testRules()
	raws := []string{"9007199254740993", "-9223372036854775808", "9223372036854775807", "9007199254740993.5", "0.1"}
	var rows []*model.Counter
	for i, raw := range raws {
		c := model.NewCounter(&model.Observation{Key: fmt.Sprintf("rl:%d", i), Type: "string", Raw: raw, PTTL: 60_000, At: t0}, rules)
		rows = append(rows, &c)
	}
	var buf bytes.Buffer
	if err := writeSnapshot(&buf, FormatJSON, t0, rows, rules); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Counters []struct {
			Value json.Number `json:"value"`
			Raw   string      `json:"raw"`
		} `json:"counters"`
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"9007199254740993", "-9223372036854775808", "9223372036854775807", "9007199254740994", "0.1"}
	for i, c := range doc.Counters {
		if string(c.Value) != want[i] || c.Raw != raws[i] {
			t.Errorf("raw %s: value %s, raw %q; want value %s and the raw as stored", raws[i], c.Value, c.Raw, want[i])
		}
	}
}
