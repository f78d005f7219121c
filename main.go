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
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/demo"
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

Run 'countertop <command> --help' for the flags of a command.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cmd := ""
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
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
	default:
		fmt.Fprintf(stderr, "countertop: unknown command %q: run 'countertop help' for the list\n", cmd)
		return exitFailed
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "countertop: %v\n", err)
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
	fs.SetOutput(stderr)
	fs.Usage = func() {
		if name == "" {
			fmt.Fprint(stderr, usage)
		} else {
			fmt.Fprintf(stderr, "Usage: countertop %s [flags]\n", name)
		}
		fmt.Fprintln(stderr, "\nFlags:")
		fs.PrintDefaults()
	}
	flags := config.Register(fs)
	if extra != nil {
		extra(fs)
	}
	rest, err := config.ParseInterspersed(fs, args)
	if err != nil {
		return config.Config{}, nil, err
	}
	cfg, err := config.Load(flags, fs, os.Getenv)
	return cfg, rest, err
}

func noArgs(rest []string) error {
	if len(rest) > 0 {
		return fmt.Errorf("unexpected argument %q: patterns go in --pattern", rest[0])
	}
	return nil
}

func connect(ctx context.Context, cfg config.Config) (*redisclient.Client, error) {
	return redisclient.Connect(ctx, redisclient.Options{
		URL:            cfg.Redis.URL,
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
	if err := noArgs(rest); err != nil {
		return err
	}
	client, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, client, cfg, "")
}

// dashboard runs the interactive program until the user quits.
func dashboard(ctx context.Context, client *redisclient.Client, cfg config.Config, title string) error {
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

	rules := cfg.Rules
	m := ui.New(ui.Options{
		Store:    model.NewStore(&rules),
		Feed:     feed,
		Writer:   client,
		ReadOnly: cfg.Redis.ReadOnly,
		Title:    title,
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

func runDemo(ctx context.Context, args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("countertop demo", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
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
	client, err := connect(ctx, cfg)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, client, cfg, "demo")
}

// errInterrupted is why a one-shot read stopped when the user pressed
// ctrl+c.
var errInterrupted = errors.New("interrupted (ctrl+c) before every key was read")

// readAll does one full pass over the matched keys and returns them in key
// order, classified by cfg.Rules. Each pipeline's worth is classified as it
// arrives, while Redis walks on; the order is made at the end.
func readAll(ctx context.Context, cfg config.Config) ([]*model.Counter, error) {
	client, err := connect(ctx, cfg)
	if err != nil {
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		return nil, err
	}
	defer client.Close()
	var sorter model.KeySorter
	err = client.Snapshot(ctx, cfg.Patterns, cfg.Redis.ScanCount, func(obs []model.Observation) error {
		counters := make([]model.Counter, len(obs))
		for i := range obs {
			counters[i] = model.NewCounter(&obs[i], &cfg.Rules)
		}
		sorter.Add(counters)
		return nil
	})
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, errInterrupted
	case err != nil:
		return nil, err
	}
	return sorter.Sorted(), nil
}

// isProblem reports whether c is stuck or has lost its expiry.
func isProblem(c *model.Counter) bool { return c.Status.Problem() }

func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var format string
	cfg, rest, err := parse("snapshot", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&format, "format", "table", "output format: table, json or csv")
	})
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if !model.ValidFormat(format) {
		return fmt.Errorf("--format %q is not a format: use table, json or csv", format)
	}
	counters, err := readAll(ctx, cfg)
	if err != nil {
		return err
	}
	return model.WriteSnapshot(stdout, format, time.Now(), counters, &cfg.Rules)
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
	counters, err := readAll(ctx, cfg)
	if err != nil {
		return exitFailed, fmt.Errorf("could not check: %w", err)
	}
	if slices.ContainsFunc(counters, isProblem) {
		if err := model.WriteProblems(stdout, counters, &cfg.Rules); err != nil {
			return exitFailed, err
		}
		return exitProblems, nil
	}
	fmt.Fprintf(stdout, "ok: %d counters checked, none stuck or without expiry\n", len(counters))
	return exitOK, nil
}
