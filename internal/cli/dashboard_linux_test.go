package cli

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// --mode events on a server that sends no keyspace notifications cannot
// work: the dashboard says so before its screen opens, as a refused
// connection does.
func TestDashboardEventsModeThatCannotWorkFailsAtOnce(t *testing.T) {
	t.Setenv("TERM", "xterm-256color") // a terminal it could draw on
	s := redistest.Start(t)
	_, tty := openPTY(t)
	var errOut bytes.Buffer
	code := Run([]string{"--url", s.URL(), "--pattern", "ratelimit:*", "--mode", "events"}, tty, &errOut)
	if code != exitFailed {
		t.Errorf("exit code %d, want %d", code, exitFailed)
	}
	if got := errOut.String(); !strings.HasPrefix(got, "countertop: keyspace notifications are off") || !strings.Contains(got, "use --mode tracking or --mode poll") || strings.Count(got, "\n") != 1 {
		t.Errorf("stderr %q, want the one sentence saying why events cannot work", got)
	}
}

// TERM=dumb gets one sentence, and nothing on the terminal: no alternate
// screen, no cursor moves, no queries.
func TestDashboardRefusesADumbTerminal(t *testing.T) {
	t.Setenv("TERM", "dumb")
	screen, tty := openPTY(t)
	read := make(chan string)
	go func() {
		var out bytes.Buffer
		io.Copy(&out, screen) // until the terminal closes (EIO)
		read <- out.String()
	}()
	var errOut bytes.Buffer
	code := Run([]string{"--url", "redis://127.0.0.1:1", "--pattern", "ratelimit:*"}, tty, &errOut)
	tty.Close()
	if got := <-read; got != "" {
		t.Errorf("the terminal got %q", got)
	}
	if got := errOut.String(); code != exitFailed || !strings.HasPrefix(got, "countertop: TERM=dumb says") || !strings.Contains(got, "'countertop snapshot'") || strings.Count(got, "\n") != 1 {
		t.Errorf("exit code %d, stderr %q; want %d and the one sentence about TERM=dumb", code, got, exitFailed)
	}
}
