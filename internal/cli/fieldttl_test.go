package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// The limiter: one hash per client, one field per endpoint, each
// field its own window. quota:u1's login lost its TTL (the client died
// between HINCRBY and HEXPIRE): check names that field, and its advice,
// like repair, gives the field a TTL, never the hash (a key TTL would end
// every field of it a window later).
func TestCheckReadsHashFieldsWithTTLs(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
	s.Do(t, "HSET", "quota:u2", "api", "4")
	s.Do(t, "HPEXPIRE", "quota:u2", "60000", "FIELDS", "1", "api")

	code, out, errOut := cli(t, s, "check", "--pattern", "quota:*", "--limit", "10", "--window", "60s")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	if !strings.Contains(out, "no-expiry  quota:u1 › login") || !strings.Contains(out, "HPEXPIRE quota:u1 60000 NX FIELDS 1 login") {
		t.Errorf("check must name quota:u1 › login as no-expiry, repaired by HPEXPIRE of that field:\n%s", out)
	}
	if strings.Contains(out, "PEXPIRE quota:u2") || strings.Contains(out, " PEXPIRE ") || strings.Contains(out, "quota:u2") {
		t.Errorf("check advises or flags quota:u2, whose one field expires:\n%s", out)
	}

	code, out, errOut = cli(t, s, "snapshot", "--pattern", "quota:*", "--limit", "10", "--window", "60s", "--format", "json")
	wantRun(t, code, out, errOut, exitOK, "", "")
	var snap struct {
		Counters []struct {
			Key    string  `json:"key"`
			Field  *string `json:"field"`
			TTLms  *int64  `json:"ttl_ms"`
			Status string  `json:"status"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	got := map[string]string{}
	for _, c := range snap.Counters {
		if c.Field == nil {
			t.Errorf("%s: field is null, want the field's name", c.Key)
			continue
		}
		got[c.Key+" › "+*c.Field] = c.Status
		if *c.Field == "api" && (c.TTLms == nil || *c.TTLms <= 0 || *c.TTLms > 60000) {
			t.Errorf("%s › api: ttl_ms %v, want the field's own", c.Key, c.TTLms)
		}
	}
	if got["quota:u1 › api"] != "over" || got["quota:u1 › login"] != "no-expiry" || got["quota:u2 › api"] != "ok" || len(got) != 3 {
		t.Errorf("snapshot rows %v; want u1's api over (with its TTL), u1's login no-expiry, u2's api ok", got)
	}

	code, out, errOut = cli(t, s, "repair", "--pattern", "quota:*", "--limit", "10", "--window", "60s", "--yes")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if ttl := s.Do(t, "HPTTL", "quota:u1", "FIELDS", "1", "login").([]any)[0].(int64); ttl <= 0 {
		t.Errorf("after repair login's TTL is %d; want one:\n%s", ttl, out)
	}
	if p := s.Do(t, "PTTL", "quota:u1").(int64); p != -1 {
		t.Errorf("after repair the hash itself has a TTL of %dms: every field would go with it", p)
	}
}

// The clients, against a server with field TTLs: one that does it
// right (HINCRBY, then HEXPIRE ... NX of the field), one that died between
// the two (the bug: a field without a TTL), and one that wrote a field
// with HSET, which clears its TTL. check (text and JSON), repair --dry-run
// and snapshot CSV name the fields without a TTL as key › field, each row
// with its own ttl_ms.
func TestFieldClientsNamedKeyAndField(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	hit := func(key, field string) { // the fix
		s.Do(t, "HINCRBY", key, field, "1")
		s.Do(t, "HEXPIRE", key, "60", "NX", "FIELDS", "1", field)
	}
	hit("quota:fix", "api")
	hit("quota:fix", "login")
	hit("quota:bug", "api")
	s.Do(t, "HINCRBY", "quota:bug", "login", "1") // the client died before its HEXPIRE
	hit("quota:hset", "api")
	hit("quota:hset", "login")
	s.Do(t, "HSET", "quota:hset", "api", "5") // HSET clears the field's TTL
	// A hash none of whose fields has a TTL any more reads field by field
	// when its rule says its fields count each (field_ttls).
	hit("fq:hset", "api")
	s.Do(t, "HSET", "fq:hset", "api", "5")
	args := []string{"--pattern", "quota:*", "--pattern", "fq:*", "--limit", "10", "--window", "60s"}
	lost := []string{"fq:hset › api", "quota:bug › login", "quota:hset › api"}

	code, out, errOut := cli(t, s, append([]string{"check"}, args...)...)
	wantRun(t, code, out, errOut, exitProblems, "", "")
	for _, name := range lost {
		if !strings.Contains(out, "no-expiry  "+name+"  counter") {
			t.Errorf("check does not name %s as no-expiry:\n%s", name, out)
		}
	}
	if strings.Contains(out, "quota:fix") || strings.Contains(out, "PEXPIRE quota:") && !strings.Contains(out, "HPEXPIRE quota:") {
		t.Errorf("check flags the right client, or advises a key's TTL:\n%s", out)
	}

	code, out, errOut = cli(t, s, append([]string{"check", "--format", "json"}, args...)...)
	wantRun(t, code, out, errOut, exitProblems, "", "")
	var doc struct {
		Problems []struct {
			Key    string `json:"key"`
			Field  string `json:"field"`
			Reason string `json:"reason"`
		} `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, p := range doc.Problems {
		named = append(named, p.Key+" › "+p.Field)
		if !strings.Contains(p.Reason, "HPEXPIRE "+p.Key+" 60000 NX FIELDS 1 "+p.Field) {
			t.Errorf("%s › %s: reason %q does not name the field's repair", p.Key, p.Field, p.Reason)
		}
	}
	if !slices.Equal(named, lost) {
		t.Errorf("check JSON's problems are %q, want %q", named, lost)
	}

	code, out, errOut = cli(t, s, append([]string{"repair", "--dry-run"}, args...)...)
	wantRun(t, code, out, errOut, exitOK, "would repair fq:hset › api: TTL 1m00s\nwould repair quota:bug › login: TTL 1m00s\nwould repair quota:hset › api: TTL 1m00s\ndry run: 3 to repair, 0 skipped", "")

	code, out, errOut = cli(t, s, append([]string{"snapshot", "--format", "csv"}, args...)...)
	wantRun(t, code, out, errOut, exitOK, "", "")
	records, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	head := records[0]
	col := func(name string) int { return slices.Index(head, name) }
	got := map[string]string{}
	for _, r := range records[1:] {
		ttl, _ := strconv.ParseInt(r[col("ttl_ms")], 10, 64)
		state := "no TTL"
		if ttl > 0 && ttl <= 60000 {
			state = "its own TTL"
		}
		got[r[col("key")]+" › "+r[col("field")]] = r[col("status")] + ", " + state
	}
	want := map[string]string{
		"quota:fix › api": "ok, its own TTL", "quota:fix › login": "ok, its own TTL",
		"quota:bug › api": "ok, its own TTL", "quota:bug › login": "no-expiry, no TTL",
		"quota:hset › api": "no-expiry, no TTL", "quota:hset › login": "ok, its own TTL",
		"fq:hset › api": "no-expiry, no TTL",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("snapshot CSV rows %v\nwant %v", got, want)
	}
}

// What incr says it sent to a field with a TTL of its own is what the
// server ran, the field's HPEXPIRE ... NX with the HINCRBY; --no-expire
// sends the HINCRBY alone, and says the field is left without a TTL.
func TestIncrFieldWithItsOwnTTLSaysWhatItSent(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")
	for _, tc := range []struct {
		args            []string
		line, sent, err string
	}{
		{[]string{"--field", "login", "--window", "60s"}, "quota:u1 › login = 4; the field had no TTL, now 1m00s",
			"HINCRBY quota:u1 login 1, HPEXPIRE quota:u1 60000 NX FIELDS 1 login", ""},
		{[]string{"--field", "x", "--no-expire"}, "quota:u1 › x = 1 (no TTL on the field)",
			"HINCRBY quota:u1 x 1", "warning: quota:u1 › x has no TTL, on purpose (--no-expire)"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			mon := s.Monitor(t)
			code, out, errOut := cli(t, s, append([]string{"incr", "quota:u1"}, tc.args...)...)
			wantRun(t, code, out, errOut, exitOK, tc.line+"\nsent "+tc.sent+"\n", tc.err)
			s.Do(t, "ECHO", "writes end here")
			var writes []string
			for _, r := range mon.Until(t, "ECHO") {
				switch strings.ToUpper(r.Args[0]) {
				case "HINCRBY", "HPEXPIRE", "PEXPIRE", "EXPIRE", "HEXPIRE":
					writes = append(writes, strings.Join(r.Args, " "))
				}
			}
			if strings.Join(writes, ", ") != tc.sent {
				t.Errorf("incr said it sent %q; the server ran %q", tc.sent, writes)
			}
		})
	}
	if p := s.Do(t, "PTTL", "quota:u1").(int64); p != -1 {
		t.Errorf("the hash got a TTL of %dms: every field would go with it", p)
	}
}

// bigHash gives s the hash quota:big of n fields, each holding its
// number, and a TTL of a minute to each but the last lost of them, as
// HSET clears a field's TTL.
func bigHash(t *testing.T, s *redistest.Server, n, lost int) {
	t.Helper()
	set := []any{"HSET", "quota:big"}
	expire := []any{"HPEXPIRE", "quota:big", "60000", "FIELDS", n - lost}
	for i := range n {
		set = append(set, fmt.Sprintf("f%03d", i), i)
		if i < n-lost {
			expire = append(expire, fmt.Sprintf("f%03d", i))
		}
	}
	s.Do(t, set...)
	s.Do(t, expire...)
}

// check with --max-fields below a hash's size says how many more fields
// there are and how many of them hold a number without a TTL, which fails
// it: each keeps the hash alive.
func TestCheckCountsFieldsNotShown(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	bigHash(t, s, 500, 3)
	code, out, errOut := cli(t, s, "check", "--pattern", "quota:*", "--limit", "1000", "--window", "60s", "--max-fields", "10")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	shownLost := strings.Count(out, "no-expiry  quota:big › ")
	want := fmt.Sprintf("no-expiry  quota:big  490 more fields not shown, %d of them numbers without a TTL", 3-shownLost)
	if shownLost == 3 {
		want = "note       quota:big  490 more fields not shown, none of them a number without a TTL"
	}
	if !strings.Contains(out, want) {
		t.Errorf("check does not say %q:\n%s", want, out)
	}
}

// With several servers, check counts each one's fields beyond
// --max-fields on that server and names it: a hash of one name on two
// servers is a line of each, eu's fields all with a TTL (a note), us's
// with two lost (a problem, shown or not).
func TestCheckCountsFieldsNotShownOnEachServer(t *testing.T) {
	t.Parallel()
	eu, us := redistest.Start(t), redistest.Start(t)
	eu.RequireFieldTTL(t)
	us.RequireFieldTTL(t)
	bigHash(t, eu, 50, 0)
	bigHash(t, us, 50, 2)
	config := serversConfig(t, []*redistest.Server{eu, us}, []string{"eu", "us"}, "")
	args := []string{"--config", config, "--pattern", "quota:*", "--limit", "1000", "--window", "60s", "--max-fields", "10"}

	code, out, errOut := runIn(append([]string{"check"}, args...)...)
	wantRun(t, code, out, errOut, exitProblems, "", "")
	shownLost := 0
	lines := map[string]string{} // server: its line about the fields not shown
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) > 3 && f[0] == "no-expiry" && f[2] == "quota:big" && f[3] == "›":
			if f[1] != "us" {
				t.Errorf("a field without a TTL on %s, want us: %s", f[1], line)
			}
			shownLost++
		case len(f) > 3 && f[2] == "quota:big" && f[3] == "40":
			lines[f[1]] = f[0] + " " + strings.Join(f[3:], " ")
		}
	}
	wantUS := fmt.Sprintf("no-expiry 40 more fields not shown, %d of them numbers without a TTL:", 2-shownLost)
	if shownLost == 2 {
		wantUS = "note 40 more fields not shown, none of them a number without a TTL"
	}
	if eu := lines["eu"]; eu != "note 40 more fields not shown, none of them a number without a TTL" || !strings.HasPrefix(lines["us"], wantUS) {
		t.Errorf("check's lines about the fields not shown: eu %q, us %q; want eu's note and us %q:\n%s", eu, lines["us"], wantUS, out)
	}

	code, out, errOut = runIn(append([]string{"check", "--format", "json"}, args...)...)
	wantRun(t, code, out, errOut, exitProblems, "", "")
	var doc struct {
		NotShown []struct {
			Key        string `json:"key"`
			Server     string `json:"server"`
			Fields     int64  `json:"fields"`
			WithoutTTL int64  `json:"without_ttl"`
		} `json:"fields_not_shown"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	got := fmt.Sprint(doc.NotShown)
	if want := fmt.Sprint([]struct {
		Key, Server        string
		Fields, WithoutTTL int64
	}{{"quota:big", "eu", 40, 0}, {"quota:big", "us", 40, int64(2 - shownLost)}}); got != want {
		t.Errorf("fields_not_shown %s, want %s", got, want)
	}
}

// check --watch reads through the dashboard's Store, which holds such a
// hash as a row a field too: it names the same field, with the same
// repair, and snapshot --watch gives each field's row its own ttl_ms.
func TestCheckWatchReadsHashFieldsWithTTLs(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.RequireFieldTTL(t)
	s.Do(t, "HSET", "quota:u1", "api", "17", "login", "3")
	s.Do(t, "HPEXPIRE", "quota:u1", "60000", "FIELDS", "1", "api")

	code, out, errOut := cli(t, s, "check", "--pattern", "quota:*", "--limit", "10", "--window", "60s", "--watch", "1s", "--interval", "200ms", "--mode", "poll")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	if !strings.Contains(out, "no-expiry  quota:u1 › login") || !strings.Contains(out, "HPEXPIRE quota:u1 60000 NX FIELDS 1 login") || strings.Contains(out, " PEXPIRE ") {
		t.Errorf("check --watch must name quota:u1 › login as no-expiry, repaired by HPEXPIRE of that field:\n%s", out)
	}

	code, out, errOut = cli(t, s, "snapshot", "--pattern", "quota:*", "--limit", "10", "--window", "60s", "--watch", "1s", "--interval", "200ms", "--mode", "poll", "--format", "json")
	wantRun(t, code, out, errOut, exitOK, "", "")
	var snap struct {
		Counters []struct {
			Key   string  `json:"key"`
			Field *string `json:"field"`
			TTLms int64   `json:"ttl_ms"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	got := map[string]int64{}
	for _, c := range snap.Counters {
		if c.Field != nil {
			got[c.Key+" › "+*c.Field] = c.TTLms
		}
	}
	if api, login := got["quota:u1 › api"], got["quota:u1 › login"]; len(got) != 2 || api <= 0 || api > 60000 || login != -1 {
		t.Errorf("snapshot --watch rows %v; want api's own TTL and login's none (-1)", got)
	}
}
