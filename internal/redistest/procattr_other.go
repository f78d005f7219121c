//go:build !linux

package redistest

import "syscall"

// sysProcAttr is empty where the kernel cannot tie redis-server's life to
// the test binary's: a test binary that dies without cleanups leaves it
// running.
func sysProcAttr() *syscall.SysProcAttr { return nil }
