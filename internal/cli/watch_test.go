package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

// hit is what a limiter sends on every hit: INCR, then EXPIRE key 2 (a
// window short enough for a test to watch past), with NX or (the bug)
// without.
func hit(key string, nx bool) [][]any { return hitFor(key, "2", nx) }

// hitFor is hit with a TTL of secs seconds.
func hitFor(key, secs string, nx bool) [][]any {
	expire := []any{"EXPIRE", key, secs}
	if nx {
		expire = append(expire, "NX")
	}
	return [][]any{{"INCR", key}, expire}
}

// waitExist waits until every key exists, as the clients of Repeat make
// them.
func waitExist(t *testing.T, s *redistest.Server, keys ...string) {
	t.Helper()
	args := []any{"EXISTS"}
	for _, k := range keys {
		args = append(args, k)
	}
	for deadline := time.Now().Add(10 * time.Second); s.Do(t, args...).(int64) != int64(len(keys)); {
		if time.Now().After(deadline) {
			t.Fatalf("%q were not all made within 10s", keys)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// check --watch sees what one pass cannot: a client that pushes its
// key's TTL back on every hit, watched for longer than its window (2 s,
// as --window says for keys no rule covers), is extending (exit 1), in every mode; one that uses
// NX, and a log whose deadline moves by design, are not.
func TestCheckWatchFindsExtending(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"poll", "events", "tracking"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s := redistest.Start(t, "--notify-keyspace-events", "K$gxe")
			s.Repeat(t, 200*time.Millisecond, hit("rl:api:pushed", false)...)
			s.Repeat(t, 200*time.Millisecond, hit("rl:api:nx", true)...)
			s.Repeat(t, 200*time.Millisecond,
				[]any{"ZADD", "rl:log:1", "1", "a"}, []any{"ZINCRBY", "rl:log:1", "1", "a"}, []any{"EXPIRE", "rl:log:1", "10"})

			waitExist(t, s, "rl:api:pushed", "rl:api:nx", "rl:log:1")
			// One pass reads each key once: nothing to see yet.
			code, out, errOut := cli(t, s, "check", "--pattern", "rl:*")
			wantRun(t, code, out, errOut, exitOK, "ok: 3 keys checked, no counter stuck or without expiry\n", "")

			code, out, errOut = cli(t, s, "check", "--pattern", "rl:*", "--window", "2s", "--watch", "6s", "--interval", "200ms", "--mode", mode)
			wantRun(t, code, out, errOut, exitProblems, "", "")
			lines := strings.Split(strings.TrimSpace(out), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], "extending  rl:api:pushed  counter    value ") ||
				!strings.Contains(lines[0], "TTL pushed back while it grew for longer than its window: it never closes; fix the client: EXPIRE ... NX") ||
				lines[1] != "problems: 1 of 3 keys watched for 6.0s (1 extending)" {
				t.Errorf("want the pushed counter extending, alone, then the count:\n%s", out)
			}
		})
	}
}

// A watch shorter than the window (10 s) of a key pushed back as it grows cannot
// tell whether it is extending: it says so, key by key and in its last
// line, and how long a watch would tell, and exits 2 rather than passing;
// the JSON says could-not-tell. Keys that keep their deadline (NX) do not
// hold it up.
func TestCheckWatchTooShortToTell(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Repeat(t, 200*time.Millisecond, hitFor("rl:api:pushed", "10", false)...)
	s.Repeat(t, 200*time.Millisecond, hitFor("rl:api:nx", "10", true)...)
	waitExist(t, s, "rl:api:pushed", "rl:api:nx")

	code, out, errOut := cli(t, s, "check", "--pattern", "rl:*", "--window", "10s", "--watch", "3s", "--interval", "200ms", "--mode", "poll")
	wantRun(t, code, out, errOut, exitFailed, "", "")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "undecided  rl:api:pushed  counter    value ") ||
		!strings.Contains(lines[0], "as it grows: extending if it keeps growing past its window of 10s, which a watch of 3.0s is too short to see; watch for 12s or more to know") ||
		lines[1] != "could not tell: 2 keys watched for 3.0s, no counter stuck, extending or without expiry, but 1 key is pushed back as it grows, watched for less than its window: watch for 12s or more to know whether it is extending" {
		t.Errorf("want the pushed counter undecided, alone, then could not tell:\n%s", out)
	}

	code, out, errOut = cli(t, s, "check", "--pattern", "rl:*", "--window", "10s", "--watch", "3s", "--interval", "200ms", "--mode", "poll", "--format", "json")
	wantRun(t, code, out, errOut, exitFailed, "", "")
	var doc struct {
		Verdict   string
		ExitCode  int `json:"exit_code"`
		Undecided []struct {
			Key    string
			Pushes int
			WatchS float64 `json:"watch_s"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if doc.Verdict != "could-not-tell" || doc.ExitCode != 2 || len(doc.Undecided) != 1 || doc.Undecided[0].Key != "rl:api:pushed" || doc.Undecided[0].Pushes < 1 || doc.Undecided[0].WatchS != 12 {
		t.Errorf("want verdict could-not-tell, exit_code 2, the pushed key undecided with a watch_s of 12:\n%s", out)
	}
}

// snapshot --watch gives each key's status as watched, in every format:
// the client that pushes its TTL back on every hit is extending, the one
// with NX is not; the JSON says how long it watched, and a snapshot
// without --watch, which cannot see extending, says 0.
func TestSnapshotWatch(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Repeat(t, 200*time.Millisecond, hit("rl:api:pushed", false)...)
	s.Repeat(t, 200*time.Millisecond, hit("rl:api:nx", true)...)
	waitExist(t, s, "rl:api:pushed", "rl:api:nx")

	type doc struct {
		WatchedS *float64 `json:"watched_s"`
		Counters []struct{ Key, Status string }
	}
	statuses := func(out string) (map[string]string, *float64) {
		t.Helper()
		var snap doc
		if err := json.Unmarshal([]byte(out), &snap); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		got := map[string]string{}
		for _, c := range snap.Counters {
			got[c.Key] = c.Status
		}
		return got, snap.WatchedS
	}
	code, out, errOut := cli(t, s, "snapshot", "--format", "json", "--pattern", "rl:*")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if got, watched := statuses(out); len(got) != 2 || got["rl:api:pushed"] == "extending" || watched == nil || *watched != 0 {
		t.Errorf("one pass: statuses %v, watched_s %v; want none extending (one reading cannot tell), and 0", got, watched)
	}

	code, out, errOut = cli(t, s, "snapshot", "--format", "json", "--pattern", "rl:*", "--window", "2s", "--watch", "6s", "--interval", "200ms", "--mode", "poll")
	wantRun(t, code, out, errOut, exitOK, "", "")
	if got, watched := statuses(out); len(got) != 2 || got["rl:api:pushed"] != "extending" || got["rl:api:nx"] != "ok" || watched == nil || *watched != 6 {
		t.Errorf("statuses %v, watched_s %v; want pushed extending, nx ok, and 6", got, watched)
	}

	for _, format := range []string{"table", "csv"} {
		t.Run(format, func(t *testing.T) {
			code, out, errOut = cli(t, s, "snapshot", "--format", format, "--pattern", "rl:*", "--window", "2s", "--watch", "6s", "--interval", "200ms", "--mode", "tracking")
			wantRun(t, code, out, errOut, exitOK, "", "")
			got := map[string]string{}
			for _, line := range strings.Split(strings.TrimSpace(out), "\n")[1:] {
				fields := strings.FieldsFunc(line, func(r rune) bool { return r == ' ' || r == ',' })
				if len(fields) > 1 {
					status := fields[len(fields)-1]
					if format == "csv" {
						status = fields[len(fields)-3] // raw_truncated and server are last
					}
					got[fields[0]] = status
				}
			}
			if len(got) != 2 || got["rl:api:pushed"] != "extending" || got["rl:api:nx"] != "ok" {
				t.Errorf("--format %s: statuses %v, want pushed extending and nx ok:\n%s", format, got, out)
			}
		})
	}
}

// --watch's flags are refused where they would change nothing, and a
// watch out of bounds is one sentence.
func TestWatchFlags(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"check", "--interval", "200ms"}, "countertop: --interval only matters with --watch, which re-reads the keys: add --watch DURATION (like --watch 10s), or leave --interval out\n"},
		{[]string{"snapshot", "--mode", "poll"}, "countertop: --mode only matters with --watch, which re-reads the keys: add --watch DURATION (like --watch 10s), or leave --mode out\n"},
		{[]string{"check", "--watch", "48h"}, "countertop: --watch 48h0m0s is not a time to watch for: use a duration up to 24h, like 10s\n"},
		{[]string{"repair", "--watch", "1s"}, "countertop: unknown flag --watch"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, s, tc.args...)
			if code != exitFailed || !strings.HasPrefix(errOut, tc.err) || strings.Contains(out, "ok:") {
				t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tc.args, code, errOut, tc.err)
			}
		})
	}
}

// A watch that loses Redis could not check (exit 2), in JSON too.
func TestCheckWatchLosesRedis(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:1", "1", "EX", "100")
	mon := s.Monitor(t)
	type result struct {
		code        int
		out, errOut string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errOut := cli(t, s, "check", "--format", "json", "--watch", "5s", "--interval", "100ms", "--mode", "poll")
		done <- result{code, out, errOut}
	}()
	mon.Next(t, "PTTL") // the watch has read the key: it is under way
	s.Stop()
	r := <-done
	if r.code != exitFailed || !strings.Contains(r.out, `"verdict": "could-not-check"`) || !strings.HasPrefix(r.errOut, "countertop: could not check: after watching for 5.0s: could not connect to ") ||
		strings.Contains(r.errOut, "keeps trying") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant 2, could-not-check, and why", r.code, r.out, r.errOut)
	}
}

// A watch that cannot start could not check, with why and what to do.
func TestCheckWatchWithoutNotifications(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t) // notify-keyspace-events is off
	code, out, errOut := cli(t, s, "check", "--watch", "1s", "--mode", "events")
	if code != exitFailed || out != "" || !strings.HasPrefix(errOut, "countertop: could not check: keyspace notifications are off") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant 2 and why, in one line", code, out, errOut)
	}
}
