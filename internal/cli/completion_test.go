package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
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

// The drivers below load a script and complete the last of the words given
// to them (as `countertop snapshot --for`), as each shell does on tab:
// bash through the function that complete -F names, with COMP_WORDS and
// COMP_CWORD; zsh through _countertop with words and CURRENT, compadd
// offering the words that begin with the one being completed, as zsh's
// does; fish through complete -C. They print a word a line.
var completionDrivers = map[string]string{
	"bash": `source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
_countertop
printf '%s\n' "${COMPREPLY[@]}"`,
	"zsh": `compdef() { : }
source "$1"; shift
compadd() {
    local -a offered
    while (( $# )); do
        case $1 in
            (-a) shift; offered+=(${(P)1}) ;;
            (-d) shift ;;
            (--) shift; offered+=("$@"); break ;;
        esac
        shift
    done
    print -rl -- ${(M)offered:#${words[CURRENT]}*}
}
_files() { print -r -- '<files>' }
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
	args := []string{"-c", completionDrivers[shell], "countertop-test", script}
	if shell == "fish" {
		args = []string{"-c", completionDrivers[shell], script}
	}
	out, err := exec.Command(shell, append(args, words...)...).CombinedOutput()
	if err != nil && shell != "zsh" { // zsh's _countertop returns 1 when it offers nothing
		t.Fatalf("%s completing %q: %v\n%s", shell, words, err, out)
	}
	return strings.Fields(string(out))
}

// Each shell's script completes commands, the flags of the command typed
// (only those), and the values of --mode and --format.
func TestCompletion(t *testing.T) {
	t.Parallel()
	for _, shell := range shells {
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
				{[]string{"countertop", "repair", "--d"}, []string{"--dry-run"}},
				{[]string{"countertop", "incr", "ratelimit:api:42", "--no"}, []string{"--no-expire"}},
				{[]string{"countertop", "check", "--read"}, nil},                 // not a flag of check
				{[]string{"countertop", "repair", "--mo"}, nil},                  // repair does not watch
				{[]string{"countertop", "snapshot", "--mo"}, []string{"--mode"}}, // with --watch
				{[]string{"countertop", "check", "--wa"}, []string{"--watch"}},
				{[]string{"countertop", "check", "--int"}, []string{"--interval"}},
				{[]string{"countertop", "snapshot", "--wa"}, []string{"--watch"}},
				{[]string{"countertop", "check", "--url", ""}, nil}, // a URL to type
				{[]string{"countertop", "completion", ""}, []string{"bash", "fish", "zsh"}},
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
			for _, c := range commands {
				t.Run(cmdName(c), func(t *testing.T) {
					words := []string{"countertop", c.name, "-"}
					if c.name == "" {
						words = []string{"countertop", "-"}
					}
					_, help, _ := run(append(words[1:len(words)-1:len(words)-1], "--help")...)
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
}

// The values a script offers for a flag are those its help names, so the
// script cannot offer a value the flag refuses.
func TestCompletionValuesAreTheFlagsOwn(t *testing.T) {
	t.Parallel()
	for _, c := range completionCommands() {
		for _, f := range c.flags {
			for _, v := range f.values {
				if !strings.Contains(f.usage, v) {
					t.Errorf("%s --%s completes %q, which its help (%q) does not name", caseName(c), f.name, v, f.usage)
				}
			}
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if code, out, errOut := run(args...); code != exitFailed || out != "" ||
				errOut != "countertop: completion takes the name of a shell: countertop completion bash, zsh or fish\n" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, out, errOut)
			}
		})
	}
}
