package cli

import (
	"bytes"
	"net"
	"strings"
	"testing"

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
	wantRun(t, code, out, errOut, exitOK, "ok: no key matches ratelimt:*; if you expected some, check --pattern and --url\n", "")
	code, out, errOut = cli(t, s, "check", "--pattern", "zz\x1b]0;title\a*")
	wantRun(t, code, out, errOut, exitOK, "ok: no key matches zz\\e]0;title\\x07*;", "")

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
}
