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
	"strings"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
)

// Exit codes, as `check` documents them and every subcommand uses them.
const (
	exitOK       = 0
	exitProblems = 1 // check found problems; a write Redis refused
	exitFailed   = 2 // could not do the job: bad flags, config, connection
)

// usage is what `countertop help` prints.
const usage = `countertop: a terminal dashboard for live Redis counters

Usage:
  countertop [flags]              interactive dashboard
  countertop demo                 dashboard on an embedded Redis with simulated traffic
  countertop snapshot [flags]     print the matched counters once (--format table|json|csv)
  countertop check [flags]        exit 0 healthy, 1 problems found, 2 could not check
  countertop incr KEY [flags]     fire one atomic test increment, print value and TTL (--count N for a burst)
  countertop repair [flags]       EXPIRE <window> NX on stuck and no-expiry counters (--dry-run, --yes)
  countertop version              print the version and the commit it was built from

Run 'countertop <command> --help' for the flags of a command.
`

// commands are the subcommands Run knows, as the first argument.
var commands = []string{"demo", "snapshot", "check", "incr", "repair", "help", "version"}

// Run runs the subcommand args name (the dashboard when none) with the
// rest of args as its flags, and returns the process's exit code: exitOK,
// exitProblems or exitFailed. Errors go to stderr as one countertop: line.
func Run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	if cmd == "" && len(args) == 1 && (args[0] == "--version" || args[0] == "-version") {
		cmd = "version"
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	var err error
	code := exitOK
	switch cmd {
	case "":
		err = runDashboard(ctx, args, stderr)
	case "demo":
		err = runDemo(ctx, args, stderr)
	case "snapshot":
		err = runSnapshot(ctx, args, stdout, stderr)
	case "check":
		code, err = runCheck(ctx, args, stdout, stderr)
	case "incr":
		code, err = runIncr(ctx, args, stdout, stderr)
	case "repair":
		code, err = runRepair(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return exitOK
	case "version":
		fmt.Fprintln(stdout, version())
		return exitOK
	default:
		fmt.Fprintf(stderr, "countertop: unknown command %q: run 'countertop help' for the list\n", cmd)
		return exitFailed
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
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
	}
	return code
}

// parse reads the common flags (plus whatever extra registers) and resolves
// the configuration: flags beat env, env beats the file.
func parse(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (config.Config, []string, error) {
	fs := flag.NewFlagSet(strings.TrimSpace("countertop "+name), flag.ContinueOnError)
	fs.Usage = func() {
		if name == "" {
			fmt.Fprint(fs.Output(), usage)
		} else {
			fmt.Fprintf(fs.Output(), "Usage: countertop %s [flags]\n", name)
		}
		fmt.Fprintln(fs.Output(), "\nFlags:")
		fs.PrintDefaults()
	}
	flags := config.Register(fs)
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

// parseArgs parses args with fs, flags and arguments in any order. --help
// prints fs's usage to stderr; a bad flag is one sentence that points at
// --help, not the whole usage with the error before and after it.
func parseArgs(fs *flag.FlagSet, args []string, stderr io.Writer) ([]string, error) {
	fs.SetOutput(io.Discard)
	rest, err := config.ParseInterspersed(fs, args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(stderr)
		fs.Usage()
	case err != nil:
		err = fmt.Errorf("%v: run '%s --help' for the flags", err, fs.Name())
	}
	return rest, err
}

// noArgs returns an error when a command that takes no arguments got some.
func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: patterns go in --pattern", rest[0])
	}
	return nil
}

// usageOf returns a -help text for fs: how to call the command, what it
// does, then its flags.
func usageOf(fs *flag.FlagSet, synopsis, does string) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", synopsis, does)
		fs.PrintDefaults()
	}
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
