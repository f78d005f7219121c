//go:build unix

package main

// The terminal the dashboard leaves behind, in a real one (tmux): where the
// dashboard cannot draw (stdout not a terminal, TERM=dumb) it is not
// touched at all.

import (
	"os"
	"path/filepath"
	"strings"
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

// exited waits for the program to end and returns its exit status, as the
// shell reports it (129 for a SIGHUP).
func (k *kept) exited() string {
	k.t.Helper()
	line := lineWith(k.waitText("countertop exited with "), "countertop exited with ")
	return strings.TrimSpace(line[strings.Index(line, "with ")+len("with "):])
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
