package ui

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
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

// The copy reaches the clipboard through a real terminal: tmux, with
// set-clipboard on, keeps what an OSC 52 sequence sets as a paste buffer,
// which the test reads back byte for byte.
func TestCopyReachesTmuxsClipboard(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Fatal("tmux not found on PATH: install it (apt-get install tmux) or run `make test`, which does")
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "copyprog")
	if out, err := exec.Command("go", "build", "-o", prog, "./testdata/copyprog").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// A server of its own (-S), without the user's config (-f), so that
	// set -g changes nobody else's tmux.
	sock := filepath.Join(dir, "tmux.sock")
	tmux := func(args ...string) ([]byte, error) {
		return exec.Command("tmux", append([]string{"-S", sock, "-f", "/dev/null"}, args...)...).Output()
	}
	raw := "ratelimit:api:\x1b[2Jü\xff"
	if _, err := tmux("new-session", "-d", "-s", "copy", "-x", "120", "-y", "40", prog, raw); err != nil {
		t.Fatalf("tmux new-session: %v", err)
	}
	t.Cleanup(func() { tmux("kill-server") })
	if out, err := tmux("set", "-g", "set-clipboard", "on"); err != nil {
		t.Fatalf("tmux set-clipboard: %v\n%s", err, out)
	}
	waitUntil := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if cond() {
				return
			}
		}
		screen, _ := tmux("capture-pane", "-p", "-t", "copy")
		t.Fatalf("timed out waiting for %s; the screen was:\n%s", what, screen)
	}
	screenHas := func(text string) func() bool {
		return func() bool {
			screen, _ := tmux("capture-pane", "-p", "-t", "copy")
			return bytes.Contains(screen, []byte(text))
		}
	}
	shown := model.Printable(raw)
	waitUntil("the key on screen", screenHas(shown))
	if _, err := tmux("send-keys", "-t", "copy", "c"); err != nil {
		t.Fatal(err)
	}
	waitUntil("the raw name in tmux's buffer", func() bool {
		buffer, _ := tmux("show-buffer")
		return string(buffer) == raw
	})
	waitUntil("the status line", screenHas("copied "+shown+" to the clipboard"))
}
