package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

func TestIncrCommand(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)

	code, out, errOut := cli(t, s, "incr", "ratelimit:api:42")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:42 = 1 (TTL 1m00s)\n", "")
	code, out, errOut = cli(t, s, "incr", "ratelimit:api:42", "--by", "16")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:42 = 17 (TTL ", "")
	if ttl := ttlSeconds(t, s, "ratelimit:api:42"); ttl < 50 || ttl > 60 {
		t.Errorf("TTL %ds, want the rule's 60s window", ttl)
	}

	// --window beats the rule; decimals go through INCRBYFLOAT.
	code, out, errOut = cli(t, s, "incr", "--window", "10s", "--by", "2.5", "--allow-float", "ratelimit:float")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:float = 2.5 (TTL 10s)\n", "")
	// A rule that expects no TTL gets none, and no warning.
	code, out, errOut = cli(t, s, "incr", "views:home")
	wantRun(t, code, out, errOut, exitOK, "views:home = 1 (no TTL)\n", "")
	// No rule or --window gives other:* a window; a key that has a TTL
	// needs none, and keeps it.
	set := time.Now()
	s.Do(t, "SET", "other:ttl", "5", "EX", "100")
	code, out, errOut = cli(t, s, "incr", "other:ttl", "--by", "2.5", "--allow-float")
	elapsed := time.Since(set)
	wantRun(t, code, out, errOut, exitOK, "other:ttl = 7.5 (TTL ", "")
	// What is left of the 100s, in whole seconds as shown: time passes
	// between the SET and the read, and a reset TTL would show less.
	if ttl := shownTTL(t, out, "other:ttl = 7.5 (TTL "); ttl > 100*time.Second || ttl < 100*time.Second-elapsed-time.Second-50*time.Millisecond {
		t.Errorf("shown TTL %v, %v after a SET of 100s: the TTL was not kept", ttl, elapsed)
	}
	// Key names are untrusted bytes: escaped on the terminal.
	code, out, errOut = cli(t, s, "incr", "ratelimit:\x1b[31mred")
	wantRun(t, code, out, errOut, exitOK, `ratelimit:\e[31mred = 1`, "")
	if s.Do(t, "EXISTS", "ratelimit:\x1b[31mred") != int64(1) {
		t.Error("the key with an escape in its name was not incremented")
	}
}

// A key whose rule reads a hash field as the counter is incremented as its
// limiter does it: HINCRBY of that field, the hash given the window when it
// has none, in one step. A key that is no hash is left alone, exit 1.
func TestIncrHashField(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "HSET", "fields:42", "login", "3", "api", "7")

	code, out, errOut := cli(t, s, "incr", "fields:42", "--by", "2")
	wantRun(t, code, out, errOut, exitOK, "fields:42 login = 5; it had no TTL, now 1m00s\n", "")
	if got := s.Do(t, "HGET", "fields:42", "login"); got != "5" || s.Do(t, "HGET", "fields:42", "api") != "7" {
		t.Errorf("Redis holds login = %v, api = %v; want 5 and 7", got, s.Do(t, "HGET", "fields:42", "api"))
	}
	if ttl := ttlSeconds(t, s, "fields:42"); ttl < 50 || ttl > 60 {
		t.Errorf("TTL %ds, want the rule's 60s window", ttl)
	}
	code, out, errOut = cli(t, s, "incr", "fields:new")
	wantRun(t, code, out, errOut, exitOK, "fields:new login = 1 (TTL 1m00s)\n", "")

	s.Do(t, "SET", "fields:string", "9")
	code, out, errOut = cli(t, s, "incr", "fields:string")
	wantRun(t, code, out, errOut, exitProblems, "", "HINCRBY fields:string login 1 was not sent: fields:string holds a string, not a hash whose field login counts")
	if s.Do(t, "GET", "fields:string") != "9" {
		t.Error("the string changed")
	}
	// A burst adds to the rule's field, every increment counted.
	code, out, errOut = cli(t, s, "incr", "fields:42", "--count", "10", "--clients", "3")
	wantRun(t, code, out, errOut, exitOK, "fields:42 login = 15 (TTL ", "")
	if !strings.Contains(out, "expected +10, observed +10\n") {
		t.Errorf("the burst did not compare the field:\n%s", out)
	}
	if got := s.Do(t, "HGET", "fields:42", "login"); got != "15" {
		t.Errorf("login holds %v after the burst, want 15", got)
	}
}

// --field names the hash field to add to where no rule does, and beats the
// rule's; one increment or a burst.
func TestIncrFieldFlag(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "HSET", "bucket:7", "login", "3", "api", "7")

	code, out, errOut := cli(t, s, "incr", "bucket:7", "--field", "api", "--window", "30s")
	wantRun(t, code, out, errOut, exitOK, "bucket:7 api = 8; it had no TTL, now 30s\n", "")
	code, out, errOut = cli(t, s, "incr", "bucket:7", "--field", "api", "--count", "5", "--window", "30s")
	wantRun(t, code, out, errOut, exitOK, "bucket:7 api = 13 (TTL ", "")
	if s.Do(t, "HGET", "bucket:7", "login") != "3" {
		t.Error("--field api changed another field")
	}
	// The rule for fields:* reads login; --field adds to another one.
	s.Do(t, "HSET", "fields:9", "login", "1")
	code, out, errOut = cli(t, s, "incr", "fields:9", "--field", "api")
	wantRun(t, code, out, errOut, exitOK, "fields:9 api = 1; it had no TTL, now 1m00s\n", "")
	if s.Do(t, "HGET", "fields:9", "login") != "1" {
		t.Error("--field api added to the rule's field login")
	}

	code, out, errOut = cli(t, s, "incr", "bucket:7", "--field", "")
	wantRun(t, code, out, errOut, exitFailed, "", "--field is empty (an unset variable?)")

	// A field that holds text is refused in one sentence, and left alone.
	s.Do(t, "HSET", "bucket:7", "owner", "ops")
	code, out, errOut = cli(t, s, "incr", "bucket:7", "--field", "owner")
	wantRun(t, code, out, errOut, exitProblems, "", "(the key keeps its value) — the field holds no number Redis can add to")
	if strings.Contains(errOut, "replied with an error") || s.Do(t, "HGET", "bucket:7", "owner") != "ops" {
		t.Errorf("a field holding text: %q, and it holds %v", errOut, s.Do(t, "HGET", "bucket:7", "owner"))
	}
}

// shownTTL is the TTL printed in the line of out that starts with prefix:
// 1m39s in "other:ttl = 7.5 (TTL 1m39s)" for prefix "other:ttl = 7.5 (TTL ".
func shownTTL(t *testing.T, out, prefix string) time.Duration {
	t.Helper()
	for line := range strings.Lines(out) {
		if shown, ok := strings.CutPrefix(line, prefix); ok {
			ttl, err := time.ParseDuration(strings.TrimSuffix(shown, ")\n"))
			if err != nil {
				t.Fatalf("the TTL in %q: %v", line, err)
			}
			return ttl
		}
	}
	t.Fatalf("no line starts with %q in:\n%s", prefix, out)
	return 0
}

func TestIncrCommandErrors(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:max", "9223372036854775807")
	s.Do(t, "HSET", "ratelimit:hash", "f", "1")

	for _, tc := range []struct {
		name    string
		args    []string
		code    int
		wantErr string
	}{
		{"no window known, no TTL", []string{"incr", "other:x"}, exitFailed,
			"countertop: no window for other:x: it has no TTL to keep (or does not exist yet), so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug\n"},
		{"no window known, a burst", []string{"incr", "other:ttl", "--count", "3"}, exitFailed,
			"countertop: no window for other:ttl: a burst needs one, so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug\n"},
		{"overflow", []string{"incr", "ratelimit:max"}, exitProblems,
			"countertop: INCRBY ratelimit:max 1 failed: ERR increment or decrement would overflow (the key keeps its value) — "},
		{"wrong type", []string{"incr", "ratelimit:hash"}, exitProblems, "countertop: INCRBY ratelimit:hash 1 failed: WRONGTYPE"},
		{"read-only", []string{"incr", "--read-only", "ratelimit:new"}, exitProblems,
			"countertop: countertop is read-only (--read-only): INCRBY ratelimit:new 1 was not sent\n"},
		{"bad amount", []string{"incr", "--by", "lots", "ratelimit:new"}, exitFailed, `countertop: --by: "lots" is not an amount`},
		{"hexadecimal amount", []string{"incr", "--by", "0x10", "ratelimit:new"}, exitFailed,
			"countertop: --by: \"0x10\" is not an amount: give an integer like 5 or -1, or a decimal like 2.5\n"},
		{"amount too small to count", []string{"incr", "--by", "2.5e-400", "--allow-float", "ratelimit:new"}, exitFailed,
			"countertop: --by: 2.5e-400 is too small to count: Redis keeps 17 digits after the point, so INCRBYFLOAT would add 0; give at least 0.00000000000000001\n"},
		{"no key", []string{"incr"}, exitFailed, "countertop: incr takes one key: countertop incr KEY"},
		{"empty key", []string{"incr", "", "--window", "1s"}, exitFailed, "countertop: the key name is empty (an unset variable?): countertop incr KEY\n"},
		{"amount beyond 64 bits", []string{"incr", "--by", "9223372036854775808", "ratelimit:new"}, exitFailed,
			"countertop: --by: 9223372036854775808 is beyond what a counter holds (-9223372036854775808 to 9223372036854775807): give an amount in that range\n"},
		{"unknown flag", []string{"incr", "--bogus", "ratelimit:new"}, exitFailed,
			"countertop: unknown flag --bogus: run 'countertop incr --help' for the flags\n"},
		{"contradiction", []string{"incr", "--no-expire", "--window", "5s", "ratelimit:new"}, exitFailed, "give only one of them"},
		{"burst flags without a burst", []string{"incr", "--clients", "5", "ratelimit:new"}, exitFailed, "give its size with --count N"},
		{"bad rate", []string{"incr", "--count", "5", "--rate", "fast", "ratelimit:new"}, exitFailed, `--rate "fast" is not a rate`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := cli(t, s, tc.args...)
			wantRun(t, code, out, errOut, tc.code, "", tc.wantErr)
		})
	}
	if got := s.Do(t, "GET", "ratelimit:max"); got != "9223372036854775807" {
		t.Errorf("the overflowing counter changed to %q", got)
	}
	if s.Do(t, "EXISTS", "ratelimit:new") != int64(0) {
		t.Error("a refused increment created ratelimit:new")
	}
}

// A decimal --by never turns a key holding an integer, or none, into a
// decimal counter, on which the application's INCR fails from then on,
// unless --allow-float says so: without it, nothing is sent, and one
// sentence says why and names the flag.
func TestIncrNeverMakesAnIntegerDecimalUnasked(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:x", "151", "EX", "600")
	for _, tc := range []struct {
		key  string
		args []string
		want string
	}{
		{"ratelimit:x", []string{"--by", "2.5"}, "countertop: INCRBYFLOAT ratelimit:x 2.5 was not sent: ratelimit:x holds 151, an integer, and INCRBYFLOAT would leave a decimal there, on which the application's INCR fails with 'value is not an integer'; pass --allow-float to send it anyway\n"},
		{"ratelimit:new", []string{"--by", "2.5"}, "countertop: INCRBYFLOAT ratelimit:new 2.5 was not sent: ratelimit:new does not exist yet, and INCRBYFLOAT would leave a decimal there, on which the application's INCR fails with 'value is not an integer'; pass --allow-float to send it anyway\n"},
		{"ratelimit:x", []string{"--by", "0.5", "--count", "3"}, "countertop: INCRBYFLOAT ratelimit:x 0.5 was not sent: ratelimit:x holds 151, an integer, and"},
	} {
		t.Run(tc.key+" "+strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := cli(t, s, append([]string{"incr", tc.key}, tc.args...)...)
			wantRun(t, code, out, errOut, exitFailed, "", tc.want)
			if out != "" {
				t.Errorf("%s %v: stdout %q, want nothing", tc.key, tc.args, out)
			}
		})
	}
	if got := s.Do(t, "GET", "ratelimit:x"); got != "151" || s.Do(t, "EXISTS", "ratelimit:new") != int64(0) {
		t.Fatalf("a refused increment changed Redis: ratelimit:x = %q", got)
	}

	// A whole number leaves an integer an integer, however it is written.
	code, out, errOut := cli(t, s, "incr", "ratelimit:x", "--by", "1.0")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:x = 152 (TTL ", "")
	code, out, errOut = cli(t, s, "incr", "ratelimit:x", "--by", "2.5", "--allow-float")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:x = 154.5 (TTL ", "")
	code, out, errOut = cli(t, s, "incr", "ratelimit:x", "--by", "0.125", "--count", "3") // a decimal already
	wantRun(t, code, out, errOut, exitOK, "ratelimit:x = 154.875 (TTL ", "")
}

// countertop incr and the dashboard treat a key alike, by what Redis
// holds: "007" is no integer INCRBY takes, so a whole --by goes to it as
// INCRBYFLOAT, which Redis rewrites as 8, and a decimal one needs no
// --allow-float, as the application's INCR fails on "007" already (ui's
// TestAnIncrementOfAPaddedNumberGoesAsINCRBYFLOAT).
func TestIncrAgreesWithTheDashboard(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:padded", "007", "EX", "600")
	code, out, errOut := cli(t, s, "incr", "ratelimit:padded")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:padded = 8 (TTL ", "")
	s.Do(t, "SET", "ratelimit:padded", "007", "KEEPTTL")
	code, out, errOut = cli(t, s, "incr", "ratelimit:padded", "--by", "2.5")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:padded = 9.5 (TTL ", "")
	if got := s.Do(t, "GET", "ratelimit:padded"); got != "9.5" {
		t.Errorf("Redis holds %q, want 9.5", got)
	}
}

// An increment that gives a counter stuck without a TTL its first one
// says so, from what Redis did: one increment, or a burst.
func TestIncrSaysWhenItGaveTheKeyATTL(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:stuck", "150")
	code, out, errOut := cli(t, s, "incr", "ratelimit:api:stuck")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:stuck = 151; it had no TTL, now 1m00s\n", "")
	code, out, errOut = cli(t, s, "incr", "ratelimit:api:stuck")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:stuck = 152 (TTL ", "")

	s.Do(t, "SET", "ratelimit:api:stuck2", "0")
	code, out, errOut = cli(t, s, "incr", "ratelimit:api:stuck2", "--count", "5")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:stuck2 = 5; it had no TTL, now ", "")
	code, out, errOut = cli(t, s, "incr", "ratelimit:api:new", "--count", "5") // created with it: it never lacked one
	wantRun(t, code, out, errOut, exitOK, "ratelimit:api:new = 5 (TTL ", "")
}

// TestIncrNoExpire is the bug drill: a plain INCRBY leaves a counter with
// no TTL, on purpose, and says so.
func TestIncrNoExpire(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	code, out, errOut := cli(t, s, "incr", "ratelimit:drill", "--no-expire")
	wantRun(t, code, out, errOut, exitOK, "ratelimit:drill = 1 (no TTL)\n",
		"warning: ratelimit:drill has no TTL, on purpose (--no-expire): the immortal-counter bug")
	if ttlSeconds(t, s, "ratelimit:drill") != -1 {
		t.Error("the drilled counter has a TTL")
	}
	// The dashboard's check sees it.
	code, out, _ = cli(t, s, "check")
	if code != exitProblems || !strings.Contains(out, "ratelimit:drill") {
		t.Errorf("check exited %d without naming the drilled key:\n%s", code, out)
	}
}

// TestIncrRace is the race of the counters lesson from the shell: 10000
// increments from 20 connections add exactly 10000.
func TestIncrRace(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	code, out, errOut := cli(t, s, "incr", "ratelimit:race", "--count", "10000", "--clients", "20")
	wantRun(t, code, out, errOut, exitOK, "expected +10000, observed +10000\n", "")
	for _, want := range []string{"fired 10000 of 10000 increments from 20 connections in ", "ratelimit:race = 10000 (TTL "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout:\n%s\nwant %q", out, want)
		}
	}
	if got := s.Do(t, "GET", "ratelimit:race"); got != "10000" {
		t.Errorf("ratelimit:race = %q, want 10000", got)
	}
}

// TestIncrBurstTooLong fires a burst that outlives its window: the totals
// cannot be compared, and it exits 1 saying why.
func TestIncrBurstTooLong(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	code, out, errOut := cli(t, s, "incr", "ratelimit:slow", "--count", "20", "--rate", "100/s", "--window", "50ms")
	wantRun(t, code, out, errOut, exitProblems, "fired 20 of 20 increments from 1 connection in ",
		"countertop: ratelimit:slow expired during the burst and started a new window")
}
