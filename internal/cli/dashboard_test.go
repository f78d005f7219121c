package cli

import (
	"bytes"
	"strings"
	"testing"
)

// Without a terminal on stdout the dashboard and the demo refuse, before
// connecting (port 1 would refuse the connection), in one sentence that
// points at snapshot.
func TestDashboardRefusesWithoutATerminal(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--url", "redis://127.0.0.1:1", "--pattern", "ratelimit:*"}, {"demo"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := Run(args, &out, &errOut)
			if code != exitFailed || out.Len() > 0 {
				t.Errorf("countertop %s: exit code %d, stdout %q; want %d and nothing", strings.Join(args, " "), code, out.String(), exitFailed)
			}
			if got := errOut.String(); !strings.Contains(got, "stdout is not one") || !strings.Contains(got, "'countertop snapshot'") || strings.Count(got, "\n") != 1 {
				t.Errorf("countertop %s: stderr %q, want the one sentence that points at snapshot", strings.Join(args, " "), got)
			}
		})
	}
}
