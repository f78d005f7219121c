// Command countertop is a terminal dashboard for live Redis counters: it
// finds the keys that match glob patterns, shows each counter's value, a TTL
// that counts down and its limit, and paints every counter without an expiry
// red. See README.md.
//
// This file is wiring only: subcommands and flags -> config -> redisclient,
// ui and demo.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/demo"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/countertop/countertop/ui"
)

// Exit codes, as `check` documents them and every subcommand uses them.
const (
	exitOK       = 0
	exitProblems = 1 // check found problems; a write Redis refused
	exitFailed   = 2 // could not do the job: bad flags, config, connection
)

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

// commands are the subcommands run knows, as the first argument.
var commands = []string{"demo", "snapshot", "check", "incr", "repair", "help", "version"}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
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

// version is the module version (a tag for 'go install ...@v1.2.3', else
// "devel"), the commit and whether the tree had changes, and the Go
// release, as the build recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "countertop (no build information)"
	}
	return versionOf(info)
}

// versionOf is version's line for the build info.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty string
	if v == "devel" {
		rev = " (commit unknown)" // built outside a checkout, or with -buildvcs=false; a release's version says which
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = " (modified)"
		}
	}
	return fmt.Sprintf("countertop %s%s%s, %s", v, rev, dirty, info.GoVersion)
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

func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: patterns go in --pattern", rest[0])
	}
	return nil
}

// errConnectInterrupted is why a command stopped when the user pressed
// ctrl+c before Redis answered.
var errConnectInterrupted = errors.New("interrupted (ctrl+c) before Redis answered: nothing was done")

// connect connects to the Redis cfg names. When that takes a while (a
// server that accepts and does not answer waits for the timeout), it says
// where it is connecting on stderr, where the dashboard's screen does not
// yet cover it.
func connect(ctx context.Context, cfg config.Config, stderr io.Writer) (*redisclient.Client, error) {
	target := config.RedactURL(cfg.Redis.URL)
	if sentinels := strings.Join(cfg.Redis.Sentinels, ", "); cfg.Redis.SentinelMaster != "" && sentinels != "" {
		target = fmt.Sprintf("master %s through the Sentinels at %s", cfg.Redis.SentinelMaster, sentinels)
	}
	said := make(chan struct{})
	slow := time.AfterFunc(500*time.Millisecond, func() {
		defer close(said)
		fmt.Fprintf(stderr, "countertop: connecting to %s... (ctrl+c to stop)\n", model.Printable(target))
	})
	client, err := dial(ctx, cfg)
	if !slow.Stop() {
		<-said // stderr is the caller's again
	}
	if err != nil && ctx.Err() != nil {
		return nil, errConnectInterrupted
	}
	return client, err
}

func dial(ctx context.Context, cfg config.Config) (*redisclient.Client, error) {
	return redisclient.Connect(ctx, redisclient.Options{
		URL:            cfg.Redis.URL,
		URLFrom:        cfg.Redis.URLFrom,
		Username:       cfg.Redis.Username,
		Password:       cfg.Redis.Password,
		Cluster:        cfg.Redis.Cluster,
		SentinelMaster: cfg.Redis.SentinelMaster,
		SentinelAddrs:  cfg.Redis.Sentinels,
		SentinelAuth:   redisclient.Auth{Username: cfg.Redis.SentinelUsername, Password: cfg.Redis.SentinelPassword},
		ReadOnly:       cfg.Redis.ReadOnly,
		TLS: redisclient.TLSOptions{
			CAFile:     cfg.Redis.TLS.CAFile,
			CertFile:   cfg.Redis.TLS.CertFile,
			KeyFile:    cfg.Redis.TLS.KeyFile,
			SkipVerify: cfg.Redis.TLS.SkipVerify,
		},
	})
}

func runDashboard(ctx context.Context, args []string, stderr io.Writer) error {
	cfg, rest, err := parse("", args, stderr, nil)
	if err != nil {
		return err
	}
	if len(rest) > 0 && slices.Contains(commands, rest[0]) {
		// countertop --url ... check: a line a monitor would run.
		return fmt.Errorf("%q is a command, and a command goes first: countertop %s [flags]", rest[0], rest[0])
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, client, cfg, "", "")
}

// dashboard runs the interactive program until the user quits; title and
// hint are for the demo (see ui.Options).
func dashboard(ctx context.Context, client *redisclient.Client, cfg config.Config, title, hint string) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	feed := make(chan model.Batch, 64)
	watchErr := make(chan error, 1)
	go func() {
		// Watch returns when ctx is done, or at once when --mode events
		// cannot work, after sending why as the feed's LastError; closing
		// the feed then shows the dashboard that nothing more will come.
		watchErr <- client.Watch(ctx, redisclient.WatchOptions{
			PollOptions: redisclient.PollOptions{
				Patterns:      cfg.Patterns,
				Interval:      cfg.Redis.Interval,
				DiscoverEvery: cfg.Redis.DiscoverEvery,
				ScanCount:     cfg.Redis.ScanCount,
			},
			Mode:         cfg.Redis.Mode,
			EnableEvents: cfg.Redis.EnableEvents,
			ResyncEvery:  cfg.Redis.ResyncEvery,
		}, feed)
		close(feed)
	}()

	// A watch that cannot work (--mode events on a server without
	// notifications) says so in its first message, a round trip or two
	// after it starts: fail then, before the screen opens, as a refused
	// connection does. A watch that has not spoken within a second opens
	// the screen, which shows how it goes.
	first := (<-chan model.Batch)(feed)
	select {
	case b, ok := <-feed:
		if !ok || b.State != nil && b.State.Mode == "stopped" {
			return <-watchErr
		}
		first = prepend(ctx, b, feed)
	case <-time.After(time.Second):
	case <-ctx.Done():
		return nil
	}

	rules := cfg.Rules
	m := ui.New(ui.Options{
		Store:    model.NewStore(&rules),
		Feed:     first,
		Writer:   client,
		ReadOnly: cfg.Redis.ReadOnly,
		Title:    title,
		Patterns: cfg.Patterns,
		Hint:     hint,
	})
	_, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	if errors.Is(err, tea.ErrProgramKilled) && ctx.Err() != nil {
		err = nil // interrupted from outside: a normal way to stop
	}
	if err != nil && strings.Contains(err.Error(), "TTY") {
		return errors.New("the dashboard needs a terminal and this is not one: run it in a terminal, or use 'countertop snapshot' or 'countertop check' in scripts")
	}
	if err != nil {
		return err
	}
	// The reason the feed stopped (say, --mode events on a server without
	// notifications) was on screen; it belongs in the shell too.
	cancel()
	return <-watchErr
}

// prepend is b, then what rest brings, until rest is closed or ctx done.
func prepend(ctx context.Context, b model.Batch, rest <-chan model.Batch) <-chan model.Batch {
	out := make(chan model.Batch, cap(rest))
	out <- b
	go func() {
		defer close(out)
		for b := range rest {
			select {
			case out <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}

// demoHint is the demo's first status line: what the simulation does and
// what to try.
const demoHint = "Demo: simulated clients hit these rate limits, and a buggy one leaves counters without a TTL (red) that never reset. " +
	"Select one and press e to give it its expiry, or E for all in view; + fires a test increment; ? lists every key."

func runDemo(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("countertop demo", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: countertop demo\n\n"+
			"Opens the dashboard on an embedded Redis with simulated rate-limit traffic,\n"+
			"stuck counters included. Nothing outside this process is touched.\n")
	}
	rest, err := parseArgs(fs, args, stderr)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: demo takes none", rest[0])
	}
	d, err := demo.Start(ctx, demo.Options{})
	if err != nil {
		return fmt.Errorf("could not start the demo: %w", err)
	}
	defer d.Close()
	cfg := config.Config{Patterns: d.Patterns()}
	cfg.Redis.URL = d.URL()
	cfg.Redis.Interval = 500 * time.Millisecond
	cfg.Redis.Mode = config.ModePoll // miniredis sends no keyspace events
	cfg.Rules = model.Rules{List: d.Rules(), Fallback: model.Rule{ExpectTTL: true}}
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, client, cfg, "demo", demoHint)
}

// errInterrupted is why a one-shot read stopped when the user pressed
// ctrl+c.
var errInterrupted = errors.New("interrupted (ctrl+c) before every key was read")

// readAll does one full pass over the matched keys and passes them to
// collect a pipeline's worth at a time, as they arrive, while Redis walks
// on.
func readAll(ctx context.Context, cfg config.Config, stderr io.Writer, collect func([]model.Observation)) error {
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	defer report.ReadOnHalfTheCores()()
	err = client.Snapshot(ctx, cfg.Patterns, cfg.Redis.ScanCount, func(obs []model.Observation) error {
		collect(obs)
		return nil
	})
	if err != nil && ctx.Err() != nil {
		return errInterrupted
	}
	return err
}

// readSorted is readAll's counters, classified by cfg.Rules, in key order.
func readSorted(ctx context.Context, cfg config.Config, stderr io.Writer) ([]*model.Counter, error) {
	var sorter report.KeySorter
	err := readAll(ctx, cfg, stderr, func(obs []model.Observation) {
		counters := make([]model.Counter, len(obs))
		for i := range obs {
			counters[i] = model.NewCounter(&obs[i], &cfg.Rules)
		}
		sorter.Add(counters)
	})
	if err != nil {
		return nil, err
	}
	return sorter.Sorted(), nil
}

// isProblem reports whether c is stuck or has lost its expiry.
func isProblem(c *model.Counter) bool { return c.Status.Problem() }

func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var format string
	cfg, rest, err := parse("snapshot", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", "table", "output `FORMAT`: table, json or csv")
	})
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if !report.ValidFormat(format) {
		return fmt.Errorf("--format %q is not a format: use table, json or csv", format)
	}
	if f, ok := stdout.(*os.File); ok {
		report.GrowPipe(f) // before the pass: nothing more to do between Redis's last answer and the first row
	}
	snap := report.NewSnapshot(format, &cfg.Rules)
	if err := readAll(ctx, cfg, stderr, snap.Add); err != nil {
		return err
	}
	return snap.Write(stdout, time.Now())
}

// runCheck prints one line per problem counter (stuck, no-expiry) and
// returns exitProblems when there is any.
func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	cfg, rest, err := parse("check", args, stderr, nil)
	if err != nil {
		return exitFailed, err
	}
	if err := noArgs(rest); err != nil {
		return exitFailed, err
	}
	counters, err := readSorted(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, fmt.Errorf("could not check: %w", err)
	}
	if slices.ContainsFunc(counters, isProblem) {
		if err := report.WriteProblems(stdout, counters, &cfg.Rules); err != nil {
			return exitFailed, err
		}
		var stuck, noExpiry int
		for _, c := range counters {
			switch c.Status {
			case model.StatusStuck:
				stuck++
			case model.StatusNoExpiry:
				noExpiry++
			}
		}
		// As the healthy run's "ok: ..." line, one that scripts reading
		// the status and key of each line can tell from those.
		if _, err := fmt.Fprintf(stdout, "problems: %d of %d key%s checked (%d stuck, %d no-expiry)\n",
			stuck+noExpiry, len(counters), plural(len(counters)), stuck, noExpiry); err != nil {
			return exitFailed, err
		}
		return exitProblems, nil
	}
	if len(counters) == 0 {
		// Healthy as far as anyone can tell, but a mistyped pattern would
		// keep a monitor green forever: say so.
		fmt.Fprintf(stdout, "ok: no key matches %s; if you expected some, check --pattern and --url\n", model.Printable(strings.Join(cfg.Patterns, " ")))
		return exitOK, nil
	}
	fmt.Fprintf(stdout, "ok: %d key%s checked, no counter stuck or without expiry\n", len(counters), plural(len(counters)))
	return exitOK, nil
}
