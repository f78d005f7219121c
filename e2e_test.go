package main

// End-to-end: the real binary, in a real terminal (tmux, 120x40), against a
// real redis-server, read back from the screen the way a person would.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds countertop once per test run.
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "countertop-e2e-")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "countertop")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// terminal is one tmux session running a command.
type terminal struct {
	t    *testing.T
	name string
	sock string // the terminal's own tmux server, so that no other test's can end under it
}

// tmux runs a tmux command on the terminal's own server.
func (term *terminal) tmux(args ...string) *exec.Cmd {
	return exec.Command("tmux", append([]string{"-S", term.sock, "-f", "/dev/null"}, args...)...)
}

func startTerminal(t *testing.T, width, height int, env []string, argv ...string) *terminal {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found on PATH: install it (apt-get install tmux) or run `make test`, which does")
	}
	name := fmt.Sprintf("countertop-e2e-%d-%d", os.Getpid(), time.Now().UnixNano())
	args := []string{"new-session", "-d", "-s", name, "-x", fmt.Sprint(width), "-y", fmt.Sprint(height)}
	for _, e := range env {
		args = append(args, "-e", e)
	}
	args = append(args, argv...)
	// A server of its own: tests that share tmux's default one race with
	// it exiting when another test's last session ends.
	// Its own short folder: a socket's path is limited to about 100 bytes,
	// which a subtest's TempDir can pass.
	dir, err := os.MkdirTemp("", "ct-tmux")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	term := &terminal{t: t, name: name, sock: filepath.Join(dir, "sock")}
	if out, err := term.tmux(args...).CombinedOutput(); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { term.tmux("kill-server").Run() })
	return term
}

// screen is what the terminal shows now; colours adds the SGR sequences.
func (term *terminal) screen(colours bool) string {
	args := []string{"capture-pane", "-p", "-t", term.name}
	if colours {
		args = append(args, "-e")
	}
	out, err := term.tmux(args...).Output()
	if err != nil {
		return ""
	}
	return string(out)
}

func (term *terminal) keys(keys ...string) {
	term.t.Helper()
	args := append([]string{"send-keys", "-t", term.name}, keys...)
	if out, err := term.tmux(args...).CombinedOutput(); err != nil {
		term.t.Fatalf("tmux send-keys %v: %v\n%s", keys, err, out)
	}
}

// waitFor polls the screen until cond holds, or fails with the last screen.
func (term *terminal) waitFor(what string, cond func(screen string) bool) string {
	term.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	var s string
	for time.Now().Before(deadline) {
		if s = term.screen(false); cond(s) {
			return s
		}
		time.Sleep(100 * time.Millisecond)
	}
	term.t.Fatalf("timed out waiting for %s; the screen was:\n%s", what, s)
	return ""
}

func (term *terminal) waitText(text string) string {
	term.t.Helper()
	return term.waitFor(fmt.Sprintf("%q on screen", text), func(s string) bool { return strings.Contains(s, text) })
}

// alive reports whether the session (and so the program in it) still runs.
func (term *terminal) alive() bool {
	return term.tmux("has-session", "-t", term.name).Run() == nil
}

// lineWith returns the first screen line containing text.
func lineWith(screen, text string) string {
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, text) {
			return l
		}
	}
	return ""
}

// writeConfig is the config the dashboard is tested with, as internal/cli's
// tests use it: a rate limit with a window, page views that live forever,
// and legacy counters whose window nobody wrote down.
const writeConfig = `
[[rule]]
pattern = "ratelimit:*"
limit = 100
window = "60s"

[[rule]]
pattern = "views:*"
expect_ttl = false

[[rule]]
pattern = "legacy:*"
limit = 10
`

// writeFile writes content to a file name in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDashboardEndToEnd(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:ok", "17", "EX", "100")
	srv.Do(t, "SET", "ratelimit:api:stuck", "150")
	srv.Do(t, "SET", "ratelimit:api:fresh", "3")
	srv.Do(t, "SET", "views:home", "42")
	srv.Do(t, "SET", "ratelimit:api:\x1b[2Jevil", "1", "EX", "100")
	cfg := writeFile(t, "countertop.toml", writeConfig)

	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--url", srv.URL(), "--config", cfg,
		"--pattern", "ratelimit:*", "--pattern", "views:*", "--interval", "200ms")

	s := term.waitText("ratelimit:api:stuck")
	for _, want := range []string{"ratelimit:api:ok", "ratelimit:api:fresh", "views:home", `\e[2Jevil`} {
		if !strings.Contains(s, want) {
			t.Errorf("screen lacks %q:\n%s", want, s)
		}
	}
	if !strings.Contains(lineWith(s, "ratelimit:api:stuck"), "stuck") {
		t.Errorf("the counter at 150 with no TTL is not marked stuck: %q", lineWith(s, "ratelimit:api:stuck"))
	}
	if !strings.Contains(lineWith(s, "ratelimit:api:fresh"), "no-expiry") {
		t.Errorf("the counter at 3 with no TTL is not marked no-expiry: %q", lineWith(s, "ratelimit:api:fresh"))
	}
	if strings.Contains(lineWith(s, "views:home"), "no-expiry") {
		t.Errorf("a views:* counter (expect_ttl = false) is marked no-expiry: %q", lineWith(s, "views:home"))
	}

	// The TTL counts down between refreshes.
	ttlOf := func(s string) string {
		f := strings.Fields(lineWith(s, "ratelimit:api:ok"))
		for _, w := range f {
			if strings.HasSuffix(w, "s") && strings.ContainsAny(w, "0123456789") && !strings.Contains(w, "/") {
				return w
			}
		}
		return ""
	}
	first := ttlOf(s)
	term.waitFor("the TTL to count down from "+first, func(s string) bool {
		ttl := ttlOf(s)
		return ttl != "" && ttl != first
	})

	// Changes in Redis reach the screen within a polling interval or two.
	srv.Do(t, "SET", "ratelimit:api:new", "99", "EX", "50")
	srv.Do(t, "DEL", "ratelimit:api:fresh")
	srv.Do(t, "INCRBY", "views:home", "1000")
	term.waitFor("the new key, the deleted key and the changed value", func(s string) bool {
		return strings.Contains(s, "ratelimit:api:new") && !strings.Contains(s, "ratelimit:api:fresh") &&
			strings.Contains(lineWith(s, "views:home"), "1042")
	})

	// Colours as the design says: a stuck row is red, an ok row is not.
	coloured := term.screen(true)
	if !hasRed(lineWith(coloured, "ratelimit:api:stuck")) {
		t.Errorf("the stuck row is not red: %q", lineWith(coloured, "ratelimit:api:stuck"))
	}
	if hasRed(lineWith(coloured, "ratelimit:api:ok")) {
		t.Errorf("an ok row is red: %q", lineWith(coloured, "ratelimit:api:ok"))
	}

	// Filter, then quit.
	term.keys("/", "stuck", "Enter")
	term.waitFor("the filter to leave only the stuck key", func(s string) bool {
		return strings.Contains(s, "ratelimit:api:stuck") && !strings.Contains(s, "ratelimit:api:ok")
	})
	term.keys("q")
	deadline := time.Now().Add(5 * time.Second)
	for term.alive() && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if term.alive() {
		t.Fatalf("q did not quit; the screen was:\n%s", term.screen(false))
	}
}

// hasRed reports whether an SGR sequence on the line sets a red foreground
// (basic, bright, 256-colour or true colour with red well above the rest).
func hasRed(line string) bool {
	for _, seq := range strings.Split(line, "\x1b[")[1:] {
		end := strings.IndexByte(seq, 'm')
		if end < 0 {
			continue
		}
		params := strings.Split(seq[:end], ";")
		for i := 0; i < len(params); i++ {
			switch params[i] {
			case "31", "91":
				return true
			case "38":
				if i+2 < len(params) && params[i+1] == "5" {
					switch params[i+2] {
					case "1", "9", "160", "161", "196", "197", "203":
						return true
					}
					i += 2
				} else if i+4 < len(params) && params[i+1] == "2" {
					var r, g, b int
					fmt.Sscan(params[i+2], &r)
					fmt.Sscan(params[i+3], &g)
					fmt.Sscan(params[i+4], &b)
					if r >= 180 && g < 110 && b < 110 {
						return true
					}
					i += 4
				}
			}
		}
	}
	return false
}

func TestDashboardWritesEndToEnd(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:drill", "5") // lost its TTL: no-expiry
	srv.Do(t, "SET", "ratelimit:api:doomed", "1", "EX", "100")
	cfg := writeFile(t, "countertop.toml", writeConfig)

	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--url", srv.URL(), "--config", cfg, "--pattern", "ratelimit:*", "--interval", "200ms")
	term.waitText("ratelimit:api:drill")

	// `+` on the no-expiry counter: one atomic INCRBY that also gives it the
	// rule's 60s window, shown at once in the status line and the row.
	term.keys("/", "drill", "Enter")
	term.waitFor("the filter", func(s string) bool { return !strings.Contains(s, "ratelimit:api:doomed") })
	term.keys("+")
	term.waitText("INCRBY ratelimit:api:drill 1 -> 6")
	if pttl := srv.Do(t, "PTTL", "ratelimit:api:drill").(int64); pttl <= 0 || pttl > 60000 {
		t.Errorf("after +, the key's PTTL is %d ms; want the rule's 60s window", pttl)
	}
	term.waitFor("the row to be repaired (no longer no-expiry)", func(s string) bool {
		l := lineWith(s, "ratelimit:api:drill")
		return strings.Contains(l, " 6 ") && !strings.Contains(l, "no-expiry")
	})

	// `d` asks, naming the key; `y` deletes it in Redis and on screen.
	// esc clears the filter (sent alone: ESC then "/" would read as alt+/).
	term.keys("/")
	term.keys("Escape")
	term.waitText("ratelimit:api:doomed")
	term.keys("/", "doomed", "Enter")
	term.waitFor("the filter", func(s string) bool { return strings.Contains(s, "1 of 2 keys") })
	term.keys("d")
	term.waitFor("a confirmation naming the key", func(s string) bool {
		return strings.Count(s, "ratelimit:api:doomed") >= 2
	})
	term.keys("y")
	term.waitText("DEL ratelimit:api:doomed -> deleted")
	if n := srv.Do(t, "EXISTS", "ratelimit:api:doomed").(int64); n != 0 {
		t.Errorf("the confirmed delete left the key in Redis")
	}
}

func TestDashboardReadOnlySendsNothing(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:ro", "5")
	cfg := writeFile(t, "countertop.toml", writeConfig)

	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--url", srv.URL(), "--config", cfg, "--pattern", "ratelimit:*", "--interval", "200ms", "--read-only")
	s := term.waitText("ratelimit:api:ro")
	if !strings.Contains(s, "READ-ONLY") {
		t.Errorf("the header does not say the dashboard is read-only:\n%s", s)
	}
	term.keys("+")
	term.waitText("nothing was sent")
	if v := srv.Do(t, "GET", "ratelimit:api:ro"); v != "5" {
		t.Errorf("a read-only dashboard changed the key to %v", v)
	}
}

func TestDashboardSurvivesRedisRestart(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:before", "5", "EX", "100")
	cfg := writeFile(t, "countertop.toml", writeConfig)

	term := startTerminal(t, 120, 40, []string{"TERM=xterm-256color"},
		binary(t), "--url", srv.URL(), "--config", cfg, "--pattern", "ratelimit:*", "--interval", "200ms", "--mode", "poll")
	term.waitText("ratelimit:api:before")

	srv.Stop()
	s := term.waitText("connection refused")
	if !strings.Contains(s, "reconnecting") {
		t.Errorf("the header does not say it is reconnecting:\n%s", s)
	}
	if !term.alive() {
		t.Fatal("the dashboard quit when Redis went away")
	}

	// The restarted server is empty (nothing persisted): the old key goes,
	// a new one appears, and the error clears.
	srv.Restart(t)
	srv.Do(t, "SET", "ratelimit:api:after", "7", "EX", "100")
	term.waitFor("the dashboard to follow the restarted server", func(s string) bool {
		return strings.Contains(s, "ratelimit:api:after") && !strings.Contains(s, "ratelimit:api:before") &&
			!strings.Contains(s, "connection refused") && strings.Contains(s, "polling")
	})
}
