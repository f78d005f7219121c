package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/countertop/countertop/internal/redistest"
)

func TestCheckExitCodes(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	s.Do(t, "SET", "views:home", "42") // expect_ttl = false: never a problem

	code, out, errOut := cli(t, s, "check", "--pattern", "ratelimit:*", "--pattern", "views:*")
	wantRun(t, code, out, errOut, exitOK, "ok: 2 keys checked, no counter stuck or without expiry\n", "")

	// A pattern that matches nothing is healthy, but a monitor with a
	// typo in it would stay green forever: the output says so.
	code, out, errOut = cli(t, s, "check", "--pattern", "ratelimt:*")
	wantRun(t, code, out, errOut, exitOK, "unmatched  ratelimt:*  no key matches this pattern; if you expected some, check --pattern and --url (--min-keys 1 makes this a problem)\n"+
		"ok: 0 keys checked, no counter stuck or without expiry; 1 of 1 pattern matched nothing\n", "")
	code, out, errOut = cli(t, s, "check", "--pattern", "zz\x1b]0;title\a*")
	wantRun(t, code, out, errOut, exitOK, "unmatched  zz\\e]0;title\\x07*  no key matches", "")

	s.Do(t, "SET", "ratelimit:api:stuck", "150")
	s.Do(t, "SET", "ratelimit:api:fresh", "3")
	code, out, errOut = cli(t, s, "check", "--pattern", "ratelimit:*", "--pattern", "views:*")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "stuck      ratelimit:api:stuck") || !strings.HasPrefix(lines[1], "no-expiry  ratelimit:api:fresh") ||
		lines[2] != "problems: 2 of 4 keys checked (1 stuck, 1 no-expiry)" {
		t.Errorf("want a line per problem counter, the stuck one first, then their count:\n%s", out)
	}
}

// Each pattern that matches nothing is named on its own line, among
// patterns that do match; --min-keys makes that a problem, and a pattern
// with fewer keys than it asks for too.
func TestCheckPatternsThatMatchNothing(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:a", "1", "EX", "100")
	s.Do(t, "SET", "ratelimit:api:b", "2", "EX", "100")
	s.Do(t, "SET", "views:home", "42")
	patterns := []string{"--pattern", "ratelimit:*", "--pattern", "ratelimt:*", "--pattern", "views:*", "--pattern", "nope\n*"}

	code, out, errOut := cli(t, s, append([]string{"check"}, patterns...)...)
	wantRun(t, code, out, errOut, exitOK, "", "")
	want := []string{
		"unmatched  ratelimt:*  no key matches this pattern; if you expected some, check --pattern and --url (--min-keys 1 makes this a problem)",
		`unmatched  nope\n*  no key matches this pattern; if you expected some, check --pattern and --url (--min-keys 1 makes this a problem)`,
		"ok: 3 keys checked, no counter stuck or without expiry; 2 of 4 patterns matched nothing",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}

	code, out, errOut = cli(t, s, append([]string{"check", "--min-keys", "1"}, patterns...)...)
	wantRun(t, code, out, errOut, exitProblems, "", "")
	want = []string{
		"unmatched  ratelimt:*  no key matches this pattern, and --min-keys wants 1; check --pattern and --url",
		`unmatched  nope\n*  no key matches this pattern, and --min-keys wants 1; check --pattern and --url`,
		"problems: 3 keys checked, no counter stuck or without expiry; 2 of 4 patterns matched fewer keys than --min-keys 1",
	}
	if got := strings.Split(strings.TrimSuffix(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("--min-keys 1: got:\n%s\nwant:\n%s", out, strings.Join(want, "\n"))
	}

	// Per pattern: ratelimit:* has 2 keys, views:* 1; two keys each is
	// asked for.
	code, out, errOut = cli(t, s, "check", "--min-keys", "2", "--pattern", "ratelimit:*", "--pattern", "views:*")
	wantRun(t, code, out, errOut, exitProblems, "too-few    views:*  1 key matches this pattern, and --min-keys wants 2\n"+
		"problems: 3 keys checked, no counter stuck or without expiry; 1 of 2 patterns matched fewer keys than --min-keys 2\n", "")
	code, out, errOut = cli(t, s, "check", "--min-keys", "1", "--pattern", "ratelimit:*", "--pattern", "views:*")
	wantRun(t, code, out, errOut, exitOK, "ok: 3 keys checked, no counter stuck or without expiry\n", "")

	code, out, errOut = cli(t, s, "check", "--min-keys", "-1")
	wantRun(t, code, out, errOut, exitFailed, "", "--min-keys -1 is not a number of keys: use 0 (no minimum) or more")
	code, out, errOut = cli(t, s, "check", "--format", "yaml")
	wantRun(t, code, out, errOut, exitFailed, "", `--format "yaml" is not a format for check: use text or json`)
}

// check --format json is one object with the verdict and exit code, the
// count of each status, each pattern's keys, the patterns that matched
// nothing and the problem counters, names escaped as snapshot's JSON
// escapes them.
func TestCheckJSON(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	s.Do(t, "SET", "ratelimit:api:stuck\x1b[2J\xff", "150")
	s.Do(t, "SET", "views:home", "42")

	type doc struct {
		TakenAt     string         `json:"taken_at"`
		Verdict     string         `json:"verdict"`
		ExitCode    int            `json:"exit_code"`
		KeysChecked int            `json:"keys_checked"`
		MinKeys     int            `json:"min_keys"`
		WatchedS    float64        `json:"watched_s"`
		Statuses    map[string]int `json:"statuses"`
		Patterns    []struct {
			Pattern string `json:"pattern"`
			Keys    int    `json:"keys"`
			Enough  bool   `json:"enough"`
		} `json:"patterns"`
		Unmatched []string                     `json:"unmatched"`
		Problems  []map[string]json.RawMessage `json:"problems"`
		Evictions []struct {
			Server          string `json:"server"`
			EvictedKeys     int64  `json:"evicted_keys"`
			MaxmemoryPolicy string `json:"maxmemory_policy"`
			UptimeS         int64  `json:"uptime_s"`
		} `json:"evictions"`
		Undecided []map[string]json.RawMessage `json:"undecided"`
		NotShown  []map[string]json.RawMessage `json:"fields_not_shown"`
		Error     string                       `json:"error"`
	}
	decode := func(out string) doc {
		t.Helper()
		var d doc
		dec := json.NewDecoder(strings.NewReader(out))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&d); err != nil || dec.More() {
			t.Fatalf("not one JSON object (%v):\n%s", err, out)
		}
		return d
	}

	code, out, errOut := cli(t, s, "check", "--format", "json", "--min-keys", "1",
		"--pattern", "ratelimit:*", "--pattern", "views:*", "--pattern", "typo\x1b*")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	d := decode(out)
	if d.Verdict != "problems" || d.ExitCode != exitProblems || d.KeysChecked != 3 || d.MinKeys != 1 {
		t.Errorf("verdict %q, exit_code %d, keys_checked %d, min_keys %d; want problems, 1, 3, 1", d.Verdict, d.ExitCode, d.KeysChecked, d.MinKeys)
	}
	if want := map[string]int{"stuck": 1, "extending": 0, "no-expiry": 0, "leak": 0, "over": 0, "warn": 0, "ok": 2, "not-counter": 0}; fmt.Sprint(d.Statuses) != fmt.Sprint(want) {
		t.Errorf("statuses = %v, want %v", d.Statuses, want)
	}
	if len(d.Patterns) != 3 || d.Patterns[0].Keys != 2 || !d.Patterns[0].Enough || d.Patterns[1].Keys != 1 ||
		d.Patterns[2].Pattern != "typo\x1b*" || d.Patterns[2].Keys != 0 || d.Patterns[2].Enough {
		t.Errorf("patterns = %+v", d.Patterns)
	}
	if len(d.Unmatched) != 1 || d.Unmatched[0] != "typo\x1b*" {
		t.Errorf("unmatched = %q, want the one pattern that matched nothing", d.Unmatched)
	}
	if len(d.Problems) != 1 {
		t.Fatalf("want the stuck counter as the one problem:\n%s", out)
	}
	var key, reason string
	json.Unmarshal(d.Problems[0]["key"], &key)
	json.Unmarshal(d.Problems[0]["reason"], &reason)
	if key != "ratelimit:api:stuck\x1b[2J\\xff" || string(d.Problems[0]["status"]) != `"stuck"` || string(d.Problems[0]["ttl_ms"]) != "-1" ||
		string(d.Problems[0]["value"]) != "150" || !strings.Contains(reason, "blocked forever") {
		t.Errorf("problem = %s", out)
	}
	if len(d.Evictions) != 1 || d.Evictions[0].Server != s.Addr || d.Evictions[0].EvictedKeys != 0 || d.Evictions[0].MaxmemoryPolicy != "noeviction" {
		t.Errorf("evictions = %+v, want the one server's, none evicted", d.Evictions)
	}
	// Not raw: no ESC, no invalid byte, none replaced by U+FFFD instead of escaped.
	if strings.ContainsAny(out, "\x1b\uFFFD") || !utf8.ValidString(out) || !strings.Contains(out, `"ratelimit:api:stuck\u001b[2J\\xff"`) || !strings.Contains(out, `"typo\u001b*"`) {
		t.Errorf("names are not escaped as snapshot's JSON escapes them:\n%s", out)
	}

	s.Do(t, "EXPIRE", "ratelimit:api:stuck\x1b[2J\xff", "100")
	code, out, errOut = cli(t, s, "check", "--format", "json", "--pattern", "ratelimit:*", "--pattern", "nothing:*")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if d := decode(out); d.Verdict != "healthy" || d.ExitCode != exitOK || len(d.Problems) != 0 || len(d.Unmatched) != 1 || d.Statuses["over"] != 1 {
		t.Errorf("a healthy check with a pattern that matched nothing:\n%s", out)
	}
	if !strings.Contains(out, `"problems": []`) {
		t.Errorf("no problems is an empty array, not null:\n%s", out)
	}
}

func TestCheckCouldNotCheck(t *testing.T) {
	t.Parallel()
	// A port nothing listens on: take a free one and close it.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()

	var out, errOut bytes.Buffer
	code := Run([]string{"check", "--url", "redis://" + addr + "/0", "--config", writeFile(t, "c.toml", writeConfig)}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("check against a closed port exited %d, want %d", code, exitFailed)
	}
	msg := errOut.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "connection refused") || !strings.Contains(msg, addr) {
		t.Errorf("want one sentence naming the address and the refusal, got:\n%s", msg)
	}

	code = Run([]string{"check", "--url", "http://nope"}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("check with a bad URL exited %d, want %d", code, exitFailed)
	}

	// In JSON, a monitor gets the verdict on stdout too.
	out.Reset()
	errOut.Reset()
	code = Run([]string{"check", "--format", "json", "--url", "redis://" + addr + "/0", "--config", writeFile(t, "c.toml", writeConfig)}, &out, &errOut)
	var d struct {
		Verdict  string `json:"verdict"`
		ExitCode int    `json:"exit_code"`
		Error    string `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || code != exitFailed || d.Verdict != "could-not-check" || d.ExitCode != exitFailed ||
		!strings.Contains(d.Error, "connection refused") || strings.Count(errOut.String(), "\n") != 1 {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", code, out.String(), errOut.String())
	}
}

// check names each problem's layout: a past window's key without a TTL is
// a leak, and a log without one is counted inside the rule's window (its
// hits, not its entries), which the reads take from the config.
func TestCheckNamesLayoutsAndLeaks(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	now := time.Now()
	past := "ratelimit:u1:" + strconv.FormatInt(now.Unix()/60-10, 10)
	s.Do(t, "SET", past, "4")
	for i, ago := range []time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 5 * time.Minute} {
		s.Do(t, "ZADD", "ratelimit:log", now.Add(-ago).UnixMilli(), "hit"+strconv.Itoa(i))
	}
	code, out, errOut := cli(t, s, "check", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "no-expiry  ratelimit:log  log        value 3, no TTL") ||
		!strings.HasPrefix(lines[1], "leak       "+past+"  window     value 4 in a past window, no TTL: never read again, never freed") ||
		lines[2] != "problems: 2 of 2 keys checked (1 no-expiry, 1 leak)" {
		t.Errorf("want the log's hits in the window, the leak, then their count:\n%s", out)
	}
}

// What a reading suggests beyond its status is in check's output: a TTL
// of a day under a 60 s rule is a note (the check passes), and a counter
// a DECR made again after it expired is no-expiry with its likely cause.
func TestCheckNotes(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:day", "4", "EX", "86400")
	code, out, errOut := cli(t, s, "check", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitOK, "note       ratelimit:api:day  TTL 23h59m is more than twice its rule's window of 1m00s: likely an expiry set with the wrong number or unit\n"+
		"ok: 1 key checked, no counter stuck or without expiry\n", "")

	s.Do(t, "SET", "ratelimit:api:undo", "3", "PX", "100")
	for deadline := time.Now().Add(10 * time.Second); s.Do(t, "EXISTS", "ratelimit:api:undo").(int64) == 1; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("ratelimit:api:undo did not expire within 10s")
		}
	}
	s.Do(t, "DECR", "ratelimit:api:undo")
	code, out, errOut = cli(t, s, "check", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitProblems, "no-expiry  ratelimit:api:undo  counter    value -1, no TTL: it will never reset; fix: countertop repair, which sends PEXPIRE ratelimit:api:undo 60000 NX (if still a counter without a TTL); "+
		"negative and without a TTL: likely a decrement after the key expired, which DECR starts again from 0 without a TTL\n", "")
}

// A server that evicted keys to stay under its maxmemory is named, with
// how many since it started and its policy, since an evicted counter is a
// rate limit reset early; the verdict stays the counters'.
func TestCheckSaysEvictions(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru")
	s.Do(t, "CONFIG", "SET", "maxmemory", "4mb")
	value := strings.Repeat("x", 2000)
	for i := range 5000 { // 10 MB into 4: thousands evicted
		s.Do(t, "SET", fmt.Sprintf("cache:%d", i), value)
	}
	// LRU's clock ticks once a second, so a key written now is no younger
	// than the cache keys to Redis: lift the limit before writing it, or
	// the check's own commands may evict it. INFO keeps the count.
	s.Do(t, "CONFIG", "SET", "maxmemory", "0")
	s.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	evicted := func(text, before, after string) int {
		t.Helper()
		_, n, _ := strings.Cut(text, before)
		n, _, _ = strings.Cut(n, after)
		v, err := strconv.Atoi(n)
		if err != nil {
			t.Fatalf("no count between %q and %q in:\n%s", before, after, text)
		}
		return v
	}
	least := evicted(s.Do(t, "INFO", "stats").(string), "evicted_keys:", "\r\n")
	if least == 0 {
		t.Fatal("the server evicted nothing: the test needs it to")
	}

	code, out, errOut := cli(t, s, "check", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitOK, " ago (maxmemory-policy allkeys-lru): an evicted rate-limit counter is a limit reset early for its client; "+
		"INFO counts every key there, checked or not; raise maxmemory, or keep the counters where nothing evicts them\n"+
		"ok: 1 key checked, no counter stuck or without expiry\n", "")
	if n := evicted(out, "evicted    "+s.Addr+"  ", " keys evicted since it started "); n < least {
		t.Errorf("check says %d keys evicted; INFO said %d before it ran", n, least)
	}

	code, out, errOut = cli(t, s, "check", "--format", "json", "--pattern", "ratelimit:*")
	wantRun(t, code, out, errOut, exitOK, `,
      "maxmemory_policy": "allkeys-lru",`, "")
	if n := evicted(out, `"evicted_keys": `, ","); n < least {
		t.Errorf("check's JSON says %d keys evicted; INFO said %d before it ran", n, least)
	}
}

// One pass reads a token bucket kept in two strings whole, as the
// dashboard does: a drained one whose TTL was lost is stuck, empty for
// good, not a counter of 0 hits that merely has no expiry; its clock is a
// time, not a GCRA deadline.
func TestCheckReadsATwoStringBucket(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "{tb}available", "0")
	s.Do(t, "SET", "{tb}last", strconv.FormatInt(time.Now().UnixNano(), 10))
	code, out, errOut := cli(t, s, "check", "--pattern", "{tb}*", "--limit", "5", "--window", "60s")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[0], "stuck      {tb}available  bucket     0 tokens left and no TTL") ||
		!strings.HasPrefix(lines[1], "no-expiry  {tb}last  timestamp") {
		t.Errorf("want the tokens stuck and the clock a timestamp without expiry:\n%s", out)
	}
}
