package cli

import (
	"encoding/json"
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
