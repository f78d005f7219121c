package cli

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
)

func (a *app) snapshotCommand() *cobra.Command {
	var format string
	var watch time.Duration
	cmd := &cobra.Command{
		Use:     "snapshot [flags]",
		Short:   "print the matched counters once and exit",
		Long:    aboutSnapshot,
		Example: examples(snapshotExamples),
	}
	load := a.settings(cmd, "snapshot")
	cmd.Flags().StringVar(&format, "format", "table", "output `FORMAT`: table, json or csv")
	watchFlag(cmd.Flags(), &watch)
	completeValues(cmd, map[string][]string{"format": report.Formats})
	cmd.RunE = a.run(func(cmd *cobra.Command, args []string) (int, error) {
		return runSnapshot(cmd.Context(), cmd.Flags(), load, args, format, watch, a.stdout, a.stderr)
	})
	return cmd
}

// runSnapshot prints the matched counters once, in format: as one pass
// reads them, or with --watch as they stood after watching them, with the
// statuses only watching tells (extending). Several servers are read side
// by side; one that could not be read is said on stderr, the others'
// counters are printed, and it exits 2.
func runSnapshot(ctx context.Context, flags *pflag.FlagSet, load func() (config.Config, error), rest []string, format string, watch time.Duration, stdout, stderr io.Writer) (int, error) {
	cfg, err := load()
	if err != nil {
		return exitFailed, err
	}
	if err := noArgs(rest); err != nil {
		return exitFailed, err
	}
	if err := checkWatch(flags, watch); err != nil {
		return exitFailed, err
	}
	prepare := func(cfg config.Config) config.Config { return cfg }
	if watch > 0 {
		prepare = withDashboardBudget
	}
	if !report.ValidFormat(format) {
		return exitFailed, fmt.Errorf("--format %q is not a format: use table, json or csv", format)
	}
	if f := fileOf(stdout); f != nil {
		report.GrowPipe(f) // before the pass: nothing more to do between Redis's last answer and the first row
	}
	snap := report.NewSnapshot(format, &cfg.Rules)
	if f := fileOf(stdout); f != nil && term.IsTerminal(f.Fd()) {
		if width, _, err := term.GetSize(f.Fd()); err == nil {
			snap.FitTo(width) // elsewhere (a file, a pipe) names are cut at a fixed width
		}
	}
	var servers []string
	for _, s := range cfg.Targets() {
		servers = append(servers, s.Name)
	}
	snap.Servers(servers)
	if watch > 0 {
		snap.Watched(watch)
	}
	var mu sync.Mutex // the servers' reads hand their rows in side by side
	targets, err := onServers(ctx, cfg, stderr, prepare, func(ctx context.Context, t *target) error {
		if watch > 0 {
			store, err := observe(ctx, t.client, t.cfg, watch, t.stderr)
			if err != nil {
				return err
			}
			counters := storeCounters(store)
			stamp(counters, t.name)
			mu.Lock()
			defer mu.Unlock()
			snap.AddCounters(counters)
			return nil
		}
		return readAll(ctx, t.client, t.cfg, t.name, func(obs []model.Observation) {
			mu.Lock()
			defer mu.Unlock()
			snap.Add(obs)
		})
	})
	if err != nil {
		return exitFailed, err
	}
	defer closeAll(targets)
	if err := snap.Write(stdout, time.Now()); err != nil {
		return exitFailed, err
	}
	if sayFailed(stderr, targets) > 0 {
		return exitFailed, nil
	}
	return exitOK, nil
}
