package redistest

import (
	"context"
	"testing"
	"time"
)

// Repeat sends cmds, one after the other, at once and then every period
// until the test ends (or the returned stop is called), as a client of the
// server would on every hit: a limiter's INCR then EXPIRE. It stops at the
// first error, and fails the test with it when stopped.
func (s *Server) Repeat(t testing.TB, period time.Duration, cmds ...[]any) (stop func()) {
	c := s.Client(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			for _, cmd := range cmds {
				if err := c.Do(ctx, cmd...).Err(); err != nil {
					if ctx.Err() != nil {
						err = nil // stopped mid-command
					}
					done <- err
					return
				}
			}
			select {
			case <-ctx.Done():
				done <- nil
				return
			case <-tick.C:
			}
		}
	}()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("redistest: repeating %v: %v", cmds, err)
		}
	}
	t.Cleanup(stop)
	return stop
}
