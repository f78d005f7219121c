package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
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
		return exitOK, runSnapshot(cmd.Context(), cmd.Flags(), load, args, format, watch, a.stdout, a.stderr)
	})
	return cmd
}

// runSnapshot prints the matched counters once, in format: as one pass
// reads them, or with --watch as they stood after watching them, with the
// statuses only watching tells (extending).
func runSnapshot(ctx context.Context, flags *pflag.FlagSet, load func() (config.Config, error), rest []string, format string, watch time.Duration, stdout, stderr io.Writer) error {
	cfg, err := load()
	if err != nil {
		return err
	}
	if err := noArgs(rest); err != nil {
		return err
	}
	if err := checkWatch(flags, watch); err != nil {
		return err
	}
	if watch > 0 {
		cfg = withDashboardBudget(cfg)
	}
	if !report.ValidFormat(format) {
		return fmt.Errorf("--format %q is not a format: use table, json or csv", format)
	}
	if f := fileOf(stdout); f != nil {
		report.GrowPipe(f) // before the pass: nothing more to do between Redis's last answer and the first row
	}
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	snap := report.NewSnapshot(format, &cfg.Rules)
	if f := fileOf(stdout); f != nil && term.IsTerminal(f.Fd()) {
		if width, _, err := term.GetSize(f.Fd()); err == nil {
			snap.FitTo(width) // elsewhere (a file, a pipe) names are cut at a fixed width
		}
	}
	if watch > 0 {
		store, err := observe(ctx, client, cfg, watch, nil, stderr)
		if err != nil {
			return err
		}
		snap.Watched(watch)
		snap.AddCounters(storeCounters(store))
	} else if err := readAll(ctx, client, cfg, snap.Add); err != nil {
		return err
	}
	return snap.Write(stdout, time.Now())
}
