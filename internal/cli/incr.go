package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

func (a *app) incrCommand() *cobra.Command {
	var o incrFlags
	cmd := &cobra.Command{
		Use:     "incr KEY [--by N] [--count N [--rate R/s]] [flags]",
		Short:   "fire a test increment, print the value and TTL",
		Long:    aboutIncr,
		Example: examples(incrExamples),
	}
	load := a.settings(cmd, "incr")
	fs := cmd.Flags()
	fs.StringVar(&o.by, "by", "1", "add `N`: an integer (INCRBY; negative to decrement) or a decimal (INCRBYFLOAT)")
	fs.BoolVar(&o.allowFloat, "allow-float", false, "let a decimal --by turn a key that holds an integer, or does not exist, into a decimal counter, on which the application's INCR then fails")
	fs.StringVar(&o.field, "field", "", "add to field `NAME` of the hash KEY (HINCRBY), as a per-field limiter does (default: the field its [[rule]] names, if any)")
	fs.BoolVar(&o.noExpire, "no-expire", false, "send a plain INCRBY that sets no TTL: the immortal-counter bug, on purpose")
	fs.IntVar(&o.count, "count", 0, "fire `N` atomic increments (ctrl+c stops them)")
	fs.StringVar(&o.rate, "rate", "", "with --count: pace the increments at `R/s` over all connections, like 100/s (default: as fast as Redis answers)")
	fs.IntVar(&o.clients, "clients", 1, "with --count: spread the increments over `C` connections racing each other")
	completeValues(cmd, map[string][]string{})
	cmd.RunE = a.run(func(cmd *cobra.Command, args []string) (int, error) {
		return runIncr(cmd.Context(), cmd.Flags(), load, args, o, a.stdout, a.stderr)
	})
	return cmd
}

// incrFlags are incr's own flags.
type incrFlags struct {
	by, rate, field      string
	noExpire, allowFloat bool
	count, clients       int
}

// runIncr fires one atomic increment, or a burst of them (--count), and
// prints the key's new value and TTL.
func runIncr(ctx context.Context, flags *pflag.FlagSet, load func() (config.Config, error), rest []string, o incrFlags, stdout, stderr io.Writer) (int, error) {
	var (
		byText, rateText     = o.by, o.rate
		fieldFlag            = o.field
		noExpire, allowFloat = o.noExpire, o.allowFloat
		count, clients       = o.count, o.clients
	)
	cfg, err := load()
	if err == nil {
		cfg, err = oneServer(cfg, "incr writes to one server")
	}
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
	by.AllowFloat = allowFloat
	window, err := incrWindow(cfg.Rules, key, flags.Changed("window"), noExpire)
	if err != nil {
		return exitFailed, err
	}
	// A rule that reads a hash field as the counter says how its limiter
	// counts: HINCRBY of that field, as the dashboard's + sends it.
	field := cfg.Rules.At(cfg.Rules.Match(key)).Field
	if flags.Changed("field") {
		if fieldFlag == "" {
			return exitFailed, errors.New("--field is empty (an unset variable?): name the hash field to add to, or leave --field out for a string counter")
		}
		field = fieldFlag
	}
	if window == model.WindowUnknown && count > 0 {
		// Each increment of a burst would have to find out for itself.
		return exitFailed, fmt.Errorf("no window for %s: a burst needs one, so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug", model.Printable(key))
	}
	burst := redisclient.BurstOptions{Count: count, Clients: clients, Field: field}
	if burst.Rate, err = parseRate(rateText); err != nil {
		return exitFailed, err
	}
	if count == 0 && (flags.Changed("rate") || flags.Changed("clients")) {
		return exitFailed, errors.New("--rate and --clients shape a burst: give its size with --count N")
	}
	if flags.Changed("count") && count < 1 || clients < 1 {
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
	} else {
		var r model.Incremented
		if field != "" {
			r, err = client.IncrField(ctx, key, field, by, window)
		} else {
			r, err = client.Incr(ctx, key, by, window)
		}
		switch {
		case errors.Is(err, model.ErrNeedsWindow):
			return exitFailed, fmt.Errorf("no window for %s: it has no TTL to keep (or does not exist yet), so pass --window 60s, or a [[rule]] with a window, or --no-expire to drill the bug", model.Printable(key))
		case err != nil:
			code = writeExit(err)
		default:
			obs = r.Observation
			fmt.Fprintln(stdout, incrLine(r))
		}
	}
	if errors.Is(err, model.ErrMakesDecimal) {
		return exitFailed, fmt.Errorf("%w; pass --allow-float to send it anyway", err)
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
	after := model.Incremented{Observation: r.After, GaveTTL: r.GaveTTL}
	if o.Field != "" && r.After.Type == "hash" {
		after.Field = o.Field
		after.FieldValue, _ = r.After.FieldValue(o.Field)
	}
	fmt.Fprintln(stdout, incrLine(after))
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

// incrWindow returns the TTL an increment gives a key without one:
// --window, else its rule's or the fallback's; none for --no-expire and
// keys that expect no TTL; model.WindowUnknown when none is known.
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

// windowOf returns the window of key's rule, else that of the fallback
// (set by --window); 0 when neither has one.
func windowOf(rules *model.Rules, key string) time.Duration {
	return rules.WindowOf(rules.At(rules.Match(key)))
}

// counterLine returns a key with its value and TTL: "ratelimit:api:42 =
// 17 (TTL 43s)".
func counterLine(o model.Observation) string {
	if o.PTTL == model.PTTLMissing {
		return model.Printable(o.Key) + " no longer exists"
	}
	return fmt.Sprintf("%s = %s (%s)", model.Printable(o.Key), model.Printable(o.Raw), model.TTLPhrase(o.PTTL))
}

// incrLine returns the key an increment left, as counterLine does, saying
// so when the increment gave it its first TTL: "ratelimit:api:stuck = 151;
// it had no TTL, now 1m00s"; a hash field with its name: "rl:42 login = 4
// (TTL 59s)".
func incrLine(r model.Incremented) string {
	if r.Field != "" {
		line := fmt.Sprintf("%s %s = %s", model.Printable(r.Key), model.Printable(r.Field), model.Printable(r.FieldValue))
		if r.GaveTTL {
			return line + "; " + r.TTLNote()
		}
		return line + " (" + r.TTLNote() + ")"
	}
	if !r.GaveTTL || r.PTTL == model.PTTLMissing {
		return counterLine(r.Observation)
	}
	return fmt.Sprintf("%s = %s; %s", model.Printable(r.Key), model.Printable(r.Raw), r.TTLNote())
}

// signed returns a change with its sign: "+10000", "-2.5"; "?" when
// unknown.
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

// writeExit returns the exit code for a failed write: exitProblems when it
// was refused (so nothing changed), exitFailed when Redis could not be
// reached.
func writeExit(err error) int {
	if redisclient.Refused(err) {
		return exitProblems
	}
	return exitFailed
}
