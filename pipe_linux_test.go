package main

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// A snapshot written to a pipe gets a pipe of bigPipe bytes, so that it
// waits for its reader less; a file is left as it is.
func TestGrowPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	growPipe(w)
	if got, err := unix.FcntlInt(w.Fd(), unix.F_GETPIPE_SZ, 0); err != nil || got != bigPipe {
		t.Errorf("pipe holds %d bytes (%v), want %d", got, err, bigPipe)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	growPipe(f) // not a pipe: nothing to do, and nothing breaks
	if _, err := f.WriteString("still writable\n"); err != nil {
		t.Errorf("a file after growPipe: %v", err)
	}
}
