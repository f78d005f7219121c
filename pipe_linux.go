package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// bigPipe is how much a pipe that snapshot writes to may hold: Linux's
// default of 64 KiB made countertop wait for the reader (a shell's next
// command, a script) about 90 times in a table of 100,000 rows (6 MB),
// each time with every core busy putting rows together. It is the most an
// unprivileged process may ask for by default (/proc/sys/fs/pipe-max-size).
const bigPipe = 1 << 20

// growPipe asks for a pipe of bigPipe bytes when f is a pipe: in a
// snapshot of 100,000 keys the last row came 4-5 ms sooner (BENCHMARKS.md).
// It is a hint: where Linux refuses (a lower pipe-max-size, a user's pipe
// quota), the output is the same, written as before.
func growPipe(f *os.File) {
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	if raw, err := f.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, bigPipe) // a hint; see above
		})
	}
}
