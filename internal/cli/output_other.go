//go:build !unix

package cli

import "os"

// startedClosed reports false: only a Unix runtime gives a process that
// started with its stdout closed /dev/null in its place (see
// output_unix.go); elsewhere a write to it fails, and Run says so.
func startedClosed(*os.File) bool { return false }
