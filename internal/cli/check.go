package cli

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
)

// isProblem reports whether c is stuck or has lost its expiry.
func isProblem(c *model.Counter) bool { return c.Status.Problem() }

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
	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, fmt.Errorf("could not check: %w", err)
	}
	defer client.Close()
	counters, err := readSorted(ctx, client, cfg)
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
