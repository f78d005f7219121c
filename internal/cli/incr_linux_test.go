package cli

import (
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

// TestIncrInterrupt stops a paced burst with ctrl+c (SIGINT): it reports
// what it fired, every increment it counts is in the counter, and it exits
// 2 (the burst was not done). Not
// parallel: the signal reaches every command running in the process.
func TestIncrInterrupt(t *testing.T) {
	s := redistest.Start(t)
	watcher := s.Client(t)
	go func() {
		for n, _ := watcher.Get(t.Context(), "ratelimit:slow").Int(); n < 5; n, _ = watcher.Get(t.Context(), "ratelimit:slow").Int() {
			time.Sleep(5 * time.Millisecond)
		}
		syscall.Kill(os.Getpid(), syscall.SIGINT) // Run is inside the burst, catching SIGINT
	}()
	code, out, errOut := cli(t, s, "incr", "ratelimit:slow", "--count", "100000", "--rate", "200/s", "--clients", "2")
	got := s.Do(t, "GET", "ratelimit:slow").(string)
	// Fewer than asked for: not done, so not exit 0, whatever was fired.
	wantRun(t, code, out, errOut, exitFailed, " of 100000 increments from 2 connections in ", "countertop: interrupted after "+got+" of 100000 increments\n")
	for _, want := range []string{"fired " + got + " of", "(interrupted)\n", "expected +" + got + ", observed +" + got + "\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout:\n%s\nwant %q", out, want)
		}
	}
}
