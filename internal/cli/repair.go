package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// stdin is where repair reads its confirmation; tests replace it.
var stdin io.Reader = os.Stdin

// beforeWrites, when tests set it, runs between repair's read and its first
// write: there they change keys as another client may meanwhile.
var beforeWrites func()

func (a *app) repairCommand() *cobra.Command {
	var dryRun, yes bool
	cmd := &cobra.Command{
		Use:     "repair [--dry-run] [--yes] [flags]",
		Short:   "PEXPIRE KEY MS NX on stuck and no-expiry counters",
		Long:    aboutRepair,
		Example: examples(repairExamples),
	}
	load := a.settings(cmd, "repair")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "print what would be repaired and change nothing")
	cmd.Flags().BoolVar(&yes, "yes", false, "repair without asking")
	completeValues(cmd, map[string][]string{})
	cmd.RunE = a.run(func(cmd *cobra.Command, args []string) (int, error) {
		return runRepair(cmd.Context(), load, args, dryRun, yes, a.stdout, a.stderr)
	})
	return cmd
}

// runRepair gives every stuck and no-expiry counter its window as a TTL,
// each in one atomic step (model.Expiry) that leaves alone a key that has
// changed since it was read or got a TTL meanwhile; it reads the counters
// and writes the repairs over one connection.
// A refusal that every key would meet (a read-only replica) stops it at the
// first key, saying how many it did not touch.
// Exit: 0 all repaired, 1 some could not be (no window known, or Redis or
// --read-only refused), 2 it could not run (or was not confirmed).
func runRepair(ctx context.Context, load func() (config.Config, error), rest []string, dryRun, yes bool, stdout, stderr io.Writer) (int, error) {
	cfg, err := load()
	if err != nil {
		return exitFailed, err
	}
	if err := noArgs(rest); err != nil {
		return exitFailed, err
	}
	if cfg.Redis.ReadOnly && !dryRun { // refused, as incr is: nothing changed
		return exitProblems, errors.New("--read-only refuses every write, and repair sends PEXPIRE: preview it with --dry-run, or drop --read-only")
	}
	// Each server is read side by side, and each key repaired on its own.
	lists := make([][]*model.Counter, len(cfg.Targets()))
	targets, err := onServers(ctx, cfg, stderr, func(cfg config.Config) config.Config { return cfg }, func(ctx context.Context, t *target) error {
		var err error
		lists[t.index], err = readSorted(ctx, t.client, t.cfg, t.name)
		return err
	})
	if err != nil {
		return exitFailed, fmt.Errorf("could not read the counters: %w", err)
	}
	defer closeAll(targets)
	code := exitOK
	if sayFailed(stderr, targets) > 0 {
		code = exitFailed // what could be read is repaired; the exit says the rest was not
	}
	counters := report.Merge(lists)
	clients := make(map[string]*redisclient.Client, len(targets))
	for _, t := range targets {
		clients[t.name] = t.client
	}
	// With several servers, every line names the key's.
	label := (*model.Counter).Name
	if len(targets) > 1 {
		label = func(c *model.Counter) string { return c.Name() + " on " + model.Printable(c.Server) }
	}
	var todo []*model.Counter
	skipped := 0
	for _, c := range counters {
		if !isProblem(c) {
			continue
		}
		if windowOf(&cfg.Rules, c.Key) == 0 {
			skipped++
			fmt.Fprintf(stdout, "skipped %s: no window known; give its [[rule]] a window, or pass --window\n", label(c))
			continue
		}
		todo = append(todo, c)
	}
	if len(todo)+skipped == 0 {
		fmt.Fprintf(stdout, "nothing to repair: %d key%s checked, no counter stuck or without expiry\n", len(counters), plural(len(counters)))
		return code, nil
	}
	if dryRun || !yes {
		for _, c := range todo {
			fmt.Fprintf(stdout, "would repair %s: TTL %s\n", label(c), model.FormatDuration(windowOf(&cfg.Rules, c.Key)))
		}
	}
	if dryRun {
		fmt.Fprintf(stdout, "dry run: %d to repair, %d skipped; nothing was changed\n", len(todo), skipped)
		if skipped > 0 {
			return max(code, exitProblems), nil // as the repair itself would
		}
		return code, nil
	}
	if len(todo) > 0 && !yes {
		if err := confirm(ctx, fmt.Sprintf("Repair %d key%s?", len(todo), plural(len(todo))), stderr); err != nil {
			return exitFailed, err
		}
	}

	if beforeWrites != nil {
		beforeWrites()
	}
	tally := model.RepairTally{Skipped: skipped}
	refused := make(map[string]bool) // the servers that refuse every key
	for i, c := range todo {
		if err := stdoutFailed(stdout); err != nil { // nobody could see what it changes
			return exitFailed, fmt.Errorf("%w; repair stopped there: %d repaired, %d not touched",
				err, tally.Count(model.ExpirySet), len(todo)+skipped-tally.Total())
		}
		if refused[c.Server] {
			continue // counted untouched already
		}
		name := label(c)
		window := windowOf(&cfg.Rules, c.Key)
		e, _ := model.RepairOf(c, window) // a problem has a layout
		shape := e.Shape
		outcome, obs, err := clients[c.Server].Expire(ctx, e)
		if errors.Is(err, context.Canceled) {
			return exitFailed, fmt.Errorf("interrupted after %d repaired", tally.Count(model.ExpirySet))
		}
		tally.Add(outcome)
		switch outcome {
		case model.ExpiryFailed:
			stop := ""
			if more := sameServer(todo[i+1:], c.Server); redisclient.RefusesEveryKey(err) && more > 0 {
				// Every other key of its server would meet the same
				// refusal: one line says it, not one a key.
				refused[c.Server] = true
				tally.Untouched += more
				where := ""
				if len(targets) > 1 {
					where = " on " + model.Printable(c.Server)
				}
				stop = fmt.Sprintf("; stopped there%s, as every key would be refused alike: %d more key%s not touched", where, more, plural(more))
			}
			fmt.Fprintf(stderr, "countertop: could not repair %s: %v%s\n", name, err, stop)
		case model.ExpirySet:
			fmt.Fprintf(stdout, "repaired %s: TTL %s\n", name, model.FormatDuration(window))
		case model.ExpiryChanged:
			fmt.Fprintf(stdout, "left %s alone: it holds %s now, not %s\n", name, model.Holding(obs), shape.Noun())
		case model.ExpiryGone:
			fmt.Fprintf(stdout, "left %s alone: it no longer exists\n", name)
		case model.ExpiryHadTTL:
			fmt.Fprintf(stdout, "left %s alone: it has a TTL already (%s)\n", name, model.TTLPhrase(obs.PTTL))
		case model.ExpiryFieldTTLs:
			fmt.Fprintf(stdout, "left %s alone: %s; repair its fields\n", name, model.FieldTTLsLeftAlone)
		}
	}
	fmt.Fprintln(stdout, tally.String())
	if tally.Count(model.ExpiryFailed)+skipped > 0 {
		return max(code, exitProblems), nil
	}
	return code, nil
}

// sameServer returns how many of counters were read on server.
func sameServer(counters []*model.Counter, server string) int {
	n := 0
	for _, c := range counters {
		if c.Server == server {
			n++
		}
	}
	return n
}

// confirm asks question on the terminal and returns nil when the answer is
// yes. Without a terminal to ask on it refuses: a script must say --yes.
func confirm(ctx context.Context, question string, stderr io.Writer) error {
	if f, ok := stdin.(*os.File); !ok || !term.IsTerminal(f.Fd()) {
		return errors.New("refusing to write without --yes: stdin is not a terminal; use --dry-run to preview")
	}
	fmt.Fprintf(stderr, "%s [y/N] ", question)
	answer := make(chan string, 1)
	go func() { // a read cannot be cancelled: ctrl+c must not wait for it
		line, _ := bufio.NewReader(stdin).ReadString('\n')
		answer <- strings.TrimSpace(line)
	}()
	select {
	case <-ctx.Done():
		return errors.New("interrupted: nothing was changed")
	case a := <-answer:
		if strings.EqualFold(a, "y") || strings.EqualFold(a, "yes") {
			return nil
		}
		return errors.New("not confirmed: nothing was changed")
	}
}
