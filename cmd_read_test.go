package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

func TestSnapshotJSON(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	s.Do(t, "SET", "ratelimit:api:stuck", "9223372036854775807")
	s.Do(t, "SET", "ratelimit:api:\x1b[2J\xff", "3", "EX", "100")
	s.Do(t, "HSET", "ratelimit:config", "a", "1")
	s.Do(t, "SET", "views:home", "42")
	s.Do(t, "SET", "other:thing", "1") // matches no pattern

	code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--pattern", "views:*", "--format", "json")
	if code != exitOK || errOut != "" {
		t.Fatalf("snapshot exited %d: %s", code, errOut)
	}
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
		row := map[string]string{}
		for f, v := range c {
			row[f] = string(v)
		}
		byKey[key] = row
	}
	if len(byKey) != 5 {
		t.Fatalf("want the 5 matching keys, got %d:\n%s", len(byKey), out)
	}
	want := map[string]map[string]string{
		"ratelimit:api:ok":                    {"type": `"string"`, "value": "17", "raw": `"17"`, "limit": "100", "window_s": "60", "rule": `"ratelimit:*"`, "status": `"ok"`},
		"ratelimit:api:stuck":                 {"value": "9223372036854775807", "ttl_ms": "-1", "status": `"stuck"`},
		`ratelimit:api:` + "\x1b[2J" + `\xff`: {"status": `"ok"`},
		"ratelimit:config":                    {"type": `"hash"`, "value": "null", "raw": "null", "status": `"not-counter"`},
		"views:home":                          {"ttl_ms": "-1", "limit": "null", "window_s": "null", "rule": `"views:*"`, "status": `"ok"`},
	}
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

func TestSnapshotTableAndCSVAreSafeForTerminals(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:\x1b]0;pwned\x07", "5", "EX", "100")
	for _, format := range []string{"table", "csv"} {
		code, out, errOut := cli(t, s, "snapshot", "--pattern", "ratelimit:*", "--format", format)
		if code != exitOK {
			t.Fatalf("%s: exit %d: %s", format, code, errOut)
		}
		if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `ratelimit:\e]0;pwned\x07`) {
			t.Errorf("%s output does not escape the key name:\n%q", format, out)
		}
	}
	code, _, errOut := cli(t, s, "snapshot", "--format", "xml")
	if code != exitFailed || !strings.Contains(errOut, "xml") {
		t.Errorf("--format xml: exit %d, %q", code, errOut)
	}
}

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
	code := run([]string{"check", "--url", "redis://" + addr + "/0", "--config", writeFile(t, "c.toml", writeConfig)}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("check against a closed port exited %d, want %d", code, exitFailed)
	}
	msg := errOut.String()
	if strings.Count(msg, "\n") != 1 || !strings.Contains(msg, "connection refused") || !strings.Contains(msg, addr) {
		t.Errorf("want one sentence naming the address and the refusal, got:\n%s", msg)
	}

	code = run([]string{"check", "--url", "http://nope"}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("check with a bad URL exited %d, want %d", code, exitFailed)
	}
}

// ctrl+c before Redis answers a snapshot, a check or a repair is one
// sentence, not "context canceled".
func TestReadInterrupted(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := config.Config{Redis: config.Redis{URL: s.URL()}, Patterns: []string{"*"}}
	if _, err := readSorted(ctx, cfg, io.Discard); !errors.Is(err, errConnectInterrupted) {
		t.Errorf("readSorted after ctrl+c: %v, want %q", err, errConnectInterrupted)
	}
}

// countertop version names the build; --help of a subcommand is its usage
// on stderr and exit 0; a bad flag is one line that points at --help.
func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		var out, errOut bytes.Buffer
		// A test binary carries no commit: the line says so rather than
		// leave it out.
		if code := run(args, &out, &errOut); code != exitOK || !strings.HasPrefix(out.String(), "countertop devel (commit unknown), go") || errOut.Len() > 0 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
		}
	}
	// A release (go install ...@v1.2.3) is named by its version, which
	// says which commit it is; a build from a checkout by its commit.
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "504b73e8975d0123456789"}, {Key: "vcs.modified", Value: "true"}}}
	for info, want := range map[*debug.BuildInfo]string{release: "countertop v1.2.3, go1.26.8", checkout: "countertop devel 504b73e8975d (modified), go1.26.8"} {
		if got := versionOf(info); got != want {
			t.Errorf("versionOf(%+v) = %q, want %q", info.Main, got, want)
		}
	}

	var out, errOut bytes.Buffer
	if code := run([]string{"demo", "--help"}, &out, &errOut); code != exitOK || !strings.Contains(errOut.String(), "Usage: countertop demo\n\nOpens the dashboard") {
		t.Errorf("demo --help: exit %d, stderr %q", code, errOut.String())
	}
	errOut.Reset()
	if code := run([]string{"snapshot", "--bogus"}, &out, &errOut); code != exitFailed ||
		errOut.String() != "countertop: flag provided but not defined: -bogus: run 'countertop snapshot --help' for the flags\n" {
		t.Errorf("snapshot --bogus: exit %d, stderr %q", code, errOut.String())
	}
	// A monitor's line with the command after a flag: say where it goes,
	// before connecting anywhere.
	errOut.Reset()
	if code := run([]string{"--url", "redis://127.0.0.1:1/0", "check"}, &out, &errOut); code != exitFailed ||
		errOut.String() != "countertop: \"check\" is a command, and a command goes first: countertop check [flags]\n" {
		t.Errorf("--url ... check: exit %d, stderr %q", code, errOut.String())
	}
}

// A server that accepts and never answers holds a connect until its
// timeout: after half a second countertop says where it is connecting, and
// ctrl+c stops it with one sentence.
func TestConnectSlowThenInterrupted(t *testing.T) {
	t.Parallel()
	addr := redistest.Silent(t)
	url := "redis://" + addr + "/0"
	for _, tc := range []struct {
		redis config.Redis
		says  string
	}{
		{config.Redis{URL: url}, url},
		{config.Redis{URL: "redis://127.0.0.1:1/0", SentinelMaster: "rl", Sentinels: []string{addr}},
			"master rl through the Sentinels at " + addr},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(700*time.Millisecond, cancel)
		var errOut bytes.Buffer
		cfg := config.Config{Redis: tc.redis, Patterns: []string{"*"}}
		if _, err := readSorted(ctx, cfg, &errOut); !errors.Is(err, errConnectInterrupted) {
			t.Errorf("readSorted, ctrl+c while connecting to %s: %v, want %q", tc.says, err, errConnectInterrupted)
		}
		if want := "countertop: connecting to " + tc.says + "... (ctrl+c to stop)\n"; errOut.String() != want {
			t.Errorf("stderr %q, want %q", errOut.String(), want)
		}
	}
}

// --mode events on a server that sends no keyspace notifications cannot
// work: the dashboard says so before its screen opens (here there is no
// terminal, which would be the error otherwise), as a refused connection does.
func TestDashboardEventsModeThatCannotWorkFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	var out, errOut bytes.Buffer
	code := run([]string{"--url", s.URL(), "--pattern", "ratelimit:*", "--mode", "events"}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if got := errOut.String(); !strings.HasPrefix(got, "countertop: keyspace notifications are off") || !strings.Contains(got, "use --mode poll") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q, want the one sentence saying why events cannot work", got)
	}
}

// A URL that does not parse is blamed on where it came from: the file and
// line, REDIS_URL or --url.
func TestBadURLNamesItsSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "countertop.toml")
	if err := os.WriteFile(path, []byte("[redis]\nurl = \"redis://127.0.0.1:1/abc\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"", []string{"snapshot", "--config", path}, path + `:2: redis.url is not a valid Redis URL (invalid database number: "abc")`},
		{"redis://127.0.0.1:1/x?y=1", []string{"snapshot", "--config", path}, `REDIS_URL is not a valid Redis URL (invalid database number: "x")`},
		{"redis://127.0.0.1:1/x", []string{"snapshot", "--config", path, "--url", "redis://:pw@127.0.0.1:1/0?foo=bar"}, `--url is not a valid Redis URL (unexpected option: foo)`},
	} {
		t.Setenv("REDIS_URL", tc.env)
		var out, errOut bytes.Buffer
		if code := run(tc.args, &out, &errOut); code != exitFailed || !strings.Contains(errOut.String(), tc.want) {
			t.Errorf("%v with REDIS_URL=%q: exit %d, stderr %q\nwant it to say %q", tc.args, tc.env, code, errOut.String(), tc.want)
		}
	}
}

// A config file with several problems gets a line for each, each naming
// its file and line, not one line with the line breaks escaped.
func TestConfigProblemsALineEach(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "c.toml", "[[rule]]\npattern = \"a:*\"\nlimit = \"100\"\nwarn_at = 1.5\n")
	var out, errOut bytes.Buffer
	code := run([]string{"snapshot", "--config", path, "--url", "redis://127.0.0.1:1/0"}, &out, &errOut)
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if code != exitFailed || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "countertop: "+path+":3: rule[1].limit") || !strings.HasPrefix(lines[1], path+":4: rule[1].warn_at") {
		t.Errorf("exit %d, stderr %q: want a line for each problem", code, errOut.String())
	}
}

// A pass reads on half the cores and gives them all back for what
// follows (see report.ReadOnHalfTheCores), also when passes overlap, as this
// package's tests do: the last to end restores what the first found.
// Not parallel, so that no other test's pass runs meanwhile.
func TestOverlappingPassesGiveTheCoresBack(t *testing.T) {
	s := redistest.Start(t)
	s.Do(t, "SET", "k:1", "1")
	cfg := config.Config{Redis: config.Redis{URL: s.URL()}, Patterns: []string{"k:*"}}
	before := runtime.GOMAXPROCS(0)

	// a starts, b starts, a ends, b ends.
	aIn, bIn, aDone, bDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	during := 0
	go func() {
		defer close(aDone)
		readAll(context.Background(), cfg, io.Discard, func([]model.Observation) {
			during = runtime.GOMAXPROCS(0)
			close(aIn)
			<-bIn
		})
	}()
	<-aIn
	go func() {
		defer close(bDone)
		readAll(context.Background(), cfg, io.Discard, func([]model.Observation) {
			close(bIn)
			<-aDone
		})
	}()
	<-bDone
	if want := max(1, before/2); during != want {
		t.Errorf("GOMAXPROCS during a pass: %d, want %d (half of %d)", during, want, before)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d before two overlapping passes, %d after", before, after)
	}
}
