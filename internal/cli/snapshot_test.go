package cli

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

func TestSnapshotJSON(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	s.Do(t, "SET", "ratelimit:api:stuck", "9223372036854775807")
	s.Do(t, "SET", "ratelimit:api:\x1b[2J\xff", "3", "EX", "100")
	s.Do(t, "HSET", "ratelimit:config", "owner", "team-a")
	s.Do(t, "HSET", "ratelimit:fields", "login", "3", "api", "7") // HINCRBY per field
	s.Do(t, "SET", "views:home", "42")
	s.Do(t, "SET", "other:thing", "1") // matches no pattern

	code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--pattern", "views:*", "--format", "json")
	if code != exitOK || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
	byKey := snapshotRows(t, out)
	if len(byKey) != 6 {
		t.Fatalf("want the 6 matching keys, got %d:\n%s", len(byKey), out)
	}
	want := map[string]map[string]string{
		"ratelimit:api:ok": {"type": `"string"`, "layout": `"counter"`, "value": "17", "remaining": "83", "raw": `"17"`,
			"limit": "100", "window_s": "60", "rule": `"ratelimit:*"`, "status": `"ok"`},
		"ratelimit:api:stuck":                 {"value": "9223372036854775807", "remaining": "0", "ttl_ms": "-1", "status": `"stuck"`},
		`ratelimit:api:` + "\x1b[2J" + `\xff`: {"status": `"ok"`},
		"ratelimit:config":                    {"type": `"hash"`, "layout": `"other"`, "value": "null", "remaining": "null", "raw": "null", "status": `"not-counter"`},
		"ratelimit:fields":                    {"type": `"hash"`, "layout": `"counter"`, "value": "7", "remaining": "93", "raw": "null", "status": `"no-expiry"`},
		"views:home":                          {"ttl_ms": "-1", "limit": "null", "window_s": "null", "rule": `"views:*"`, "status": `"ok"`},
	}
	wantRows(t, out, byKey, want)
	if ttl := byKey["ratelimit:api:ok"]["ttl_ms"]; ttl == "-1" || strings.Contains(ttl, ".") {
		t.Errorf("ttl_ms of a key with EX 100 is %s; want whole milliseconds left", ttl)
	}
	if !strings.Contains(out, `\u001b[2J\\xff`) {
		t.Errorf("the escape must be a JSON \\u escape and the invalid byte \\\\xff:\n%s", out)
	}
}

// Two patterns that both match most keys, the first with a [range] (which
// the walk cannot filter by): the output holds every key once, in key order.
func TestSnapshotEachKeyOnceInKeyOrder(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	args := []any{"MSET"}
	for i := range 300 {
		args = append(args, fmt.Sprintf("rl:%03d", 299-i), i)
	}
	s.Do(t, args...)
	code, out, errOut := cli(t, s, "snapshot", "--pattern", "rl:[0-1]*", "--pattern", "rl:*", "--format", "csv")
	if code != exitOK || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:]
	if len(lines) != 300 {
		t.Fatalf("%d rows for 300 keys:\n%s", len(lines), out)
	}
	for i, l := range lines {
		if want := fmt.Sprintf("rl:%03d,", i); !strings.HasPrefix(l, want) {
			t.Fatalf("row %d is %q, want the row of %s", i, l, strings.TrimSuffix(want, ","))
		}
	}
}

// snapshot, check and repair list keys as the dashboard does, numbers by
// their value: ratelimit:user:2 before ratelimit:user:10, where byte order
// would put it after ratelimit:user:10 and ratelimit:user:100.
func TestSnapshotCheckAndRepairListKeysInTheDashboardsOrder(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	want := []string{"ratelimit:user:1", "ratelimit:user:2", "ratelimit:user:10", "ratelimit:user:20", "ratelimit:user:100"}
	for _, key := range []int{100, 20, 10, 2, 1} {
		s.Do(t, "SET", fmt.Sprintf("ratelimit:user:%d", key), "3") // no TTL: a problem check and repair list
	}
	listed := func(out string, field int, prefix string) []string {
		var keys []string
		for _, l := range strings.Split(out, "\n") {
			if f := strings.FieldsFunc(l, func(r rune) bool { return r == ' ' || r == ',' }); len(f) > field && strings.HasPrefix(l, prefix) {
				keys = append(keys, strings.TrimSuffix(f[field], ":"))
			}
		}
		return keys
	}
	for _, run := range []struct {
		args   []string
		field  int
		prefix string
		code   int
	}{
		{[]string{"snapshot", "--format", "csv"}, 0, "ratelimit:", exitOK},
		{[]string{"snapshot"}, 0, "ratelimit:", exitOK},
		{[]string{"check"}, 1, "no-expiry", exitProblems},
		{[]string{"repair", "--dry-run"}, 2, "would repair", exitOK},
	} {
		code, out, errOut := cli(t, s, run.args...)
		if code != run.code {
			t.Fatalf("%s exited %d: %s", run.args, code, errOut)
		}
		if got := listed(out, run.field, run.prefix); !slices.Equal(got, want) {
			t.Errorf("%s lists %q, want %q:\n%s", run.args, got, want, out)
		}
	}
}

func TestSnapshotTableAndCSVAreSafeForTerminals(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:\x1b]0;pwned\x07", "5", "EX", "100")
	for _, format := range []string{"table", "csv"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--format", format)
			if code != exitOK {
				t.Fatalf("%s: exit %d: %s", format, code, errOut)
			}
			if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `ratelimit:\e]0;pwned\x07`) {
				t.Errorf("%s output does not escape the key name:\n%q", format, out)
			}
		})
	}
	code, _, errOut := cli(t, s, "snapshot", "--format", "xml")
	if code != exitFailed || !strings.Contains(errOut, "xml") {
		t.Errorf("--format xml: exit %d, %q", code, errOut)
	}
}

// A string longer than what is read of it is said to be cut, in every
// format; a string that is read whole is not.
func TestSnapshotSaysRawIsCut(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:huge", strings.Repeat("x", 100_000), "EX", "100")
	s.Do(t, "SET", "ratelimit:small", "5", "EX", "100")

	code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--format", "json")
	if code != exitOK || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
	var snap struct {
		Counters []struct {
			Key          string `json:"key"`
			Raw          string `json:"raw"`
			RawTruncated *bool  `json:"raw_truncated"`
		} `json:"counters"`
	}
	if err := json.Unmarshal([]byte(out), &snap); err != nil || len(snap.Counters) != 2 {
		t.Fatalf("not the 2 counters (%v):\n%.500s", err, out)
	}
	huge, small := snap.Counters[0], snap.Counters[1]
	if huge.RawTruncated == nil || !*huge.RawTruncated || len(huge.Raw) >= 100_000 || !strings.HasPrefix(strings.Repeat("x", 100_000), huge.Raw) {
		t.Errorf("the 100,000-byte string: raw of %d bytes, raw_truncated %v; want its start and true", len(huge.Raw), huge.RawTruncated)
	}
	if small.RawTruncated == nil || *small.RawTruncated {
		t.Errorf("a string read whole has raw_truncated %v, want false", small.RawTruncated)
	}

	code, out, _ = cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--format", "csv")
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	server := "," + s.Addr // the one server's name: its host:port
	if code != exitOK || len(lines) != 3 || !strings.HasSuffix(lines[0], ",raw_truncated,server") ||
		!strings.HasSuffix(lines[1], ",true"+server) || !strings.HasSuffix(lines[2], ",false"+server) {
		t.Errorf("CSV does not say which raw is cut:\n%.300s", out)
	}

	code, out, _ = cli(t, s, "snapshot", "--pattern", "ratelimit:*")
	lines = strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if code != exitOK || len(lines) != 3 || !strings.Contains(lines[1], "… (read in part)") || strings.Contains(lines[2], "read in part") {
		t.Errorf("the table does not mark the value that was cut:\n%s", out)
	}
}
