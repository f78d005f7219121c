package cli

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/demo"
	"github.com/countertop/countertop/model"
)

// demoHint is the demo's first status line: what the simulation does and
// what to try.
const demoHint = "Demo: simulated clients hit these rate limits; buggy ones lose their TTL or push it back at each hit (red). " +
	"Select one and press e to give it its expiry, or E for all in view; + fires a test increment; ? lists every key."

func (a *app) demoCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "demo",
		Short:   "a dashboard on simulated traffic (embedded Redis)",
		Long:    aboutDemo,
		Example: examples(demoExamples),
		RunE: a.run(func(cmd *cobra.Command, args []string) (int, error) {
			if len(args) > 0 {
				return exitFailed, fmt.Errorf("unexpected argument %q: demo takes none", args[0])
			}
			return exitOK, runDemo(cmd.Context(), a.stdout, a.stderr)
		}),
	}
}

// runDemo opens the dashboard on an embedded Redis with simulated traffic.
func runDemo(ctx context.Context, stdout, stderr io.Writer) error {
	screen, err := dashboardTerminal(stdout)
	if err != nil {
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
	cfg.Redis.Mode = model.WatchPoll // miniredis sends no keyspace events
	cfg.Rules = model.Rules{List: d.Rules(), Fallback: model.Rule{ExpectTTL: true}}
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer client.Close()
	return dashboard(ctx, screen, client, cfg, "demo", demoHint)
}
