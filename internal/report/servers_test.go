package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// on returns obs as read on server.
func on(server string, obs ...model.Observation) []model.Observation {
	for i := range obs {
		obs[i].Server = server
	}
	return obs
}

// A key of one name on two servers is two rows, next to each other in the
// servers' order, each the latest reading of its own server; the table
// names the server of each row, and JSON and CSV do in every row.
func TestSnapshotOfSeveralServers(t *testing.T) {
	rules := testRules()
	at := t0.Add(time.Minute)
	batches := [][]model.Observation{
		on("eu-2", read("rl:b", "20", 5000, 0), read("rl:a", "10", 5000, 0)),
		on("eu-1", read("rl:b", "1", 5000, time.Millisecond), read("rl:c", "3", 5000, 0)),
		on("eu-2", read("rl:b", "21", 5000, 2*time.Millisecond)), // read again: the later reading stands
		on("eu-1", read("rl:b", "2", 5000, 3*time.Millisecond)),
	}
	write := func(format string, servers ...string) string {
		s := NewSnapshot(format, rules)
		s.Servers(servers)
		for _, b := range batches {
			s.Add(b)
		}
		var buf bytes.Buffer
		if err := s.Write(&buf, at); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}

	var doc struct {
		Counters []struct {
			Key    string  `json:"key"`
			Server *string `json:"server"`
			Raw    string  `json:"raw"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(write(FormatJSON, "eu-1", "eu-2")), &doc); err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, c := range doc.Counters {
		rows = append(rows, *c.Server+" "+c.Key+"="+c.Raw)
	}
	if want := []string{"eu-2 rl:a=10", "eu-1 rl:b=2", "eu-2 rl:b=21", "eu-1 rl:c=3"}; !slices.Equal(rows, want) {
		t.Errorf("JSON rows %q, want %q", rows, want)
	}

	records, err := csv.NewReader(strings.NewReader(write(FormatCSV, "eu-2", "eu-1"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows = nil
	for _, r := range records[1:] {
		rows = append(rows, r[len(r)-1]+" "+r[0]+"="+r[5])
	}
	if want := []string{"eu-2 rl:a=10", "eu-2 rl:b=21", "eu-1 rl:b=2", "eu-1 rl:c=3"}; !slices.Equal(rows, want) {
		t.Errorf("CSV rows in the servers' order eu-2, eu-1: %q, want %q", rows, want)
	}

	table := write(FormatTable, "eu-1", "eu-2")
	checkTerminalSafe(t, table)
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if got := strings.Fields(lines[0]); !slices.Equal(got, []string{"SERVER", "KEY", "LAYOUT", "VALUE", "LEFT", "LIMIT", "TTL", "STATUS"}) {
		t.Errorf("header: %q", lines[0])
	}
	for i, want := range []string{"eu-2 rl:a counter 10", "eu-1 rl:b counter 2", "eu-2 rl:b counter 21", "eu-1 rl:c counter 3"} {
		if got := strings.Join(strings.Fields(lines[i+1]), " "); !strings.HasPrefix(got, want+" ") {
			t.Errorf("row %d: %q, want it to start %q", i+1, got, want)
		}
		if key := strings.Index(lines[0], "KEY"); lines[i+1][key-2:key] != "  " || lines[i+1][key] == ' ' {
			t.Errorf("KEY does not start at column %d in %q", key, lines[i+1])
		}
	}
}

// One server is the table it always was: no SERVER column, though every
// row names its server in JSON and CSV.
func TestSnapshotOfOneServerHasNoServerColumn(t *testing.T) {
	s := NewSnapshot(FormatTable, testRules())
	s.Servers([]string{"127.0.0.1:6379"})
	s.Add(on("127.0.0.1:6379", read("rl:a", "1", 5000, 0)))
	var buf bytes.Buffer
	if err := s.Write(&buf, t0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "SERVER") || strings.Contains(buf.String(), "127.0.0.1") {
		t.Errorf("one server's table:\n%s", buf.String())
	}
}

// counterOn is the counter of a string key read on server.
func counterOn(server, key, raw string, pttl int64, rules *model.Rules) *model.Counter {
	o := read(key, raw, pttl, 0)
	o.Server = server
	c := model.NewCounter(&o, rules)
	return &c
}

// A check of several servers names each key's server; a key two shards
// hold is a problem of its own, with both copies; a server it could not
// read makes it no pass, though the others' problems still fail it.
func TestCheckOfSeveralServers(t *testing.T) {
	rules := testRules()
	rows := []*model.Counter{
		counterOn("a", "rl:1", "7", 41_000, rules),
		counterOn("b", "rl:1", "5", 12_000, rules),
		counterOn("eu-west", "rl:1", "9", 30_000, rules),
		counterOn("b", "rl:stuck", "150", model.PTTLNoExpiry, rules),
	}
	groups := []model.ShardGroup{{Name: "ring", Servers: []string{"a", "b"}}}
	check := NewCheck(rows, []string{"rl:*"}, 0, rules)
	check.Servers = []string{"a", "b", "eu-west", "c"}
	check.Shared = model.SharedKeys(rows, groups)
	check.Unreached = []Unreached{{Server: "c", Error: "could not connect to c: connection refused"}}

	var out strings.Builder
	if err := check.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	checkTerminalSafe(t, out.String())
	lines := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	want := []string{
		"stuck      b        rl:stuck  counter    value 150 >= limit 100 and no TTL",
		"shared     rl:1  ring: a (value 7, TTL 41s), b (value 5, TTL 12s); one key on 2 shards, each copy counting the limit of 100 on its own, so a client gets up to 2 times its limit;",
		"unreached  c  could not be checked: could not connect to c: connection refused",
		"problems: 1 of 4 keys checked (1 stuck) on 3 of 4 servers; 1 key on more than one shard, each copy counting the limit; and 1 server could not be checked",
	}
	if len(lines) != len(want) {
		t.Fatalf("got:\n%s", out.String())
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("line %d:\n%s\nwant it to start\n%s", i+1, lines[i], want[i])
		}
	}
	if check.Verdict() != VerdictProblems {
		t.Errorf("verdict %s, want problems", check.Verdict())
	}

	var doc struct {
		Verdict  string `json:"verdict"`
		Problems []struct {
			Server string `json:"server"`
			Key    string `json:"key"`
		} `json:"problems"`
		Shared []struct {
			Key    string  `json:"key"`
			Field  *string `json:"field"`
			Group  string  `json:"group"`
			Copies []struct {
				Server string   `json:"server"`
				Value  *float64 `json:"value"`
				Raw    *string  `json:"raw"`
				TTLMS  int64    `json:"ttl_ms"`
				Status string   `json:"status"`
			} `json:"copies"`
			Reason string `json:"reason"`
		} `json:"shared"`
		Unreached []Unreached `json:"unreached"`
	}
	var buf bytes.Buffer
	if err := check.WriteJSON(&buf, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	// Indented as encoding/json indents, as the rest of the document is.
	var compact, indented bytes.Buffer
	if err := json.Compact(&compact, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := json.Indent(&indented, compact.Bytes(), "", "  "); err != nil || indented.String()+"\n" != buf.String() {
		t.Errorf("not indented as encoding/json indents (%v):\n%s", err, buf.String())
	}
	if doc.Verdict != VerdictProblems || len(doc.Problems) != 1 || doc.Problems[0].Server != "b" || doc.Problems[0].Key != "rl:stuck" {
		t.Errorf("verdict %s, problems %+v", doc.Verdict, doc.Problems)
	}
	if len(doc.Shared) != 1 || doc.Shared[0].Key != "rl:1" || doc.Shared[0].Field != nil || doc.Shared[0].Group != "ring" || len(doc.Shared[0].Copies) != 2 ||
		!strings.Contains(doc.Shared[0].Reason, "up to 2 times its limit") {
		t.Fatalf("shared %+v", doc.Shared)
	}
	for i, want := range []struct {
		server    string
		value     float64
		ttl       int64
		hasStatus string
	}{{"a", 7, 40_000, "ok"}, {"b", 5, 11_000, "ok"}} {
		c := doc.Shared[0].Copies[i]
		if c.Server != want.server || c.Value == nil || *c.Value != want.value || c.Raw == nil || c.TTLMS != want.ttl || c.Status != want.hasStatus {
			t.Errorf("copy %d: %+v, want %+v", i, c, want)
		}
	}
	if len(doc.Unreached) != 1 || doc.Unreached[0].Server != "c" {
		t.Errorf("unreached %+v", doc.Unreached)
	}

	// Without problems, a server not read is no pass: could-not-check.
	check = NewCheck(rows[:1], []string{"rl:*"}, 0, rules)
	check.Servers = []string{"a", "c"}
	check.Unreached = []Unreached{{Server: "c", Error: "no answer"}}
	out.Reset()
	if err := check.WriteText(&out); err != nil {
		t.Fatal(err)
	}
	if check.Verdict() != VerdictFailed || !strings.HasSuffix(out.String(), "could not check: 1 key checked, no counter stuck or without expiry on 1 of 2 servers; 1 server could not be checked\n") {
		t.Errorf("verdict %s:\n%s", check.Verdict(), out.String())
	}

	// One server's JSON is as it was: no shared, no unreached.
	buf.Reset()
	check = NewCheck(rows[:1], []string{"rl:*"}, 0, rules)
	check.Servers = []string{"a"}
	if err := check.WriteJSON(&buf, t0); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), "shared") || strings.Contains(buf.String(), "unreached") {
		t.Errorf("one server's JSON:\n%s", buf.String())
	}
}
