package report

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A snapshot written to a pipe gets a pipe of bigPipe bytes, so that it
// waits for its reader less, where Linux allows that size; a larger pipe
// is not made smaller, and a file is left as it is.
func TestGrowPipe(t *testing.T) {
	pipe := func() (r, w *os.File) {
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { r.Close(); w.Close() })
		return r, w
	}
	size := func(f *os.File) int {
		n, err := unix.FcntlInt(f.Fd(), unix.F_GETPIPE_SZ, 0)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	_, w := pipe()
	before := size(w)
	GrowPipe(w)
	want := before
	if limit, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(limit))); err == nil && n >= bigPipe {
			want = bigPipe
		}
	}
	if got := size(w); got != want {
		t.Errorf("a pipe of %d bytes holds %d after GrowPipe, want %d", before, got, want)
	}

	// A pipe larger already keeps its size (Linux would shrink it).
	_, w = pipe()
	if _, err := unix.FcntlInt(w.Fd(), unix.F_SETPIPE_SZ, 256<<10); err != nil {
		t.Fatal(err)
	}
	growPipeTo(w, 128<<10)
	if got := size(w); got != 256<<10 {
		t.Errorf("a pipe of %d bytes holds %d after growPipeTo(%d): it was made smaller", 256<<10, got, 128<<10)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	GrowPipe(f) // not a pipe: nothing to do, and nothing breaks
	if _, err := f.WriteString("still writable\n"); err != nil {
		t.Errorf("a file after GrowPipe: %v", err)
	}
}
