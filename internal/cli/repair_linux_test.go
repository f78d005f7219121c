package cli

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/countertop/countertop/internal/redistest"
)

// openPTY opens a pseudo-terminal: what the user types goes into tty
// (writes to typed), as at a real terminal.
func openPTY(t *testing.T) (typed, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		t.Fatal(err)
	}
	n, err := unix.IoctlGetUint32(int(ptmx.Fd()), unix.TIOCGPTN)
	if err != nil {
		t.Fatal(err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// TestRepairAsks runs repair at a terminal: it asks, and only a yes writes.
func TestRepairAsks(t *testing.T) {
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:api:7", "3")
	typed, tty := openPTY(t)
	setStdin(t, tty)

	for _, tc := range []struct {
		name   string
		answer string
		code   int
		ttl    int64
		want   string
	}{
		{"no", "n", exitFailed, -1, "Repair 1 key? [y/N] countertop: not confirmed: nothing was changed\n"},
		{"enter", "", exitFailed, -1, "Repair 1 key? [y/N] countertop: not confirmed: nothing was changed\n"},
		{"yes", "y", exitOK, 60, "Repair 1 key? [y/N] "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := typed.WriteString(tc.answer + "\n"); err != nil {
				t.Fatal(err)
			}
			code, out, errOut := cli(t, s, "repair")
			if code != tc.code || errOut != tc.want || !strings.Contains(out, "would repair ratelimit:api:7: TTL 1m00s\n") {
				t.Errorf("answer %q: exit %d, stdout:\n%s\nstderr: %q\nwant exit %d, stderr %q", tc.answer, code, out, errOut, tc.code, tc.want)
			}
			if got := ttlSeconds(t, s, "ratelimit:api:7"); got > tc.ttl || got < tc.ttl-10 {
				t.Errorf("answer %q: TTL %ds, want %ds", tc.answer, got, tc.ttl)
			}
		})
	}
}
