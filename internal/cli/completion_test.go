package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/pflag"
)

// completionScript writes countertop's completion script for shell to a
// file and returns its path.
func completionScript(t *testing.T, shell string) string {
	t.Helper()
	code, out, errOut := run("completion", shell)
	if code != exitOK || errOut != "" {
		t.Fatalf("completion %s: exit %d, stderr %q", shell, code, errOut)
	}
	path := filepath.Join(t.TempDir(), "countertop."+shell)
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMain lets the test binary stand in for countertop: a completion
// script asks `countertop __complete WORDS...` for the words that fit, and
// the shells find this binary under that name (countertopOnPath).
func TestMain(m *testing.M) {
	if os.Getenv("COUNTERTOP_TEST_AS_COUNTERTOP") == "1" {
		os.Exit(Run(os.Args[1:], os.Stdout, os.Stderr))
	}
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

var (
	binOnce sync.Once
	binDir  string // holds countertop, a link to this test binary
	binErr  error
)

// countertopOnPath returns the environment for a shell in which
// `countertop` runs this package's Run.
func countertopOnPath(t *testing.T) []string {
	t.Helper()
	binOnce.Do(func() {
		var self string
		if self, binErr = os.Executable(); binErr != nil {
			return
		}
		if binDir, binErr = os.MkdirTemp("", "countertop-completion-"); binErr != nil {
			return
		}
		binErr = os.Symlink(self, filepath.Join(binDir, "countertop"))
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return append(os.Environ(), "PATH="+binDir+string(os.PathListSeparator)+os.Getenv("PATH"), "COUNTERTOP_TEST_AS_COUNTERTOP=1")
}

// bashCompletionLib is the bash-completion package's library, which
// cobra's bash script needs (for _init_completion), as users' shells have it.
const bashCompletionLib = "/usr/share/bash-completion/bash_completion"

// The drivers below load a script and complete the last of the words given
// to them (as `countertop snapshot --for`), as each shell does on tab:
// bash through the function that complete -F names, with COMP_WORDS,
// COMP_CWORD, COMP_LINE and COMP_POINT, then, as complete -o default does,
// file names when the script offered nothing and did not say no files
// (cobra's NoFileComp directive, 4); zsh through _countertop with words
// and CURRENT, _describe offering the words of its array that begin with
// the one being completed, as zsh's does; fish through complete -C. They
// print a word a line.
var completionDrivers = map[string]string{
	"bash": `source ` + bashCompletionLib + `
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; COMPREPLY=()
__start_countertop 2>/dev/null # compopt fails outside a real tab
if ((${#COMPREPLY[@]} == 0)); then
    directive=$(countertop __complete "${@:2}" 2>/dev/null | tail -n 1)
    (( ${directive#:} & 4 )) || COMPREPLY=($(compgen -f -- "${COMP_WORDS[COMP_CWORD]}"))
fi
printf '%s\n' "${COMPREPLY[@]}"`,
	"zsh": `compdef() { : }
source "$1"; shift
_describe() {
    while [[ $1 == -* ]]; do shift; done
    local -a offered
    local e
    for e in "${(@P)2}"; do
        e=${e//\\:/$'\0'} # a colon in a word is \: before its :description
        offered+=("${${e%%:*}//$'\0'/:}")
    done
    offered=(${(M)offered:#${words[CURRENT]}*})
    (( $#offered )) || return 1
    print -rl -- $offered
}
_arguments() { print -r -- '<files>' }
words=("$@"); CURRENT=$#
_countertop`,
	"fish": `source $argv[1]
complete -C (string join ' ' -- $argv[2..-1]) | string replace -r '\t.*' ''
true`,
}

// complete returns what shell offers for the last of words.
func complete(t *testing.T, shell, script string, words ...string) []string {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Fatalf("%s not found on PATH: install it (apt-get install %s) or run `make test`, which does", shell, shell)
	}
	if _, err := os.Stat(bashCompletionLib); shell == "bash" && err != nil {
		t.Fatalf("%s: %v: install bash-completion (apt-get install bash-completion) or run `make test`, which does", bashCompletionLib, err)
	}
	args := []string{"-c", completionDrivers[shell], "countertop-test", script}
	if shell == "fish" {
		args = []string{"-c", completionDrivers[shell], script}
	}
	cmd := exec.Command(shell, append(args, words...)...)
	cmd.Env = countertopOnPath(t)
	out, err := cmd.CombinedOutput()
	if err != nil && shell != "zsh" { // zsh's _countertop returns 1 when it offers nothing
		t.Fatalf("%s completing %q: %v\n%s", shell, words, err, out)
	}
	return strings.Fields(string(out))
}

// Each shell's script completes commands, the flags of the command typed
// (only those), and the values of --mode and --format.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range []string{"bash", "zsh", "fish"} { // PowerShell: TestPowerShellCompletion
		t.Run(shell, func(t *testing.T) {
			t.Parallel()
			script := completionScript(t, shell)
			for _, tc := range []struct {
				words []string
				want  []string
			}{
				{[]string{"countertop", "sna"}, []string{"snapshot"}},
				{[]string{"countertop", "snapshot", "--for"}, []string{"--format"}},
				{[]string{"countertop", "snapshot", "--format", ""}, []string{"csv", "json", "table"}},
				{[]string{"countertop", "--mode", "e"}, []string{"events"}},
				{[]string{"countertop", "--mode", "t"}, []string{"tracking"}},
				{[]string{"countertop", "--url", "redis://h:1/0", "--mo"}, []string{"--mode"}},
				{[]string{"countertop", "repair", "--dr"}, []string{"--dry-run"}},
				{[]string{"countertop", "repair", "--d"}, []string{"--db", "--dry-run"}},
				{[]string{"countertop", "incr", "ratelimit:api:42", "--no"}, []string{"--no-expire"}},
				{[]string{"countertop", "check", "--read"}, nil},                 // not a flag of check
				{[]string{"countertop", "repair", "--mo"}, nil},                  // repair does not watch
				{[]string{"countertop", "snapshot", "--mo"}, []string{"--mode"}}, // with --watch
				{[]string{"countertop", "check", "--wa"}, []string{"--watch"}},
				{[]string{"countertop", "check", "--int"}, []string{"--interval"}},
				{[]string{"countertop", "snapshot", "--wa"}, []string{"--watch"}},
				{[]string{"countertop", "check", "--url", ""}, nil}, // a URL to type
				{[]string{"countertop", "completion", ""}, []string{"bash", "fish", "powershell", "zsh"}},
				{[]string{"countertop", "-s", "/run/redis.sock", "--mo"}, []string{"--mode"}},
				{[]string{"countertop", "check", "--format", ""}, []string{"json", "text"}},
				{[]string{"countertop", "help", "re"}, []string{"repair"}},
				{[]string{"countertop", "c"}, []string{"check", "completion"}},
			} {
				t.Run(strings.Join(tc.words[1:], " "), func(t *testing.T) {
					got := complete(t, shell, script, tc.words...)
					slices.Sort(got)
					if !slices.Equal(got, tc.want) {
						t.Errorf("%s completes %q to %q, want %q", shell, strings.Join(tc.words, " "), got, tc.want)
					}
				})
			}
			// Every flag the command's --help lists, and no other.
			for _, c := range testCommands() {
				t.Run("flags of "+c.Name(), func(t *testing.T) {
					words := append(append([]string{"countertop"}, nameOf(c)...), "-")
					_, help, _ := run(append(nameOf(c), "--help")...)
					var want []string
					_, flags, _ := strings.Cut(help, "\nFlags:\n")
					for _, line := range strings.Split(flags, "\n") {
						names, _, _ := strings.Cut(strings.TrimSpace(line), "  ")
						for _, n := range strings.Split(names, ", ") {
							if strings.HasPrefix(line, "  -") {
								want = append(want, strings.Fields(n)[0])
							}
						}
					}
					got := complete(t, shell, script, words...)
					slices.Sort(got)
					slices.Sort(want)
					if !slices.Equal(got, want) {
						t.Errorf("%s completes %q to\n%q\nwant the flags its --help lists:\n%q", shell, strings.Join(words, " "), got, want)
					}
				})
			}
		})
	}
	// A file's name after --config.
	script := completionScript(t, "bash")
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "countertop.toml"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := complete(t, "bash", script, "countertop", "check", "--config", filepath.Join(dir, "counter")); !slices.Equal(got, []string{filepath.Join(dir, "countertop.toml")}) {
		t.Errorf("bash completes --config %s to %q, want the file", filepath.Join(dir, "counter"), got)
	}
	// The names of the servers and groups in the config file after --server.
	servers := filepath.Join(dir, "servers.toml")
	if err := os.WriteFile(servers, []byte("[[server]]\nname = \"eu-1\"\nurl = \"redis://a:1/0\"\n[[server]]\nname = \"eu-2\"\nurl = \"redis://b:1/0\"\n"+
		"[[server]]\nname = \"us\"\nurl = \"redis://c:1/0\"\n[[shards]]\nname = \"ring\"\nservers = [\"eu-1\", \"eu-2\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string][]string{"": {"eu-1", "eu-2", "ring", "us"}, "eu": {"eu-1", "eu-2"}} {
		got := complete(t, "bash", script, "countertop", "snapshot", "--config", servers, "--server", word)
		if slices.Sort(got); !slices.Equal(got, want) {
			t.Errorf("bash completes --server %q to %q, want %q", word, got, want)
		}
	}
}

// The values a script offers for a flag are those its help names, so the
// script cannot offer a value the flag refuses.
func TestCompletionValuesAreTheFlagsOwn(t *testing.T) {
	t.Parallel()
	for _, c := range testCommands() {
		t.Run(c.Name(), func(t *testing.T) {
			c.Flags().VisitAll(func(f *pflag.Flag) {
				complete, ok := c.GetFlagCompletionFunc(f.Name)
				if !ok {
					if f.NoOptDefVal == "" && !f.Hidden {
						t.Errorf("%s --%s takes a value, and nothing says what completes it", c.Name(), f.Name)
					}
					return
				}
				if f.Name == "server" {
					return // the names in the config file (TestCompletion)
				}
				values, _ := complete(c, nil, "")
				for _, v := range values {
					if !strings.Contains(f.Usage, v) {
						t.Errorf("%s --%s completes %q, which its help (%q) does not name", c.Name(), f.Name, v, f.Usage)
					}
				}
			})
		})
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		t.Run("refused "+strings.Join(args, " "), func(t *testing.T) {
			if code, out, errOut := run(args...); code != exitFailed || out != "" ||
				errOut != "countertop: completion takes the name of a shell: countertop completion bash, zsh, fish or powershell\n" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		})
	}
}

// No PowerShell is packaged for this machine, so its script is checked
// for what it registers and for the request it sends, which the other
// shells' tests answer: countertop __complete with the words typed.
func TestPowerShellCompletion(t *testing.T) {
	t.Parallel()
	code, script, errOut := run("completion", "powershell")
	if code != exitOK || errOut != "" {
		t.Fatalf("completion powershell: exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"Register-ArgumentCompleter -CommandName 'countertop'", "__complete"} {
		if !strings.Contains(script, want) {
			t.Errorf("the PowerShell script does not say %q", want)
		}
	}
	_, out, _ := run("__complete", "snapshot", "--format", "")
	if got := strings.Fields(out); !slices.Equal(got, []string{"table", "json", "csv", ":4"}) {
		t.Errorf("countertop __complete snapshot --format '': %q, want the formats and no file names", got)
	}
}
