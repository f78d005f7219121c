// Package cli is countertop's command line: one file per subcommand, each
// wiring flags and config to redisclient, report, ui or demo and printing
// the outcome; the work itself is those packages'.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/suggest"
	"github.com/countertop/countertop/internal/words"
	"github.com/countertop/countertop/model"
)

// Exit codes, as `check` documents them and every subcommand uses them.
const (
	exitOK       = 0
	exitProblems = 1 // check found problems; a write Redis refused
	exitFailed   = 2 // could not do the job: bad flags, config, connection, stdout
)

// A command is one of countertop's subcommands: how to call it, what its
// --help says, and what runs it.
type command struct {
	name     string   // as typed; "" for the dashboard
	args     string   // what follows the name in its synopsis: "KEY [flags]"
	summary  string   // its line in the list of commands
	about    string   // what --help says it does, before the examples
	examples []string // command lines, each after a "# ..." line saying what it does, if any
	run      func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error)
}

// commands are the dashboard and the subcommands, in the order the list of
// commands shows them; init sets them, as their help reads the list.
var commands []*command

// The commands that return only an error exit 0 without one.
func init() {
	commands = []*command{
		{name: "", args: "[flags]", summary: "interactive dashboard", about: aboutDashboard, examples: dashboardExamples,
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
				return exitOK, runDashboard(ctx, args, stdout, stderr)
			}},
		{name: "demo", summary: "a dashboard on simulated traffic (embedded Redis)", about: aboutDemo, examples: demoExamples,
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
				return exitOK, runDemo(ctx, args, stdout, stderr)
			}},
		{name: "snapshot", args: "[flags]", summary: "print the matched counters once and exit", about: aboutSnapshot, examples: snapshotExamples,
			run: func(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
				return exitOK, runSnapshot(ctx, args, stdout, stderr)
			}},
		{name: "check", args: "[flags]", summary: "exit 0 healthy, 1 problems, 2 could not check", about: aboutCheck, examples: checkExamples, run: runCheck},
		{name: "incr", args: "KEY [--by N] [--count N [--rate R/s]] [flags]",
			summary: "fire a test increment, print the value and TTL", about: aboutIncr, examples: incrExamples, run: runIncr},
		{name: "repair", args: "[--dry-run] [--yes] [flags]", summary: "PEXPIRE KEY MS NX on stuck and no-expiry counters", about: aboutRepair, examples: repairExamples, run: runRepair},
		{name: "completion", args: "SHELL", summary: "print a completion script for bash, zsh or fish", about: aboutCompletion, examples: completionExamples, run: runCompletion},
		{name: "help", args: "[COMMAND]", summary: "print the help of countertop, or of a command", about: aboutHelp, examples: helpExamples, run: runHelp},
		{name: "version", summary: "print the version and the commit of the build", about: aboutVersion, examples: versionExamples, run: runVersion},
	}
}

// commandNamed returns the command called name ("" for the dashboard),
// nil for none.
func commandNamed(name string) *command {
	for _, c := range commands {
		if c.name == name {
			return c
		}
	}
	return nil
}

// Run runs the subcommand args name (the dashboard when none) with the
// rest of args as its flags, and returns the process's exit code: exitOK,
// exitProblems or exitFailed. Errors go to stderr as one countertop: line;
// --help goes to stdout. Output that could not be written to stdout
// (closed, a full disk) is exitFailed, with its line.
func Run(args []string, stdout, stderr io.Writer) int {
	name := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	}
	if name == "" && len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		name, args = "version", nil
	}
	cmd := commandNamed(name)
	if cmd == nil {
		fmt.Fprintf(stderr, "countertop: %v\n", unknownCommand(name))
		return exitFailed
	}
	if f, ok := stdout.(*os.File); ok && startedClosed(f) {
		fmt.Fprintf(stderr, "countertop: %v\n", errStdoutClosed)
		return exitFailed
	}
	out := &output{w: stdout}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	code, err := cmd.run(ctx, args, out, stderr)
	if help := (*helpError)(nil); errors.As(err, &help) {
		fmt.Fprint(out, help.text)
		err, code = nil, exitOK
	}
	// Output that did not reach stdout fails the command, whatever it did
	// besides; an error that is that failure is said once.
	if failed := stdoutFailed(out); failed != nil {
		if err == nil || !errors.Is(err, failed) {
			fmt.Fprintf(stderr, "countertop: %v\n", failed)
		}
		code = exitFailed
	}
	if err == nil {
		return code
	}
	// The sentences escape what they quote; this catches what one missed.
	// Several of them (a config file's problems) come a line each.
	lines := strings.Split(err.Error(), "\n")
	for i := range lines {
		lines[i] = model.SafeText(lines[i])
	}
	fmt.Fprintf(stderr, "countertop: %s\n", strings.Join(lines, "\n"))
	if code == exitOK {
		code = exitFailed
	}
	return code
}

// unknownCommand is the error for a first argument that names no command,
// with the one meant when it is near enough to one.
func unknownCommand(name string) error {
	var names []string
	for _, c := range commands {
		if c.name != "" {
			names = append(names, c.name)
		}
	}
	if guess := suggest.Nearest(name, names); guess != "" {
		return fmt.Errorf("unknown command %q; did you mean %q?", name, guess)
	}
	return fmt.Errorf("unknown command %q: run 'countertop help' for the list", name)
}

// runHelp prints countertop's help, or with a command's name what that
// command's --help prints.
func runHelp(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("countertop help", flag.ContinueOnError)
	rest, err := parseArgs(fs, args, stderr)
	switch {
	case err != nil:
		return exitFailed, err
	case len(rest) > 1:
		return exitFailed, fmt.Errorf("help takes one command, not %d: countertop help COMMAND", len(rest))
	case len(rest) == 0:
		rest = []string{""} // countertop help is countertop --help
	}
	cmd := commandNamed(rest[0])
	if cmd == nil {
		return exitFailed, unknownCommand(rest[0])
	}
	return cmd.run(ctx, []string{"--help"}, stdout, stderr)
}

// runVersion prints the version line.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("countertop version", flag.ContinueOnError)
	rest, err := parseArgs(fs, args, stderr)
	if err != nil {
		return exitFailed, err
	}
	if len(rest) > 0 {
		return exitFailed, fmt.Errorf("unexpected argument %q: version takes none", rest[0])
	}
	_, err = fmt.Fprintln(stdout, version())
	return exitOK, err
}

// parse reads the flags of the settings command uses (plus whatever extra
// registers) and resolves the configuration: flags beat env, env beats the
// file. name is the command's ("" for the dashboard).
func parse(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, []string, error) {
	fs := flag.NewFlagSet(strings.TrimSpace("countertop "+name), flag.ContinueOnError)
	settingsOf := name
	if name == "" {
		settingsOf = "dashboard"
	}
	flags := config.RegisterFor(fs, settingsOf)
	if extra != nil {
		extra(fs)
	}
	rest, err := parseArgs(fs, args, stderr)
	if err != nil {
		return config.Config{}, nil, err
	}
	cfg, err := config.Load(flags, fs, os.Getenv)
	return cfg, rest, err
}

// helpError is what parseArgs returns for --help: the command's help, for
// Run to print on stdout, and its flags.
type helpError struct {
	text string
	fs   *flag.FlagSet
}

func (e *helpError) Error() string { return "help requested" }
func (e *helpError) Unwrap() error { return flag.ErrHelp }

// parseArgs parses args with fs, flags and arguments in any order. --help
// returns a *helpError; a bad flag is one sentence that points at --help,
// not the whole usage with the error before and after it.
func parseArgs(fs *flag.FlagSet, args []string, _ io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	rest, err := config.ParseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return nil, &helpError{text: helpOf(fs), fs: fs}
	case err != nil:
		return nil, flagError(fs, err)
	}
	return rest, nil
}

// flagError is the sentence for err, package flag's error parsing fs: the
// flag meant by an unknown one when one is near enough, or the commands
// that have it when it is another command's.
func flagError(fs *flag.FlagSet, err error) error {
	help := fmt.Sprintf("run '%s --help' for the flags", fs.Name())
	if err.Error() == "flag needs an argument: -h" && fs.Lookup("h") != nil {
		return fmt.Errorf("-h needs a host, as in redis-cli (-h HOST): for help, run '%s --help'", fs.Name())
	}
	name, unknown := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !unknown {
		return fmt.Errorf("%s: %s", withDashes(err.Error()), help)
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if guess := suggest.Nearest(name, names); guess != "" {
		return fmt.Errorf("unknown flag %s; did you mean %s?", words.Flag(name), words.Flag(guess))
	}
	for _, s := range config.Settings() {
		if s.Flag == name {
			var others []string
			for _, c := range s.Commands {
				if c == "dashboard" {
					c = "the dashboard"
				}
				others = append(others, c)
			}
			return fmt.Errorf("%s is not a flag of %s, only of %s: %s", words.Flag(name), commandTitle(fs), words.And(others), help)
		}
	}
	return fmt.Errorf("unknown flag %s: %s", words.Flag(name), help)
}

// commandTitle names the command whose flags fs holds: "the dashboard",
// "check".
func commandTitle(fs *flag.FlagSet) string {
	if name := strings.TrimSpace(strings.TrimPrefix(fs.Name(), "countertop")); name != "" {
		return name
	}
	return "the dashboard"
}

// withDashes returns msg, one of package flag's errors, with the flags it
// names written as help writes them: --interval, not the -interval that
// package flag writes.
func withDashes(msg string) string {
	parts := strings.Split(msg, " ")
	for i, w := range parts {
		name := strings.TrimSuffix(strings.TrimPrefix(w, "-"), ":")
		if strings.HasPrefix(w, "-") && flagName.MatchString(name) {
			parts[i] = strings.Replace(w, "-"+name, words.Flag(name), 1)
		}
	}
	return strings.Join(parts, " ")
}

// flagName matches the name of a flag, as countertop's are spelled.
var flagName = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// noArgs returns an error when a command that takes no arguments got some.
func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: patterns go in --pattern", rest[0])
	}
	return nil
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
