// Package cli is countertop's command line, on cobra: one file per
// subcommand, each declaring its flags and wiring them and the config to
// redisclient, report, ui or demo, and printing the outcome; the work
// itself is those packages'.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

func init() {
	// The list of commands in the order newRoot adds them: the dashboard's
	// first, then reading, writing, and the shell's.
	cobra.EnableCommandSorting = false
}

// An app is one run of countertop: what its commands write to and what
// they leave for Run.
type app struct {
	stdout, stderr io.Writer
	typed          []string // the flags given, as typed (config.CommandLine.Typed)
	code           int      // the exit code the command chose
}

// newRoot returns countertop's commands: the dashboard, with the others
// under it. Each Run has its own, as flags keep their values.
func (a *app) newRoot() *cobra.Command {
	root := a.dashboardCommand()
	root.AddCommand(a.demoCommand(), a.snapshotCommand(), a.checkCommand(), a.incrCommand(), a.repairCommand(),
		a.serveCommand(), a.completionCommand(), a.versionCommand())
	help := a.helpCommand()
	root.AddCommand(help)
	root.SetHelpCommand(help)
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { fmt.Fprint(cmd.OutOrStdout(), helpOf(cmd)) })
	root.SetFlagErrorFunc(flagError)
	root.SilenceErrors, root.SilenceUsage = true, true // Run says them, its way
	root.CompletionOptions.DisableDefaultCmd = true    // completion SHELL is a command of its own
	root.SuggestionsMinimumDistance = 2                // "did you mean" for a typo or two
	root.SetOut(a.stdout)
	root.SetErr(a.stderr)

	// --version prints what version does; --help is the help, and -h is
	// redis-cli's host: cobra's own help flag would take -h. Neither is
	// listed among a command's flags, nor completed.
	root.Version = version()
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().Bool("version", false, "print the version")
	must(root.Flags().MarkHidden("version"))
	for _, c := range append(root.Commands(), root) {
		c.Flags().Bool("help", false, "print this help")
		must(c.Flags().MarkHidden("help"))
		c.DisableFlagsInUseLine = true // each Use says where its flags go
	}
	return root
}

// must panics on err, an error declaring a command, which a test meets
// first.
func must(err error) {
	if err != nil {
		panic(err)
	}
}

// Run runs the subcommand args name (the dashboard when none) with the
// rest of args as its flags, and returns the process's exit code: exitOK,
// exitProblems or exitFailed. Errors go to stderr as one countertop: line;
// --help goes to stdout. Output that could not be written to stdout
// (closed, a full disk) is exitFailed, with its line.
func Run(args []string, stdout, stderr io.Writer) int {
	if f, ok := stdout.(*os.File); ok && startedClosed(f) {
		fmt.Fprintf(stderr, "countertop: %v\n", errStdoutClosed)
		return exitFailed
	}
	out := &output{w: stdout}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	a := &app{stdout: out, stderr: stderr}
	code, err := a.execute(ctx, args)
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

// execute finds the command args name and runs it. A command goes first:
// after the dashboard's flags a command's name is a mistake, where cobra
// would run that command.
func (a *app) execute(ctx context.Context, args []string) (int, error) {
	root := a.newRoot()
	cmd, rest := root, args
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case cobra.ShellCompRequestCmd, cobra.ShellCompNoDescRequestCmd: // a shell completing a word
			cmd, rest = nil, nil
		default:
			if cmd = subcommand(root, args[0]); cmd == nil {
				return exitFailed, unknownCommand(root, args[0])
			}
			rest = args[1:]
		}
	}
	if cmd != nil {
		line, err := config.Prepare(cmd.Flags(), rest)
		if err != nil {
			return exitFailed, fmt.Errorf("%w: %s", err, flagsHint(cmd))
		}
		if cmd == root && len(line.Positional) > 0 {
			if subcommand(root, line.Positional[0]) != nil {
				// countertop --url ... check: a line a monitor would run.
				return exitFailed, fmt.Errorf("%q is a command, and a command goes first: countertop %s [flags]", line.Positional[0], line.Positional[0])
			}
			return exitFailed, noArgs(line.Positional)
		}
		a.typed = line.Typed
		args = append(args[:len(args)-len(rest):len(args)-len(rest)], line.Args...)
	}
	root.SetArgs(append([]string{}, args...)) // not nil, which cobra takes for os.Args
	err := root.ExecuteContext(ctx)
	return a.code, err
}

// subcommand returns the command of root called name, nil for none.
func subcommand(root *cobra.Command, name string) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == name {
			return c
		}
	}
	return nil
}

// run adapts a command's body, which returns its exit code beside its
// error, to cobra's RunE.
func (a *app) run(body func(cmd *cobra.Command, args []string) (int, error)) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		code, err := body(cmd, args)
		a.code = code
		return err
	}
}

// settings adds to cmd the flags of the settings that command (as
// config.Setting.Commands names it) uses, and returns what reads them,
// with the environment and the config file, once they are parsed: flags
// beat env, env beats the file.
func (a *app) settings(cmd *cobra.Command, command string) func() (config.Config, error) {
	flags := config.RegisterFor(cmd.Flags(), command)
	return func() (config.Config, error) { return config.Load(flags, a.typed, os.Getenv) }
}

// unknownCommand is the error for a first argument that names no command,
// with the one meant when cobra finds one near enough.
func unknownCommand(root *cobra.Command, name string) error {
	if guesses := root.SuggestionsFor(name); len(guesses) > 0 {
		return fmt.Errorf("unknown command %q; did you mean %q?", name, guesses[0])
	}
	return fmt.Errorf("unknown command %q: run 'countertop help' for the list", name)
}

// flagsHint is what an error about cmd's flags ends with.
func flagsHint(cmd *cobra.Command) string {
	return fmt.Sprintf("run '%s --help' for the flags", cmd.CommandPath())
}

// flagError is the sentence for err, pflag's error parsing cmd's flags:
// the flag meant by an unknown one when one is near enough (pflag has no
// "did you mean"), or the commands that have it when it is another
// command's.
func flagError(cmd *cobra.Command, err error) error {
	help := flagsHint(cmd)
	var (
		needs   *pflag.ValueRequiredError
		invalid *pflag.InvalidValueError
		unknown *pflag.NotExistError
	)
	switch {
	case errors.As(err, &needs) && needs.GetFlag().Name == "host":
		return fmt.Errorf("-h needs a host, as in redis-cli (-h HOST): for help, run '%s --help'", cmd.CommandPath())
	case errors.As(err, &needs):
		return fmt.Errorf("flag needs an argument: %s: %s", spelled(needs.GetSpecifiedName(), needs.GetSpecifiedShortnames()), help)
	case errors.As(err, &invalid):
		return fmt.Errorf("invalid value %q for flag --%s: parse error: %s", invalid.GetValue(), invalid.GetFlag().Name, help)
	case !errors.As(err, &unknown):
		return fmt.Errorf("%w: %s", err, help)
	}
	name, short := unknown.GetSpecifiedName(), unknown.GetSpecifiedShortnames() != ""
	typed := spelled(name, unknown.GetSpecifiedShortnames())
	if !short {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden {
				names = append(names, f.Name)
			}
		})
		if guess := suggest.Nearest(name, names); guess != "" {
			return fmt.Errorf("unknown flag %s; did you mean --%s?", typed, guess)
		}
	}
	for _, s := range config.Settings() {
		if s.Flag != "" && (!short && s.Flag == name || short && s.Short == name) {
			var others []string
			for _, c := range s.Commands {
				others = append(others, strings.Replace(c, "dashboard", "the dashboard", 1))
			}
			return fmt.Errorf("%s is not a flag of %s, only of %s: %s", typed, commandTitle(cmd), words.And(others), help)
		}
	}
	return fmt.Errorf("unknown flag %s: %s", typed, help)
}

// spelled returns a flag named in one of pflag's errors as it was typed:
// -h when it came among one-letter flags, --url otherwise.
func spelled(name, shorts string) string {
	if shorts != "" {
		return "-" + name
	}
	return "--" + name
}

// commandTitle names cmd as messages do: "the dashboard", "check".
func commandTitle(cmd *cobra.Command) string {
	if cmd.HasParent() {
		return cmd.Name()
	}
	return "the dashboard"
}

// noArgs returns an error when a command that takes no arguments got some.
func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: patterns go in --pattern", rest[0])
	}
	return nil
}

// plural returns "s" unless n is 1.
func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
