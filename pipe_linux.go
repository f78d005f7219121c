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

// growPipe asks for a pipe of bigPipe bytes when f is a smaller pipe: in
// a snapshot of 100,000 keys the last row came 3-4 ms sooner
// (BENCHMARKS.md). It never shrinks a pipe that is larger already (Linux
// would), and the size stays with the pipe after countertop exits, counted
// against the user's pipe quota as any pipe's is. It is a hint: where
// Linux refuses (a lower pipe-max-size, the quota spent), the output is the
// same, written as before.
func growPipe(f *os.File) { growPipeTo(f, bigPipe) }

// growPipeTo is growPipe to size bytes.
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
			unix.FcntlInt(fd, unix.F_SETPIPE_SZ, size) // a hint; see growPipe
		}
	})
}
