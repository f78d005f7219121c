package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// --mode events on a server that sends no keyspace notifications cannot
// work: the dashboard says so before its screen opens (here there is no
// terminal, which would be the error otherwise), as a refused connection does.
func TestDashboardEventsModeThatCannotWorkFailsAtOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	var out, errOut bytes.Buffer
	code := Run([]string{"--url", s.URL(), "--pattern", "ratelimit:*", "--mode", "events"}, &out, &errOut)
	if code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if got := errOut.String(); !strings.HasPrefix(got, "countertop: keyspace notifications are off") || !strings.Contains(got, "use --mode tracking or --mode poll") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q, want the one sentence saying why events cannot work", got)
	}
}
