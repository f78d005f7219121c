package cli

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

// The snapshot's JSON says what issue 29's shapes are: a window named by
// its start in ns, a block flag (no value; over while it lives, stuck
// without a TTL), and counts inside JSON and gofiber's msgpack.
func TestSnapshotJSONReadsTheSecondRound(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	start := time.Now().Add(-20 * time.Minute).Truncate(time.Minute).UnixNano()
	past := "ratelimit:{fw}" + strconv.FormatInt(start, 10)
	s.Do(t, "SET", past, "4")
	s.Do(t, "SET", "ratelimit:login:u7:blocked", "1", "EX", "300")
	s.Do(t, "SET", "ratelimit:login:u8:blocked", "1")
	s.Do(t, "SET", "ratelimit:json:u7", `{"count":42,"firstRequest":1796160050000}`, "EX", "60")
	// gofiber's limiter: a fixmap of currHits 3, prevHits 9 and exp.
	s.Do(t, "SET", "ratelimit:fiber:127.0.0.1", "\x83\xa8currHits\x03\xa8prevHits\x09\xa3exp\xce\x6b\x0e\x3a\xf8", "EX", "60")

	code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--format", "json")
	if code != exitOK || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
	byKey := snapshotRows(t, out)
	want := map[string]map[string]string{
		past:                         {"layout": `"window"`, "value": "4", "ttl_ms": "-1", "status": `"leak"`},
		"ratelimit:login:u7:blocked": {"layout": `"block"`, "value": "null", "remaining": "0", "status": `"over"`},
		"ratelimit:login:u8:blocked": {"layout": `"block"`, "value": "null", "ttl_ms": "-1", "status": `"stuck"`},
		"ratelimit:json:u7":          {"layout": `"counter"`, "value": "42", "remaining": "58", "status": `"ok"`},
		"ratelimit:fiber:127.0.0.1":  {"layout": `"counter"`, "value": "3", "remaining": "97", "status": `"ok"`},
	}
	wantRows(t, out, byKey, want)
}

// snapshotRows is the counters of a snapshot's JSON by key, each field's
// value as JSON writes it.
func snapshotRows(t *testing.T, out string) map[string]map[string]string {
	t.Helper()
	var snap struct {
		TakenAt  string                       `json:"taken_at"`
		Counters []map[string]json.RawMessage `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	byKey := map[string]map[string]string{}
	for _, c := range snap.Counters {
		var key string
		json.Unmarshal(c["key"], &key)
		byKey[key] = map[string]string{}
		for f, v := range c {
			byKey[key][f] = string(v)
		}
	}
	return byKey
}

// wantRows checks that each key of want is among the rows of a snapshot's
// JSON (out, read as snapshotRows reads it) with the fields want gives it.
func wantRows(t *testing.T, out string, byKey, want map[string]map[string]string) {
	t.Helper()
	for key, fields := range want {
		row, ok := byKey[key]
		if !ok {
			t.Errorf("key %q missing from the snapshot:\n%s", key, out)
			continue
		}
		for f, v := range fields {
			if row[f] != v {
				t.Errorf("%q: %s = %s, want %s", key, f, row[f], v)
			}
		}
	}
}
