package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// On a terminal, snapshot's table fits its width: a name too long for
// what the other columns leave is cut in its middle, as on screen.
func TestSnapshotTableFitsTheTerminal(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	long := "ratelimit:" + strings.Repeat("tenant-", 2000) + "42"
	s.Do(t, "SET", long, "7", "EX", "100")
	s.Do(t, "SET", "ratelimit:short", "3", "EX", "100")

	screen, tty := openPTY(t)
	if err := unix.IoctlSetWinsize(int(tty.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Col: 70, Row: 24}); err != nil {
		t.Fatal(err)
	}
	read := make(chan string)
	go func() {
		var out bytes.Buffer
		io.Copy(&out, screen) // until the terminal closes (EIO)
		read <- strings.ReplaceAll(out.String(), "\r\n", "\n")
	}()
	path := filepath.Join(t.TempDir(), "countertop.toml")
	if err := os.WriteFile(path, []byte(writeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	code := Run([]string{"snapshot", "--config", path, "--url", s.URL(), "--pattern", "ratelimit:*"}, tty, &errOut)
	tty.Close()
	out := <-read
	if code != exitOK || errOut.Len() > 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("want a header and 2 rows:\n%s", out)
	}
	for _, l := range lines {
		if n := model.Cells(l); n > 70 {
			t.Errorf("a line of %d cells on a terminal of 70: %q", n, l)
		}
	}
	if key := strings.Fields(lines[2])[0]; !strings.HasPrefix(key, "ratelimit:") || !strings.HasSuffix(key, "tenant-42") || !strings.Contains(key, "…") || model.Cells(key) < 16 {
		t.Errorf("the long name reads %q: want its start and end around an ellipsis, in 16 cells or more", key)
	}
}
