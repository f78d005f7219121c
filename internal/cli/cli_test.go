package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// countertop version names the build; a bad flag is one line that points
// at --help.
func TestVersionAndUsage(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"version"}, {"--version"}} {
		t.Run(args[0], func(t *testing.T) {
			var out, errOut bytes.Buffer
			// A test binary carries no commit: the line says so rather than
			// leave it out.
			if code := Run(args, &out, &errOut); code != exitOK || !strings.HasPrefix(out.String(), "countertop devel (commit unknown), go") || errOut.Len() > 0 {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out.String(), errOut.String())
			}
		})
	}
	// A release (go install ...@v1.2.3) is named by its version, which
	// says which commit it is; a build from a checkout by its commit.
	release := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}
	checkout := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: "504b73e8975d0123456789"}, {Key: "vcs.modified", Value: "true"}}}
	for info, want := range map[*debug.BuildInfo]string{release: "countertop v1.2.3, go1.26.8", checkout: "countertop devel 504b73e8975d (modified), go1.26.8"} {
		t.Run(info.Main.Version, func(t *testing.T) {
			if got := versionOf(info, "", ""); got != want {
				t.Errorf("versionOf(%+v) = %q, want %q", info.Main, got, want)
			}
		})
	}
	// A release goreleaser built is stamped with its tag and commit, which
	// -buildvcs=false or a tree without .git would leave out.
	stamped := &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}
	if got, want := versionOf(stamped, "v1.2.3", "504b73e8975d0123456789"), "countertop v1.2.3 504b73e8975d, go1.26.8"; got != want {
		t.Errorf("a stamped release: %q, want %q", got, want)
	}

	var out, errOut bytes.Buffer
	if code := Run([]string{"snapshot", "--bogus"}, &out, &errOut); code != exitFailed ||
		errOut.String() != "countertop: unknown flag --bogus: run 'countertop snapshot --help' for the flags\n" {
		t.Errorf("snapshot --bogus: exit %d, stderr %q", code, errOut.String())
	}
	// A monitor's line with the command after a flag: say where it goes,
	// before connecting anywhere.
	errOut.Reset()
	if code := Run([]string{"--url", "redis://127.0.0.1:1/0", "check"}, &out, &errOut); code != exitFailed ||
		errOut.String() != "countertop: \"check\" is a command, and a command goes first: countertop check [flags]\n" {
		t.Errorf("--url ... check: exit %d, stderr %q", code, errOut.String())
	}
}

// A URL that does not parse is blamed on where it came from: the file and
// line, REDIS_URL or --url.
func TestBadURLNamesItsSource(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "countertop.toml")
	if err := os.WriteFile(path, []byte("[redis]\nurl = \"redis://127.0.0.1:1/abc\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string // the source blamed
		env  string
		args []string
		want string
	}{
		{"file", "", []string{"snapshot", "--config", path}, path + `:2: redis.url is not a valid Redis URL (invalid database number: "abc")`},
		{"REDIS_URL", "redis://127.0.0.1:1/x?y=1", []string{"snapshot", "--config", path}, `REDIS_URL is not a valid Redis URL (invalid database number: "x")`},
		{"--url", "redis://127.0.0.1:1/x", []string{"snapshot", "--config", path, "--url", "redis://:pw@127.0.0.1:1/0?foo=bar"}, `--url is not a valid Redis URL (unexpected option: foo)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("REDIS_URL", tc.env)
			var out, errOut bytes.Buffer
			if code := Run(tc.args, &out, &errOut); code != exitFailed || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("%v with REDIS_URL=%q: exit %d, stderr %q\nwant it to say %q", tc.args, tc.env, code, errOut.String(), tc.want)
			}
		})
	}
}

// A config file with several problems gets a line for each, each naming
// its file and line, not one line with the line breaks escaped.
func TestConfigProblemsALineEach(t *testing.T) {
	t.Parallel()
	path := writeFile(t, "c.toml", "[[rule]]\npattern = \"a:*\"\nlimit = \"100\"\nwarn_at = 1.5\n")
	var out, errOut bytes.Buffer
	code := Run([]string{"snapshot", "--config", path, "--url", "redis://127.0.0.1:1/0"}, &out, &errOut)
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if code != exitFailed || len(lines) != 2 ||
		!strings.HasPrefix(lines[0], "countertop: "+path+":3: rule[1].limit") || !strings.HasPrefix(lines[1], path+":4: rule[1].warn_at") {
		t.Errorf("exit %d, stderr %q: want a line for each problem", code, errOut.String())
	}
}
