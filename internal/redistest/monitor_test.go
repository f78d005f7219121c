package redistest_test

import (
	"slices"
	"strings"
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

// Until gives every command that ran before the one it waits for, in the
// order they ran, a script's marked.
func TestMonitorUntil(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	m := s.Monitor(t)
	s.Do(t, "SET", "a", "1")
	s.Do(t, "EVAL", "return redis.call('PEXPIRE', KEYS[1], ARGV[1])", 1, "a", "60000")
	s.Do(t, "ECHO", "end")
	var got []string
	for _, r := range m.Until(t, "ECHO") {
		switch {
		case slices.Contains([]string{"hello", "client", "auth"}, strings.ToLower(r.Args[0])): // a new connection's
		case r.ByScript:
			got = append(got, "lua:"+r.Args[0])
		default:
			got = append(got, r.Args[0])
		}
	}
	if want := []string{"SET", "EVAL", "lua:PEXPIRE"}; !slices.Equal(got, want) {
		t.Errorf("Until ECHO gave %q, want %q", got, want)
	}
}
