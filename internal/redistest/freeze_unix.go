//go:build unix

package redistest

import (
	"syscall"
	"testing"
)

// Freeze stops the server's process (SIGSTOP) without closing anything:
// its connections stay open and nothing answers, as when Redis is stuck in
// a slow command, a fork on a huge heap or a paused VM. Thaw resumes it;
// the server is thawed when the test ends, if not before.
func (s *Server) Freeze(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGSTOP)
	t.Cleanup(func() { s.signal(t, syscall.SIGCONT) })
}

// Thaw resumes a server that Freeze stopped.
func (s *Server) Thaw(t testing.TB) {
	t.Helper()
	s.signal(t, syscall.SIGCONT)
}

func (s *Server) signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	if err := s.proc.Process.Signal(sig); err != nil {
		t.Errorf("redistest: %v: %v", sig, err)
	}
}
