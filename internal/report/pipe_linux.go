package report

import (
	"os"

	"golang.org/x/sys/unix"
)

// bigPipe is how much a pipe that a snapshot writes to may hold: with
// Linux's default a large table waits on its reader many times over. It is
// the most an unprivileged process may ask for by default (pipe-max-size).
const bigPipe = 1 << 20

// GrowPipe asks for a pipe of bigPipe bytes when f is a smaller pipe, so
// that the rows wait less for a slow reader. It never shrinks a pipe, and
// it is a hint: where Linux refuses, the output is the same, as before.
func GrowPipe(f *os.File) { growPipeTo(f, bigPipe) }

// growPipeTo is GrowPipe to size bytes.
func growPipeTo(f *os.File, size int) {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	raw, err := f.SyscallConn()
	if err != nil {
		return
	}
	raw.Control(func(fd uintptr) {
		if now, err := unix.FcntlInt(fd, unix.F_GETPIPE_SZ, 0); err == nil && now < size {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size) // a hint; see GrowPipe
		}
	})
}
