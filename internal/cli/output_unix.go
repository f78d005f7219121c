//go:build unix

package cli

import (
	"os"

	"golang.org/x/sys/unix"
)

// startedClosed reports whether f is the process's stdout and was closed
// when it started (`countertop snapshot >&-`). Go's runtime opens
// /dev/null read-write in place of a closed descriptor before main runs,
// so that is what is looked for; a shell's `>/dev/null` opens it
// write-only. One open file of /dev/null for stdout and stdin or stderr
// too is a daemon's, or a parent's that discards them (daemon(3),
// Python's subprocess.DEVNULL for both): the runtime opens one per closed
// descriptor. /dev/null opened read-write for stdout alone by a parent
// (Python's DEVNULL, Node's 'ignore') looks the same as a closed one, and
// is taken for one: nothing countertop wrote there could be read either.
func startedClosed(f *os.File) bool {
	if f.Fd() != 1 {
		return false
	}
	mode, err := unix.FcntlInt(1, unix.F_GETFL, 0)
	if err != nil || mode&unix.O_ACCMODE != unix.O_RDWR {
		return false
	}
	var out, null unix.Stat_t
	if unix.Fstat(1, &out) != nil || unix.Stat(os.DevNull, &null) != nil ||
		out.Mode&unix.S_IFMT != unix.S_IFCHR || out.Rdev != null.Rdev {
		return false
	}
	return !sameOpenFile(1, 0) && !sameOpenFile(1, 2)
}

// sameOpenFile reports whether descriptors a and b share one open file
// (one was dup'ed from the other): status flags belong to the open file,
// so toggling O_APPEND on a's shows on b's only then. Both are /dev/null
// or something else that ignores O_APPEND here; a's flags are restored.
func sameOpenFile(a, b int) bool {
	fa, err := unix.FcntlInt(uintptr(a), unix.F_GETFL, 0)
	if err != nil {
		return false
	}
	fb, err := unix.FcntlInt(uintptr(b), unix.F_GETFL, 0)
	if err != nil || fa != fb {
		return false
	}
	if _, err := unix.FcntlInt(uintptr(a), unix.F_SETFL, fa^unix.O_APPEND); err != nil {
		return false
	}
	after, _ := unix.FcntlInt(uintptr(b), unix.F_GETFL, 0)
	unix.FcntlInt(uintptr(a), unix.F_SETFL, fa) // as it was
	return after != fb
}
