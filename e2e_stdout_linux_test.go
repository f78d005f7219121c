package main

// A stdout that cannot be written (closed with >&-, a full disk: /dev/full)
// fails every command, the real binary's, with one sentence on stderr.

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// runWithStdout runs the binary with args, its stdout closed or sent to /dev/full
// (where), and returns its exit code and stderr.
func runWithStdout(t *testing.T, where string, args ...string) (int, string) {
	t.Helper()
	var cmd *exec.Cmd
	switch where {
	case "closed":
		cmd = exec.Command("sh", append([]string{"-c", `exec "$0" "$@" >&-`, binary(t)}, args...)...)
	case "full":
		full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer full.Close()
		cmd = exec.Command(binary(t), args...)
		cmd.Stdout = full
	}
	var errOut bytes.Buffer
	cmd.Stderr = &errOut
	err := cmd.Run()
	if exit := (*exec.ExitError)(nil); err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), errOut.String()
}

func TestStdoutThatCannotBeWrittenFailsEveryCommand(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do(t, "SET", "ratelimit:api:out", "5", "EX", "100")
	cfg := writeFile(t, "countertop.toml", writeConfig)
	redis := []string{"--url", srv.URL(), "--config", cfg, "--pattern", "ratelimit:*"}
	for _, args := range [][]string{
		append([]string{"snapshot"}, redis...),
		append([]string{"snapshot", "--format", "json"}, redis...),
		append([]string{"check"}, redis...),
		append([]string{"check", "--format", "json"}, redis...),
		append([]string{"incr", "ratelimit:api:out"}, redis[:4]...),
		{"version"},
		{"--help"},
		{"help", "snapshot"},
		{"completion", "bash"},
	} {
		for _, where := range []string{"closed", "full"} {
			code, stderr := runWithStdout(t, where, args...)
			want := "countertop: could not write to stdout (no space left on device), so the output is incomplete"
			if where == "closed" {
				want = "countertop: stdout is closed"
			}
			if code != 2 || !strings.HasPrefix(stderr, want) || strings.Count(stderr, "\n") != 1 {
				t.Errorf("countertop %s with stdout %s: exit %d, stderr %q; want 2 and one line that starts %q",
					strings.Join(args, " "), where, code, stderr, want)
			}
		}
	}
}

// A repair whose lines cannot be written stops at the first: the keys
// after it are left as they were, and the sentence says how many.
func TestRepairStopsWhenStdoutFails(t *testing.T) {
	srv := redistest.Start(t)
	keys := []string{"ratelimit:api:a", "ratelimit:api:b", "ratelimit:api:c", "ratelimit:api:d"}
	for _, k := range keys {
		srv.Do(t, "SET", k, "5") // no TTL: each needs repairing
	}
	cfg := writeFile(t, "countertop.toml", writeConfig)
	code, stderr := runWithStdout(t, "full", "repair", "--yes", "--url", srv.URL(), "--config", cfg, "--pattern", "ratelimit:*")
	if code != 2 || !strings.Contains(stderr, "repair stopped there: 1 repaired, 3 not touched") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q; want 2 and one line saying 1 repaired, 3 not touched", code, stderr)
	}
	repaired := 0
	for _, k := range keys {
		if srv.Do(t, "PTTL", k).(int64) > 0 {
			repaired++
		}
	}
	if repaired != 1 {
		t.Errorf("%d keys have a TTL now, want the 1 whose line failed", repaired)
	}
}

// --help and version are not the dashboard: piped, they print as ever.
func TestHelpAndVersionPrintWhenPiped(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"version"}, {"help", "check"}} {
		out, err := exec.Command(binary(t), args...).Output()
		if err != nil || !strings.Contains(string(out), "countertop") {
			t.Errorf("countertop %s | cat: %v, printed %q", strings.Join(args, " "), err, out)
		}
	}
}
