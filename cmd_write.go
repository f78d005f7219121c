package main

// The write commands: incr (test increments, bursts, races and the bug
// drill) and repair. Wiring and printing only; the writes themselves are
// redisclient's.

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/term"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// stdin is where repair reads its confirmation; tests replace it.
var stdin io.Reader = os.Stdin

// runIncr fires one atomic increment, or a burst of them (--count), and
// prints the key's new value and TTL.
func runIncr(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var (
		byText, rateText string
		noExpire         bool
		count, clients   int
		flags            *flag.FlagSet
	)
	cfg, rest, err := parse("incr", args, stderr, func(fs *flag.FlagSet) {
		flags = fs
		fs.Usage = usageOf(fs, "countertop incr KEY [--by N] [--window D] [--no-expire] [--count N [--rate R/s] [--clients C]] [flags]",
			"Fires one atomic increment (or --count of them) at KEY and prints its new value and TTL.")
		fs.StringVar(&byText, "by", "1", "add `N`: an integer (INCRBY; negative to decrement) or a decimal (INCRBYFLOAT)")
		fs.BoolVar(&noExpire, "no-expire", false, "send a plain INCRBY that sets no TTL: the immortal-counter bug, on purpose")
		fs.IntVar(&count, "count", 0, "fire `N` atomic increments (ctrl+c stops them)")
		fs.StringVar(&rateText, "rate", "", "with --count: pace the increments at `R/s` over all connections, like 100/s (default: as fast as Redis answers)")
		fs.IntVar(&clients, "clients", 1, "with --count: spread the increments over `C` connections racing each other")
	})
	if err != nil {
		return exitFailed, err
	}
	if len(rest) != 1 {
		return exitFailed, errors.New("incr takes one key: countertop incr KEY [--by N] [--window 60s]")
	}
	key := rest[0]
	if key == "" {
		return exitFailed, errors.New("the key name is empty (an unset variable?): countertop incr KEY")
	}
	by, err := model.ParseAmount(byText)
	if err != nil {
		return exitFailed, fmt.Errorf("--by: %w", err)
	}
	window, err := incrWindow(cfg.Rules, key, isSet(flags, "window"), noExpire)
	if err != nil {
		return exitFailed, err
	}
	if window == model.WindowUnknown && count > 0 {
		// Each increment of a burst would have to find out for itself.
		return exitFailed, fmt.Errorf("no window for %s: a burst needs one, so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug", model.Printable(key))
	}
	burst := redisclient.BurstOptions{Count: count, Clients: clients}
	if burst.Rate, err = parseRate(rateText); err != nil {
		return exitFailed, err
	}
	if count == 0 && (isSet(flags, "rate") || isSet(flags, "clients")) {
		return exitFailed, errors.New("--rate and --clients shape a burst: give its size with --count N")
	}
	if isSet(flags, "count") && count < 1 || clients < 1 {
		return exitFailed, errors.New("--count and --clients take a whole number of at least 1")
	}

	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, err
	}
	defer client.Close()
	var obs model.Observation
	code := exitOK
	if count > 0 {
		obs, code, err = runBurst(ctx, client, key, by, window, burst, stdout)
	} else if obs, err = client.Incr(ctx, key, by, window); errors.Is(err, model.ErrNeedsWindow) {
		return exitFailed, fmt.Errorf("no window for %s: it has no TTL to keep (or does not exist yet), so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug", model.Printable(key))
	} else if err != nil {
		code = writeExit(err)
	} else {
		fmt.Fprintln(stdout, counterLine(obs))
	}
	if noExpire && obs.Key != "" && obs.PTTL == model.PTTLNoExpiry {
		fmt.Fprintf(stderr, "warning: %s has no TTL, on purpose (--no-expire): the immortal-counter bug; the dashboard shows it red, and 'countertop repair' fixes it\n",
			model.Printable(key))
	}
	return code, err
}

// runBurst fires the increments of --count, prints what they did and
// returns the key as it is afterwards. Expected and observed must agree:
// exitProblems when they do not.
func runBurst(ctx context.Context, client *redisclient.Client, key string, by model.Amount, window time.Duration, o redisclient.BurstOptions, stdout io.Writer) (model.Observation, int, error) {
	start := time.Now()
	r, err := client.Burst(ctx, key, by, window, o)
	interrupted := errors.Is(err, context.Canceled)
	if r.Sent == 0 && err != nil {
		if interrupted {
			err = errors.New("interrupted before the first increment: nothing was sent")
		}
		return r.After, writeExit(err), err
	}
	conns := min(o.Clients, o.Count)
	note := ""
	if interrupted {
		note = " (interrupted)"
	}
	fmt.Fprintf(stdout, "fired %d of %d increments from %d connection%s in %v%s\n",
		r.Sent, o.Count, conns, plural(conns), time.Since(start).Round(time.Millisecond), note)
	fmt.Fprintln(stdout, counterLine(r.After))
	fmt.Fprintf(stdout, "expected %s, observed %s\n", signed(r.Expected), signed(r.Observed))
	switch {
	case err != nil && !interrupted:
		return r.After, writeExit(err), err
	case r.Expired:
		return r.After, exitProblems, fmt.Errorf("%s expired during the burst and started a new window, so observed misses what came before: use a --window longer than the burst, or --no-expire",
			model.Printable(key))
	case !r.Agree():
		return r.After, exitProblems, fmt.Errorf("observed is not expected: increments were lost, or another client changed %s during the burst", model.Printable(key))
	case interrupted && r.Sent < o.Count:
		return r.After, exitFailed, fmt.Errorf("interrupted after %d of %d increments", r.Sent, o.Count)
	}
	return r.After, exitOK, nil
}

// incrWindow is the TTL an increment gives a key without one: --window,
// else its rule's window, else the fallback's; none for --no-expire and for
// keys whose rule expects no TTL; model.WindowUnknown when none is known,
// which is enough for a key that has a TTL already.
func incrWindow(rules model.Rules, key string, windowFlag, noExpire bool) (time.Duration, error) {
	switch {
	case noExpire && windowFlag:
		return 0, errors.New("--no-expire sets no TTL and --window sets one: give only one of them")
	case noExpire:
		return 0, nil
	case windowFlag:
		return rules.Fallback.Window, nil
	case !rules.At(rules.Match(key)).ExpectTTL:
		return 0, nil
	}
	if w := windowOf(&rules, key); w > 0 {
		return w, nil
	}
	return model.WindowUnknown, nil
}

// windowOf is the window of key's rule, else that of the fallback (set by
// --window); 0 when neither has one.
func windowOf(rules *model.Rules, key string) time.Duration {
	return rules.WindowOf(rules.At(rules.Match(key)))
}

// runRepair gives every stuck and no-expiry counter its window as a TTL,
// with EXPIRE NX so that a TTL set in the meantime is never replaced.
// Exit: 0 all repaired, 1 some could not be (no window known, or Redis or
// --read-only refused), 2 it could not run (or was not confirmed).
func runRepair(ctx context.Context, args []string, stdout, stderr io.Writer) (int, error) {
	var dryRun, yes bool
	cfg, rest, err := parse("repair", args, stderr, func(fs *flag.FlagSet) {
		fs.Usage = usageOf(fs, "countertop repair [--dry-run] [--yes] [flags]",
			"Gives every stuck and no-expiry counter its window as a TTL (EXPIRE NX: a TTL is never shortened or replaced).")
		fs.BoolVar(&dryRun, "dry-run", false, "print what would be repaired and change nothing")
		fs.BoolVar(&yes, "yes", false, "repair without asking")
	})
	if err != nil {
		return exitFailed, err
	}
	if err := noArgs(rest); err != nil {
		return exitFailed, err
	}
	if cfg.Redis.ReadOnly && !dryRun { // refused, as incr is: nothing changed
		return exitProblems, errors.New("--read-only refuses every write, and repair sends EXPIRE: preview it with --dry-run, or drop --read-only")
	}
	counters, err := readSorted(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, fmt.Errorf("could not read the counters: %w", err)
	}
	var todo []*model.Counter
	skipped := 0
	for _, c := range counters {
		if !isProblem(c) {
			continue
		}
		if windowOf(&cfg.Rules, c.Key) == 0 {
			skipped++
			fmt.Fprintf(stdout, "skipped %s: no window known; give its [[rule]] a window, or pass --window\n", model.Printable(c.Key))
			continue
		}
		todo = append(todo, c)
	}
	if len(todo)+skipped == 0 {
		fmt.Fprintf(stdout, "nothing to repair: %d key%s checked, no counter stuck or without expiry\n", len(counters), plural(len(counters)))
		return exitOK, nil
	}
	if dryRun || !yes {
		for _, c := range todo {
			fmt.Fprintf(stdout, "would repair %s: TTL %s\n", model.Printable(c.Key), model.FormatDuration(windowOf(&cfg.Rules, c.Key)))
		}
	}
	if dryRun {
		fmt.Fprintf(stdout, "dry run: %d to repair, %d skipped; nothing was changed\n", len(todo), skipped)
		if skipped > 0 {
			return exitProblems, nil // as the repair itself would
		}
		return exitOK, nil
	}
	if len(todo) > 0 && !yes {
		if err := confirm(ctx, fmt.Sprintf("Repair %d key%s?", len(todo), plural(len(todo))), stderr); err != nil {
			return exitFailed, err
		}
	}

	client, err := connect(ctx, cfg, stderr)
	if err != nil {
		return exitFailed, err
	}
	defer client.Close()
	repaired, failed := 0, 0
	for _, c := range todo {
		name := model.Printable(c.Key)
		window := windowOf(&cfg.Rules, c.Key)
		set, obs, err := client.Expire(ctx, c.Key, window)
		switch {
		case errors.Is(err, context.Canceled):
			return exitFailed, fmt.Errorf("interrupted after %d repaired", repaired)
		case errors.Is(err, redisclient.ErrNoSuchKey):
			fmt.Fprintf(stdout, "left %s alone: it no longer exists\n", name)
		case err != nil:
			failed++
			fmt.Fprintf(stderr, "countertop: could not repair %s: %v\n", name, err)
		case !set:
			fmt.Fprintf(stdout, "left %s alone: it has a TTL already (%s)\n", name, model.TTLPhrase(obs.PTTL))
		default:
			repaired++
			fmt.Fprintf(stdout, "repaired %s: TTL %s\n", name, model.FormatDuration(window))
		}
	}
	fmt.Fprintf(stdout, "repaired %d of %d; %d skipped, %d failed\n", repaired, len(todo)+skipped, skipped, failed)
	if failed+skipped > 0 {
		return exitProblems, nil
	}
	return exitOK, nil
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

// counterLine is a key with its value and TTL: "ratelimit:api:42 = 17 (TTL 43s)".
func counterLine(o model.Observation) string {
	if o.PTTL == model.PTTLMissing {
		return model.Printable(o.Key) + " no longer exists"
	}
	return fmt.Sprintf("%s = %s (%s)", model.Printable(o.Key), model.Printable(o.Raw), model.TTLPhrase(o.PTTL))
}

// signed is a change with its sign: "+10000", "-2.5"; "?" when unknown.
func signed(r *big.Rat) string {
	if r == nil {
		return "?"
	}
	s := r.RatString()
	if !r.IsInt() {
		s = strings.TrimRight(r.FloatString(17), "0")
	}
	if r.Sign() >= 0 {
		s = "+" + s
	}
	return s
}

// parseRate reads --rate: "100" or "100/s", increments per second.
func parseRate(s string) (float64, error) {
	if s == "" {
		return 0, nil
	}
	r, err := strconv.ParseFloat(strings.TrimSuffix(s, "/s"), 64)
	if err != nil || !(r > 0) || r > 1e9 {
		return 0, fmt.Errorf("--rate %q is not a rate: give increments per second, like 100 or 100/s", s)
	}
	return r, nil
}

// writeExit is the exit code for a failed write: exitProblems when it was
// refused (so nothing changed), exitFailed when Redis could not be reached.
func writeExit(err error) int {
	if redisclient.Refused(err) {
		return exitProblems
	}
	return exitFailed
}

// usageOf is a -help text for fs: how to call the command, what it does,
// then its flags.
func usageOf(fs *flag.FlagSet, synopsis, does string) func() {
	return func() {
		fmt.Fprintf(fs.Output(), "Usage: %s\n\n%s\n\nFlags:\n", synopsis, does)
		fs.PrintDefaults()
	}
}

// isSet reports whether the flag name was given on the command line.
func isSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
