package redistest_test

import (
	"slices"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// Monitor reads commands as the server ran them, from a client or a
// script, their arguments unquoted.
func TestMonitorSeesWhatRuns(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	m := s.Monitor(t)
	s.Do(t, "SET", "a \"b\"\n\xff", "1")
	s.Do(t, "EVAL", "return redis.call('PEXPIRE', KEYS[1], ARGV[1])", 1, "a \"b\"\n\xff", "60000")
	if args, byScript := m.Next(t, "set"); !slices.Equal(args, []string{"SET", "a \"b\"\n\xff", "1"}) || byScript {
		t.Errorf("SET came as %q, by a script: %v", args, byScript)
	}
	if args, byScript := m.Next(t, "PEXPIRE"); !slices.Equal(args, []string{"PEXPIRE", "a \"b\"\n\xff", "60000"}) || !byScript {
		t.Errorf("the script's PEXPIRE came as %q, by a script: %v", args, byScript)
	}
}
