package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/countertop/countertop/internal/redistest"
)

// writeConfig is the config the write commands are tested with: a rate
// limit with a window, hashes that count in a field, hashes whose fields
// count each with a TTL of its own, page views that live forever, and
// legacy counters whose window nobody wrote down.
const writeConfig = `
[[rule]]
pattern = "ratelimit:*"
limit = 100
window = "60s"

[[rule]]
pattern = "fields:*"
limit = 100
window = "60s"
field = "login"

[[rule]]
pattern = "fq:*"
limit = 10
window = "60s"
field_ttls = true

[[rule]]
pattern = "views:*"
expect_ttl = false

[[rule]]
pattern = "legacy:*"
limit = 10
`

// cli runs countertop in-process against s with writeConfig, as a user
// would from the shell.
func cli(t *testing.T, s *redistest.Server, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "countertop.toml")
	if err := os.WriteFile(path, []byte(writeConfig), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	args = append(args[:1:1], append([]string{"--config", path, "--url", s.URL()}, args[1:]...)...)
	code = Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// wantRun checks an exit code and that stdout and stderr contain the given
// lines (stderr: exactly, when wantErr is "").
func wantRun(t *testing.T, code int, stdout, stderr string, wantCode int, wantOut, wantErr string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, wantCode, stdout, stderr)
	}
	if !strings.Contains(stdout, wantOut) {
		t.Errorf("stdout:\n%s\nwant it to contain %q", stdout, wantOut)
	}
	if wantErr == "" && stderr != "" || !strings.Contains(stderr, wantErr) {
		t.Errorf("stderr:\n%s\nwant %q", stderr, wantErr)
	}
	if wantErr != "" && strings.Count(stderr, "\n") != 1 {
		t.Errorf("stderr is not one line:\n%s", stderr)
	}
}

// ttlSeconds is key's TTL in whole seconds as the server reports it. Time
// passes between setting and reading a TTL: tests allow for 10s.
func ttlSeconds(t *testing.T, s *redistest.Server, key string) int64 {
	t.Helper()
	return s.Do(t, "TTL", key).(int64)
}

// writeFile writes content to a file name in a temporary directory and
// returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// testCommands returns countertop's commands as its list shows them, the
// dashboard first.
func testCommands() []*cobra.Command {
	return listed((&app{stdout: io.Discard, stderr: io.Discard}).newRoot())
}

// nameOf returns the arguments that name c: none for the dashboard.
func nameOf(c *cobra.Command) []string {
	if c.HasParent() {
		return []string{c.Name()}
	}
	return nil
}

// exampleLines returns c's examples, a line each.
func exampleLines(c *cobra.Command) []string {
	return strings.Split(c.Example, "\n")
}
