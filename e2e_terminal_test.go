//go:build unix

package main

// The terminal the dashboard leaves behind, in a real one (tmux): after a
// signal it is given back as it was, and where the dashboard cannot draw
// (stdout not a terminal, TERM=dumb) it is not touched at all.

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// keptRun is a shell script that runs its arguments (after the pid file's
// path) as the program in a terminal, writes that program's pid to the
// file, and when it ends says how, then keeps the terminal open to be
// looked at: tmux resets a dead pane's cursor. With $STDOUT set, the
// program's stdout and stderr go to $STDOUT and $STDERR.
const keptRun = `pidfile=$1; shift
if [ -n "$STDOUT" ]; then
	sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@" >"$STDOUT" 2>"$STDERR"
else
	sh -c 'echo $$ >"$0"; exec "$@"' "$pidfile" "$@"
fi
echo "countertop exited with $?"
exec sleep 3600
`

// kept is a terminal whose program's pid is known, and which stays open
// after the program ends.
type kept struct {
	*terminal
	pidfile string
}

func startKept(t *testing.T, env []string, argv ...string) *kept {
	t.Helper()
	dir := t.TempDir()
	script := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(script, []byte(keptRun), 0o755); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pid")
	return &kept{startTerminal(t, 120, 40, env, append([]string{"sh", script, pidfile}, argv...)...), pidfile}
}

// pane returns what tmux says of the pane: format is one of its formats,
// like #{alternate_on}.
func (k *kept) pane(format string) string {
	out, err := k.tmux("display-message", "-p", "-t", k.name, format).Output()
	if err != nil {
		k.t.Fatalf("tmux display-message %s: %v", format, err)
	}
	return strings.TrimSpace(string(out))
}

// signal sends sig to the program.
func (k *kept) signal(sig syscall.Signal) {
	k.t.Helper()
	b, err := os.ReadFile(k.pidfile)
	if err != nil {
		k.t.Fatalf("no pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		k.t.Fatalf("pid file holds %q", b)
	}
	if err := syscall.Kill(pid, sig); err != nil {
		k.t.Fatal(err)
	}
}

// exited waits for the program to end and returns its exit status, as the
// shell reports it (129 for a SIGHUP).
func (k *kept) exited() string {
	k.t.Helper()
	line := lineWith(k.waitText("countertop exited with "), "countertop exited with ")
	return strings.TrimSpace(line[strings.Index(line, "with ")+len("with "):])
}

// A signal from outside (a terminal closed: SIGHUP; kill: SIGTERM) stops
// the dashboard, and the demo, with the terminal as it was before: out of
// the alternate screen, the cursor shown.
func TestDashboardGivesTheTerminalBackOnSignals(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:signal", "5", "EX", "100")
	dashboard := []string{binary(t), "--url", srv.URL(), "--pattern", "ratelimit:*", "--interval", "200ms"}
	for _, c := range []struct {
		name  string
		sig   syscall.Signal
		argv  []string
		shown string
	}{
		{"SIGHUP", syscall.SIGHUP, dashboard, "ratelimit:api:signal"},
		{"SIGTERM", syscall.SIGTERM, dashboard, "ratelimit:api:signal"},
		{"demo SIGHUP", syscall.SIGHUP, []string{binary(t), "demo"}, "simulated clients"},
	} {
		t.Run(c.name, func(t *testing.T) {
			term := startKept(t, []string{"TERM=xterm-256color"}, c.argv...)
			term.waitText(c.shown)
			if term.pane("#{alternate_on} #{cursor_flag}") != "1 0" {
				t.Fatalf("the dashboard is not in the alternate screen with the cursor hidden: tmux says %q", term.pane("#{alternate_on} #{cursor_flag}"))
			}
			term.signal(c.sig)
			if code := term.exited(); code != "0" {
				t.Errorf("after %s countertop exited with %s, want 0 as after q", c.name, code)
			}
			if got := term.pane("#{alternate_on}"); got != "0" {
				t.Errorf("after %s the terminal is left in the alternate screen", c.name)
			}
			if got := term.pane("#{cursor_flag}"); got != "1" {
				t.Errorf("after %s the cursor is left hidden", c.name)
			}
		})
	}
}

// With stdout a file the dashboard and the demo refuse in one sentence
// that points at snapshot, and write nothing to the file; with TERM=dumb,
// one sentence too, and nothing else on the screen.
func TestDashboardRefusesWhereItCannotDraw(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:file", "5", "EX", "100")
	dashboard := []string{binary(t), "--url", srv.URL(), "--pattern", "ratelimit:*"}
	for _, c := range []struct {
		name string
		argv []string
	}{
		{"dashboard", dashboard},
		{"demo", []string{binary(t), "demo"}},
	} {
		t.Run(c.name+" to a file", func(t *testing.T) {
			dir := t.TempDir()
			out, errOut := filepath.Join(dir, "out.txt"), filepath.Join(dir, "err.txt")
			term := startKept(t, []string{"TERM=xterm-256color", "STDOUT=" + out, "STDERR=" + errOut}, c.argv...)
			if code := term.exited(); code != "2" {
				t.Errorf("exit status %s, want 2", code)
			}
			if b, _ := os.ReadFile(out); len(b) > 0 {
				t.Errorf("the file holds %d bytes: %q", len(b), truncate(string(b), 200))
			}
			b, _ := os.ReadFile(errOut)
			if msg := string(b); !strings.Contains(msg, "stdout is not one") || !strings.Contains(msg, "'countertop snapshot'") || strings.Count(msg, "\n") != 1 {
				t.Errorf("stderr %q, want one sentence that points at snapshot", msg)
			}
		})
	}
	t.Run("TERM=dumb", func(t *testing.T) {
		// tmux sets TERM in the pane, over new-session's -e.
		term := startKept(t, nil, append([]string{"env", "TERM=dumb"}, dashboard...)...)
		if code := term.exited(); code != "2" {
			t.Errorf("exit status %s, want 2", code)
		}
		screen := strings.Join(strings.Fields(term.screen(false)), " ")
		if !strings.HasPrefix(screen, "countertop: TERM=dumb says this terminal cannot move its cursor") ||
			!strings.Contains(screen, "'countertop snapshot'") || !strings.HasSuffix(screen, "countertop exited with 2") {
			t.Errorf("want the one sentence about TERM=dumb, then the exit status; the screen was:\n%s", term.screen(false))
		}
	})
}

// truncate returns s cut to n bytes, for a message.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
