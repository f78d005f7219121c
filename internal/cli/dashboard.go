package cli

import (
	"context"
	"errors"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/countertop/countertop/ui"
)

// dashboardCommand is countertop without a command: the dashboard, and
// the root of the others.
func (a *app) dashboardCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:     "countertop [flags]",
		Short:   "interactive dashboard",
		Long:    aboutDashboard,
		Example: examples(dashboardExamples),
		Args:    func(_ *cobra.Command, args []string) error { return noArgs(args) },
	}
	load := a.settings(cmd, "dashboard")
	completeValues(cmd, map[string][]string{})
	cmd.RunE = a.run(func(cmd *cobra.Command, _ []string) (int, error) {
		cfg, err := load()
		if err != nil {
			return exitFailed, err
		}
		if servers := cfg.Targets(); len(servers) == 1 {
			return exitOK, runDashboard(cmd.Context(), cfg.For(servers[0]), a.stdout, a.stderr)
		}
		return exitOK, runServersDashboard(cmd.Context(), cfg, a.stdout)
	})
	return cmd
}

// runDashboard opens the interactive dashboard on the Redis cfg names.
func runDashboard(ctx context.Context, cfg config.Config, stdout, stderr io.Writer) error {
	screen, err := dashboardTerminal(stdout)
	if err != nil {
		return err
	}
	client, err := connect(ctx, withDashboardBudget(cfg), stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, screen, client, cfg, "", client.Unnamed()) // the screen covers what connect said on stderr
}

// dashboardTerminal returns the terminal the dashboard draws on, stdout,
// or why it cannot: checked before connecting, so that `countertop >
// out.txt` does not fill a file with escape sequences while the terminal
// waits, blank, for a q nobody knows to press.
func dashboardTerminal(stdout io.Writer) (*os.File, error) {
	f := fileOf(stdout)
	if f == nil || !term.IsTerminal(f.Fd()) {
		return nil, errors.New("the dashboard draws on a terminal and stdout is not one: " +
			"to write the counters to a file or a pipe, use 'countertop snapshot' (or 'countertop check' in scripts)")
	}
	// A dumb terminal (Emacs's shell, some CI logs) shows cursor moves and
	// the queries about its colours as garbage.
	if os.Getenv("TERM") == "dumb" {
		return nil, errors.New("TERM=dumb says this terminal cannot move its cursor, which the dashboard needs: " +
			"run it in a terminal that can (TERM=xterm-256color, say), or use 'countertop snapshot' for a plain table")
	}
	return f, nil
}

// withDashboardBudget returns cfg with the dashboard's budget of commands
// when none was set: a dashboard left open on production, or a --watch
// that re-reads the keys for as long as it lasts, must stay gentle, where
// a snapshot someone waits for may go as fast as Redis answers.
func withDashboardBudget(cfg config.Config) config.Config {
	if cfg.Redis.MaxCommands == 0 {
		cfg.Redis.MaxCommands = config.DefaultMaxCommands
	}
	return cfg
}

// watchOptions returns how cfg asks the keys to be followed, by the
// dashboard and by --watch alike.
func watchOptions(cfg config.Config) redisclient.WatchOptions {
	return redisclient.WatchOptions{
		PollOptions: redisclient.PollOptions{
			Patterns:      cfg.Patterns,
			Interval:      cfg.Redis.Interval,
			DiscoverEvery: cfg.Redis.DiscoverEvery,
			ScanCount:     cfg.Redis.ScanCount,
		},
		Mode:        cfg.Redis.Mode,
		ResyncEvery: cfg.Redis.ResyncEvery,
	}
}

// dashboard runs the interactive program on screen until the user quits;
// title and hint are for the demo (see ui.Options).
func dashboard(ctx context.Context, screen *os.File, client *redisclient.Client, cfg config.Config, title, hint string) error {
	// A hangup (the terminal closed, kill -HUP) stops the dashboard as
	// ctrl+c and SIGTERM do, which gives the terminal back as it was; by
	// Go's default it would end the process in the alternate screen with
	// the cursor hidden. Under nohup it stays ignored: Notify would undo
	// that.
	if !signal.Ignored(syscall.SIGHUP) {
		var stop context.CancelFunc
		ctx, stop = signal.NotifyContext(ctx, syscall.SIGHUP)
		defer stop()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shown := make(chan []string, 1) // the keys on screen, read first
	// Watch returns when ctx is done, or at once when --mode events
	// cannot work, after sending why as the feed's LastError; closing
	// the feed then shows the dashboard that nothing more will come.
	o := watchOptions(cfg)
	o.Shown, o.EnableEvents = shown, cfg.Redis.EnableEvents
	feed, watchErr := startWatch(ctx, client, o)

	// A watch that cannot work (--mode events without notifications) says
	// so in its first message: fail then, before the screen opens, as a
	// refused connection does; after a second the screen opens regardless.
	first := (<-chan model.Batch)(feed)
	select {
	case b, ok := <-feed:
		if !ok || b.State != nil && b.State.Phase == model.FeedStopped {
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
		OnScreen: func(keys []string) { redisclient.OfferShown(shown, keys) },
	})
	_, err := tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(screen)).Run()
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

// prepend returns a channel of b, then what rest brings, until rest is
// closed or ctx done.
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
