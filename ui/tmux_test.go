package ui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// c puts the selected key's name on the clipboard as Redis holds it, and
// the status line says so with the name escaped; on the detail screen it
// copies the key shown. Copying is no write: it works read-only too.
func TestCopyTheSelectedKeysName(t *testing.T) {
	hostile := "ratelimit:\x1b[31mred\xff"
	m := newModelWith(t, Options{ReadOnly: true}, 120, 40, append(fixture(), str(hostile, "1", 50_000))...)
	m = selectKey(t, m, hostile)
	m, cmd := press(m, "c")
	if cmd == nil {
		t.Fatal("c gave no command")
	}
	if got := fmt.Sprint(cmd()); got != hostile { // tea's message is the text to set
		t.Errorf("c asks to copy %q, want the raw name %q", got, hostile)
	}
	if want := `copied ratelimit:\e[31mred\xff to the clipboard`; statusText(m) != want {
		t.Errorf("status %q, want %q", statusText(m), want)
	}
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd = press(m, "<enter>c")
	if cmd == nil || fmt.Sprint(cmd()) != "ratelimit:api:42" || statusText(m) != "copied ratelimit:api:42 to the clipboard" {
		t.Errorf("c on the detail screen: status %q", statusText(m))
	}
	m, cmd = press(newModel(t, nil, 80, 24), "c")
	if cmd != nil || statusText(m) != "No key is selected: nothing was copied." {
		t.Errorf("c on an empty table: status %q, command %v", statusText(m), cmd)
	}
}

var (
	copyprogOnce sync.Once
	copyprogPath string
	copyprogErr  error
)

// tmuxTerm is testdata/copyprog (the dashboard over a fixed Store) running
// in a tmux server of its own, 120x40.
type tmuxTerm struct {
	t    *testing.T
	sock string
}

// startTmux builds testdata/copyprog once and runs it with args in a tmux
// server of its own (-S), without the user's config (-f), so that set -g
// changes nobody else's tmux.
func startTmux(t *testing.T, args ...string) *tmuxTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found on PATH: install it (apt-get install tmux) or run `make test`, which does")
	}
	copyprogOnce.Do(func() {
		copyprogPath = filepath.Join(os.TempDir(), fmt.Sprintf("countertop-copyprog-%d", os.Getpid()))
		if out, err := exec.Command("go", "build", "-o", copyprogPath, "./testdata/copyprog").CombinedOutput(); err != nil {
			copyprogErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if copyprogErr != nil {
		t.Fatal(copyprogErr)
	}
	term := &tmuxTerm{t: t, sock: filepath.Join(t.TempDir(), "tmux.sock")}
	if out, err := term.run(append([]string{"new-session", "-d", "-s", "ct", "-x", "120", "-y", "40", copyprogPath}, args...)...); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	t.Cleanup(func() { term.run("kill-server") })
	return term
}

func (term *tmuxTerm) run(args ...string) ([]byte, error) {
	return exec.Command("tmux", append([]string{"-S", term.sock, "-f", "/dev/null"}, args...)...).Output()
}

// send types keys, or with -l sends bytes as they are.
func (term *tmuxTerm) send(args ...string) {
	term.t.Helper()
	if out, err := term.run(append([]string{"send-keys", "-t", "ct"}, args...)...); err != nil {
		term.t.Fatalf("tmux send-keys %q: %v\n%s", args, err, out)
	}
}

func (term *tmuxTerm) screen() string {
	out, _ := term.run("capture-pane", "-p", "-t", "ct")
	return string(out)
}

// waitUntil polls cond until it holds, or fails with the screen.
func (term *tmuxTerm) waitUntil(what string, cond func() bool) {
	term.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	term.t.Fatalf("timed out waiting for %s; the screen was:\n%s", what, term.screen())
}

func (term *tmuxTerm) waitText(text string) {
	term.t.Helper()
	term.waitUntil(fmt.Sprintf("%q on screen", text), func() bool { return strings.Contains(term.screen(), text) })
}

// The copy reaches the clipboard through a real terminal: tmux, with
// set-clipboard on, keeps what an OSC 52 sequence sets as a paste buffer,
// which the test reads back byte for byte.
func TestCopyReachesTmuxsClipboard(t *testing.T) {
	raw := "ratelimit:api:\x1b[2Jü\xff"
	term := startTmux(t, raw)
	if out, err := term.run("set", "-g", "set-clipboard", "on"); err != nil {
		t.Fatalf("tmux set-clipboard: %v\n%s", err, out)
	}
	shown := model.Printable(raw)
	term.waitText(shown)
	term.send("c")
	term.waitUntil("the raw name in tmux's buffer", func() bool {
		buffer, _ := term.run("show-buffer")
		return bytes.Equal(buffer, []byte(raw))
	})
	term.waitText("copied " + shown + " to the clipboard")
}

// In a real terminal the wheel scrolls, a click selects and a click on a
// title sorts, from the mouse reports the terminal sends (SGR, as tmux
// asks for them when the dashboard turns the mouse on).
func TestTheMouseInATerminal(t *testing.T) {
	var keys []string
	for i := range 60 {
		keys = append(keys, fmt.Sprintf("ratelimit:k%02d", i))
	}
	term := startTmux(t, append([]string{"-mouse"}, keys...)...)
	term.waitText(" of 60")
	var rows int
	words := strings.Fields(lineWith(t, term.screen(), " of 60"))
	if _, err := fmt.Sscanf(words[len(words)-3], "1-%d", &rows); err != nil {
		t.Fatalf("no position on the help line: %v\n%s", err, term.screen())
	}
	term.send("-l", "\x1b[<65;10;10M") // wheel down, at the 1-based cell 10,10
	term.waitText(fmt.Sprintf("%d-%d of 60", 1+wheelStep, rows+wheelStep))
	// Row 10 (y 9): the header's 3 lines and the titles, then the 6th row
	// shown, the wheel having scrolled 3 rows.
	term.send("-l", "\x1b[<0;10;10M")
	term.waitUntil("the clicked row selected", func() bool {
		return strings.Contains(lineWith(t, term.screen(), "▸"), fmt.Sprintf("ratelimit:k%02d ", wheelStep+5))
	})
	titles := lineWith(t, term.screen(), "KEY")
	term.send("-l", fmt.Sprintf("\x1b[<0;%d;4M", strings.Index(titles, "VALUE")+1)) // the title line is the 4th
	term.waitText("sort: value")
}
