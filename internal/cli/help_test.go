package cli

import (
	"bytes"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/words"
)

// run runs countertop with args and returns what it did.
func run(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = Run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// --help goes to stdout with exit 0 (so that `countertop --help | less`
// shows it), and `help CMD` prints exactly what `CMD --help` does.
func TestHelpOnStdout(t *testing.T) {
	t.Parallel()
	for _, c := range testCommands() {
		t.Run(c.Name(), func(t *testing.T) {
			args := append(nameOf(c), "--help")
			code, out, errOut := run(args...)
			if code != exitOK || errOut != "" || out == "" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q; want the help on stdout and exit 0", args, code, out, errOut)
				return
			}
			if c.HasParent() && !strings.HasPrefix(out, "Usage: countertop "+c.Name()) {
				t.Errorf("%q begins %q, want its usage line", args, strings.SplitN(out, "\n", 2)[0])
			}
			if _, viaHelp, _ := run("help", c.Name()); viaHelp != out && c.HasParent() {
				t.Errorf("help %s differs from %s --help:\n%s\nand\n%s", c.Name(), c.Name(), viaHelp, out)
			}
			for _, line := range strings.Split(out, "\n") {
				if len(line) > 80 {
					t.Errorf("%q: a line of %d columns, wider than a terminal of 80: %q", args, len(line), line)
				}
			}
		})
	}
	_, help, _ := run("help")
	if _, dashHelp, _ := run("--help"); help != dashHelp || !strings.Contains(help, "countertop snapshot [flags]") {
		t.Errorf("countertop help:\n%s\nwant what countertop --help prints:\n%s", help, dashHelp)
	}
	if _, short, _ := run("-help"); short != help {
		t.Errorf("-help differs from --help")
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"help", "bogus"}, "countertop: unknown command \"bogus\": run 'countertop help' for the list\n"},
		{[]string{"help", "incr", "check"}, "countertop: help takes one command, not 2: countertop help COMMAND\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			if code, out, errOut := run(tc.args...); code != exitFailed || out != "" || errOut != tc.want {
				t.Errorf("%q: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errOut, tc.want)
			}
		})
	}
}

// helpFlagNames returns the flags a --help lists, as written there.
func helpFlagNames(help string) []string {
	_, flags, _ := strings.Cut(help, "\nFlags:\n")
	return regexp.MustCompile(`(?m)^  (?:-[a-z], )?(-{1,2}[a-z][a-z0-9-]*)`).FindAllString(flags, -1)
}

// Each command lists the flags it uses, and only those, each written as
// it is typed: --url, with two dashes (package flag prints -url).
func TestHelpListsTheFlagsTheCommandUses(t *testing.T) {
	t.Parallel()
	for _, c := range testCommands() {
		t.Run(c.Name(), func(t *testing.T) {
			name := c.Name()
			if !c.HasParent() {
				name = "dashboard"
			}
			_, help, _ := run(append(nameOf(c), "--help")...)
			listed := helpFlagNames(help)
			for i, f := range listed {
				listed[i] = strings.TrimSpace(f[strings.LastIndex(f, " ")+1:])
				if len(strings.TrimLeft(listed[i], "-")) > 1 && !strings.HasPrefix(listed[i], "--") {
					t.Errorf("%s --help writes %s with one dash", name, listed[i])
				}
			}
			for _, s := range config.Settings() {
				if s.Flag == "" {
					continue
				}
				uses := slices.Contains(s.Commands, name)
				if got := slices.Contains(listed, words.Flag(s.Flag)); got != uses {
					t.Errorf("%s --help lists %s: %t, want %t (its Commands are %q)", name, words.Flag(s.Flag), got, uses, s.Commands)
				}
			}
		})
	}
	// The cases, as a user would read them.
	for _, tc := range []struct {
		cmd, flag string
		listed    bool
	}{
		{"check", "--read-only", false}, {"snapshot", "--enable-events", false}, {"snapshot", "--format", true},
		{"incr", "--by", true}, {"incr", "--no-expire", true}, {"repair", "--dry-run", true}, {"repair", "--mode", false},
	} {
		t.Run(tc.cmd+" "+tc.flag, func(t *testing.T) {
			_, help, _ := run(tc.cmd, "--help")
			if got := slices.Contains(helpFlagNames(help), "  "+tc.flag); got != tc.listed {
				t.Errorf("%s --help lists %s: %t, want %t\n%s", tc.cmd, tc.flag, got, tc.listed, help)
			}
		})
	}
	// A flag a command does not use changes nothing there: refused, not ignored.
	if code, _, errOut := run("check", "--read-only"); code != exitFailed || !strings.Contains(errOut, "--read-only") {
		t.Errorf("check --read-only: exit %d, stderr %q", code, errOut)
	}
}

// Every command that has flags shows two or three examples, and each flag
// an example gives is one its command has.
func TestHelpExamplesUseRealFlags(t *testing.T) {
	t.Parallel()
	for _, c := range testCommands() {
		t.Run(c.Name(), func(t *testing.T) {
			name := strings.Join(nameOf(c), "")
			_, help, _ := run(append(nameOf(c), "--help")...)
			_, flagList, _ := strings.Cut(help, "\nFlags:\n")
			n := 0
			for _, e := range exampleLines(c) {
				if strings.HasPrefix(e, "#") {
					continue
				}
				n++
				if !strings.Contains(help, "\n  "+e+"\n") {
					t.Errorf("%q --help does not show its example %q", name, e)
				}
				_, call, _ := strings.Cut(e, "countertop") // source <(countertop completion bash)
				words := strings.Fields("countertop" + strings.FieldsFunc(call, func(r rune) bool { return r == '|' || r == '>' || r == ')' })[0])
				if words[0] != "countertop" || name != "" && words[1] != name && words[1] != "--version" {
					t.Errorf("example %q is not of countertop %s", e, name)
				}
				for _, w := range words[1:] {
					flag, _, _ := strings.Cut(w, "=")
					if strings.HasPrefix(flag, "-") && flag != "--version" && !regexp.MustCompile(`(?m)^  (-[a-z], )?`+regexp.QuoteMeta(flag)+`\b`).MatchString(flagList) {
						t.Errorf("the example %q gives %s, which countertop %s --help does not list", e, flag, name)
					}
				}
			}
			if has := strings.Contains(help, "\nFlags:\n"); has && (n < 2 || n > 3) || n == 0 {
				t.Errorf("%q --help has %d examples, want two or three (one at least for a command without flags)", name, n)
			}
		})
	}
}

// A mistyped command or flag gets the one meant; a flag of another
// command says whose it is. Each is one line on stderr, exit 2.
func TestDidYouMean(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"snapshto"}, `unknown command "snapshto"; did you mean "snapshot"?`},
		{[]string{"chekc", "--pattern", "a:*"}, `unknown command "chekc"; did you mean "check"?`},
		{[]string{"help", "reapir"}, `unknown command "reapir"; did you mean "repair"?`},
		{[]string{"status"}, `unknown command "status": run 'countertop help' for the list`},
		{[]string{"--intervall", "1s"}, `unknown flag --intervall; did you mean --interval?`},
		{[]string{"snapshot", "--formt", "json"}, `unknown flag --formt; did you mean --format?`},
		{[]string{"incr", "key", "-no-expiry"}, `unknown flag --no-expiry; did you mean --no-expire?`},
		{[]string{"repair", "--dryrun"}, `unknown flag --dryrun; did you mean --dry-run?`},
		{[]string{"check", "--read-only"}, `--read-only is not a flag of check, only of the dashboard, incr and repair: run 'countertop check --help' for the flags`},
		{[]string{"repair", "--mode", "poll"}, `--mode is not a flag of repair, only of the dashboard, snapshot, check and serve: run 'countertop repair --help' for the flags`},
		{[]string{"--bogus"}, `unknown flag --bogus: run 'countertop --help' for the flags`},
		{[]string{"incr", "k", "--count", "many"}, `invalid value "many" for flag --count: parse error: run 'countertop incr --help' for the flags`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, out, errOut := run(tc.args...)
			if code != exitFailed || out != "" || errOut != "countertop: "+tc.want+"\n" {
				t.Errorf("%q: exit %d, stdout %q, stderr %q\nwant exit 2 and %q", tc.args, code, out, errOut, tc.want)
			}
		})
	}
}
