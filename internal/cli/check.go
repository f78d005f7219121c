package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
)

// Check's output formats, as `check --format` names them.
const (
	checkText = "text"
	checkJSON = "json"
)

// isProblem reports whether c is stuck or has lost its expiry.
func isProblem(c *model.Counter) bool { return c.Status.Problem() }

func (a *app) checkCommand() *cobra.Command {
	var (
		format  string
		minKeys int
		watch   time.Duration
	)
	cmd := &cobra.Command{
		Use:     "check [flags]",
		Short:   "exit 0 healthy, 1 problems, 2 could not check",
		Long:    aboutCheck,
		Example: examples(checkExamples),
	}
	load := a.settings(cmd, "check")
	cmd.Flags().StringVar(&format, "format", checkText, "output `FORMAT`: text or json")
	cmd.Flags().IntVar(&minKeys, "min-keys", 0, "fail (exit 1) when a --pattern matches fewer than `N` keys; 1 catches a pattern that matches nothing")
	watchFlag(cmd.Flags(), &watch)
	completeValues(cmd, map[string][]string{"format": {checkText, checkJSON}})
	// A monitor that reads JSON gets its object for a bad flag too, when
	// --format json came before it.
	cmd.SetFlagErrorFunc(func(cmd *cobra.Command, err error) error {
		err = flagError(cmd, err)
		if format == checkJSON && !errors.Is(err, pflag.ErrHelp) {
			report.WriteCheckFailedJSON(a.stdout, time.Now(), err)
		}
		return err
	})
	cmd.RunE = a.run(func(cmd *cobra.Command, args []string) (int, error) {
		return runCheck(cmd.Context(), cmd.Flags(), load, args, format, minKeys, watch, a.stdout, a.stderr)
	})
	return cmd
}

// runCheck prints one line per problem counter (stuck, extending,
// no-expiry, leak) and per pattern that matched nothing or fewer keys than
// --min-keys, and per master that has evicted keys (maxmemory), then a
// summary, in format; it returns exitProblems when the check fails (which
// evictions alone do not make it), and exitFailed when a watch was too
// short to tell whether a key pushed back as it grows is extending. One
// pass reads each key once; --watch reads them for a while, which
// extending takes.
func runCheck(ctx context.Context, flags *pflag.FlagSet, load func() (config.Config, error), rest []string, format string, minKeys int, watch time.Duration, stdout, stderr io.Writer) (int, error) {
	cfg, err := load()
	if format != checkText && format != checkJSON {
		return exitFailed, fmt.Errorf("--format %q is not a format for check: use text or json", format)
	}
	// A monitor that reads JSON gets one object whatever happens, and the
	// sentence on stderr as every subcommand writes it.
	failed := func(err error) (int, error) {
		if format == checkJSON {
			report.WriteCheckFailedJSON(stdout, time.Now(), err)
		}
		return exitFailed, err
	}
	if err == nil {
		err = noArgs(rest)
	}
	if err == nil && minKeys < 0 {
		err = fmt.Errorf("--min-keys %d is not a number of keys: use 0 (no minimum) or more", minKeys)
	}
	if err == nil {
		err = checkWatch(flags, watch)
	}
	if err != nil {
		return failed(err)
	}
	prepare := func(cfg config.Config) config.Config { return cfg }
	if watch > 0 {
		prepare = withDashboardBudget
	}
	// Each server is read side by side into its own part; its counters in
	// key order, merged once all are in.
	parts := make([]checkPart, len(cfg.Targets()))
	targets, err := onServers(ctx, cfg, stderr, prepare, func(ctx context.Context, t *target) error {
		p := &parts[t.index]
		partly := notShown{}
		var err error
		if watch > 0 {
			var store *model.Store
			if store, err = observe(ctx, t.client, t.cfg, watch, partly, t.stderr); err == nil {
				p.counters = storeCounters(store)
				stamp(p.counters, t.name)
				p.pushed = pushedCounters(store, p.counters)
			}
		} else {
			p.counters, err = readSorted(ctx, t.client, t.cfg, t.name, partly)
		}
		if err == nil {
			p.beyond, err = partly.counted(ctx, t.client, t.name)
		}
		if err != nil {
			return err
		}
		if p.evictions, err = t.client.Evictions(ctx); err != nil {
			p.evictionsUnknown = err.Error()
		}
		return nil
	})
	if err != nil {
		return failed(fmt.Errorf("could not check: %w", err))
	}
	defer closeAll(targets)
	check := checkOf(targets, parts, cfg, minKeys)
	check.Watched = watch
	if format == checkJSON {
		err = check.WriteJSON(stdout, time.Now())
	} else {
		err = check.WriteText(stdout)
	}
	if err != nil {
		return exitFailed, err
	}
	switch check.Verdict() {
	case report.VerdictProblems:
		return exitProblems, nil
	case report.VerdictUndecided:
		return exitFailed, nil // a watch too short to tell is no pass
	case report.VerdictFailed:
		return exitFailed, nil // a server not read is no pass
	}
	return exitOK, nil
}

// checkPart is what check read of one server.
type checkPart struct {
	counters         []*model.Counter // in key order
	pushed           []report.Pushed
	beyond           []report.NotShown // in key order
	evictions        []model.ServerEvictions
	evictionsUnknown string
}

// checkOf returns the check of what parts holds, one part a target, those
// that could be read: their counters in key order, their hashes with
// fields not shown in key order, the keys on more than one shard of cfg's
// groups, and the servers that could not be read.
func checkOf(targets []*target, parts []checkPart, cfg config.Config, minKeys int) *report.Check {
	var (
		lists   [][]*model.Counter
		pushed  []report.Pushed
		beyond  []report.NotShown
		evicted []model.ServerEvictions
		unknown []string
	)
	for i, p := range parts {
		lists = append(lists, p.counters)
		pushed = append(pushed, p.pushed...)
		beyond = append(beyond, p.beyond...)
		evicted = append(evicted, p.evictions...)
		if why := p.evictionsUnknown; why != "" && len(parts) > 1 {
			unknown = append(unknown, targets[i].name+": "+why)
		} else if why != "" {
			unknown = append(unknown, why)
		}
	}
	counters := report.Merge(lists)
	check := report.NewCheck(counters, cfg.Patterns, minKeys, &cfg.Rules)
	// A key of several servers: each server's, in the order of parts.
	slices.SortStableFunc(beyond, func(a, b report.NotShown) int { return model.CompareKeys(a.Key, b.Key) })
	check.Pushed, check.NotShown, check.Evictions = pushed, beyond, evicted
	check.EvictionsUnknown = strings.Join(unknown, "; ")
	check.Servers = names(targets)
	check.Shared = model.SharedKeys(counters, cfg.Shards)
	for _, t := range failed(targets) {
		check.Unreached = append(check.Unreached, report.Unreached{Server: t.name, Error: t.err.Error()})
	}
	return check
}

// pushedCounters returns the counters, of those a watch read into store,
// that it saw pushed back as they grew without (yet) proving them
// extending.
func pushedCounters(store *model.Store, counters []*model.Counter) []report.Pushed {
	var out []report.Pushed
	for _, c := range counters {
		if p, ok := store.Pushback(c.NameID()); ok && !p.Proven {
			out = append(out, report.Pushed{Counter: c, Pushback: p})
		}
	}
	return out
}
