// Command load measures the real countertop dashboard against a large
// keyspace in a Redis of its own (bench/load.sh starts one and seeds it
// with bench/cmd/seed), in each watch mode, and prints the figures of
// issue 18's targets (docs/benchmarks-history.md, "Targets (issue 18)"):
//
//   - countertop's commands a second (INFO commandstats deltas, the bench's
//     own PINGs and INFOs taken off) against its budget, --max-commands;
//   - another client's PING latency, against the same with countertop
//     stopped;
//   - the SLOWLOG entries over 10 ms that countertop's connections caused;
//   - the reads it sends while nothing changes, once its first pass is over;
//   - under 5,000 changes a second spread over the matching keys: its CPU
//     (/proc/PID/stat), the time a change takes to reach the screen (a
//     probe key, read back with tmux capture-pane) and to reach the store
//     (redisclient's watcher in this process, each batch timestamped).
//
// The dashboard runs in a tmux server of its own, 120x40.
//
// With -servers, it measures the dashboard over several servers instead
// (issue 33, item 7; see servers.go): its first screen with and without a
// server that hangs, and each server's commands a second against its own
// budget, through the first pass, idle and changing.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/seed"
	ctconfig "github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
)

// Targets, from issue 18.
const (
	targetPingRatio = 1.5                    // another client's p99 against countertop stopped
	targetPingMax   = 10 * time.Millisecond  // and its maximum
	targetSlow      = 10 * time.Millisecond  // no command of countertop's slower (SLOWLOG)
	targetLatency   = 100 * time.Millisecond // a change in the store, p99
)

func main() {
	if spec := os.Getenv(generateEnv); spec != "" {
		if err := generate(spec); err != nil {
			fmt.Fprintln(os.Stderr, "load generator:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var cfg config
	var modes, latencyModes, servers string
	var screens int
	flag.StringVar(&cfg.url, "url", "", "the benchmark Redis, seeded by bench/cmd/seed (required; never a shared one)")
	flag.StringVar(&cfg.bin, "countertop", "", "the countertop binary to run (required)")
	flag.StringVar(&modes, "modes", "poll,events,tracking", "the watch modes to run the dashboard in, in turn")
	flag.StringVar(&latencyModes, "latency-modes", "", "the modes whose time to the store is measured in this process (default: those of -modes but poll)")
	flag.DurationVar(&cfg.duration, "duration", time.Minute, "how long each phase lasts")
	flag.IntVar(&cfg.matching, "matching", 100_000, "how many counters bench/cmd/seed wrote that match "+seed.Pattern)
	flag.IntVar(&cfg.hashEvery, "hash-every", 1000, "bench/cmd/seed's -hash-every: those keys are hashes, not INCRed")
	flag.IntVar(&cfg.rate, "rate", 5000, "changes a second while changing")
	flag.IntVar(&cfg.budget, "max-commands", int(defaultBudget), "the budget countertop runs under (--max-commands); its default is the dashboard's")
	flag.DurationVar(&cfg.resyncEvery, "resync-every", 0, "the dashboard's and the watcher's --resync-every (0: the default)")
	flag.StringVar(&servers, "servers", "", "several benchmark Redis URLs, separated by commas: measure the dashboard over them all (issue 33) instead; -rate is then each server's")
	flag.IntVar(&screens, "screens", 5, "with -servers: the first screens timed with and without a hanging server")
	flag.Parse()
	if servers != "" && cfg.bin != "" {
		if err := runServers(context.Background(), cfg, strings.Split(servers, ","), screens); err != nil {
			fmt.Fprintf(os.Stderr, "load: %v\n", err)
			os.Exit(1)
		}
		return
	}
	if cfg.url == "" || cfg.bin == "" {
		fmt.Fprintln(os.Stderr, "load: -url and -countertop are required: run bench/load.sh, which sets them")
		os.Exit(2)
	}
	var err error
	if cfg.modes, err = parseModes(modes); err == nil {
		cfg.latencyModes, err = parseModes(latencyModes)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(2)
	}
	if latencyModes == "" {
		cfg.latencyModes = slices.DeleteFunc(slices.Clone(cfg.modes), func(m model.WatchMode) bool { return m == model.WatchPoll })
	}
	if err := run(context.Background(), cfg); err != nil {
		fmt.Fprintf(os.Stderr, "load: %v\n", err)
		os.Exit(1)
	}
}

// parseModes reads a list of watch modes separated by commas; "" is none.
func parseModes(list string) ([]model.WatchMode, error) {
	var modes []model.WatchMode
	for name := range strings.SplitSeq(list, ",") {
		if name == "" {
			continue
		}
		m, err := model.ParseWatchMode(name)
		if err != nil {
			return nil, err
		}
		modes = append(modes, m)
	}
	return modes, nil
}

// defaultBudget is the dashboard's budget when --max-commands is not given.
const defaultBudget = ctconfig.DefaultMaxCommands

type config struct {
	url, bin                  string
	modes, latencyModes       []model.WatchMode
	duration                  time.Duration
	matching, hashEvery, rate int
	budget                    int
	resyncEvery               time.Duration // --resync-every; 0: the default
}

// benchName prefixes the client name of each of the bench's own
// connections, so that the SLOWLOG tells them from countertop's.
const benchName = "bench-load"

func (cfg config) client(role string) (*redis.Client, *redis.Options, error) {
	opt, err := redis.ParseURL(cfg.url)
	if err != nil {
		return nil, nil, err
	}
	opt.ClientName = benchName + "-" + role
	return redis.NewClient(opt), opt, nil
}

func run(ctx context.Context, cfg config) error {
	rdb, opt, err := cfg.client("control")
	if err != nil {
		return err
	}
	defer rdb.Close()
	keys, err := rdb.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("cannot reach the benchmark Redis: %w", err)
	}
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return err
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("machine: %d CPUs; redis %s; %s; load average at start %s", runtime.NumCPU(), info["Server"]["redis_version"], runtime.Version(), load)
	fmt.Printf("keyspace: %d keys, %d matching %s; each phase %v; changes %d/s; budget %d commands/s",
		keys, cfg.matching, seed.Pattern, cfg.duration, cfg.rate, cfg.budget)
	if cfg.resyncEvery > 0 {
		fmt.Printf("; --resync-every %v", cfg.resyncEvery)
	}
	fmt.Print("\n\n")
	for k, v := range map[string]string{"slowlog-log-slower-than": fmt.Sprint(targetSlow.Microseconds()), "slowlog-max-len": "10000", "notify-keyspace-events": ""} {
		if err := rdb.ConfigSet(ctx, k, v).Err(); err != nil {
			return err
		}
	}
	if err := rdb.Set(ctx, probeKey, 100, 3*time.Hour).Err(); err != nil {
		return err
	}
	b := bench{cfg: cfg, rdb: rdb, opt: opt, work: os.TempDir()}
	if b.work, err = os.MkdirTemp("", "countertop-load"); err != nil {
		return err
	}
	defer os.RemoveAll(b.work)

	var r report
	fmt.Println("baseline: countertop stopped, nothing changing")
	if r.idleBase, err = b.phase(ctx, nil, false); err != nil {
		return err
	}
	fmt.Printf("  PING %v\n", r.idleBase.ping)
	fmt.Printf("baseline: countertop stopped, %d changes/s\n", cfg.rate)
	if r.busyBase, err = b.phase(ctx, nil, true); err != nil {
		return err
	}
	fmt.Printf("  PING %v; %s\n", r.busyBase.ping, r.busyBase.changes)
	for _, mode := range cfg.modes {
		m, err := b.mode(ctx, mode)
		if err != nil {
			return fmt.Errorf("%s mode: %w", mode, err)
		}
		r.modes = append(r.modes, m)
	}
	for _, mode := range cfg.latencyModes {
		fmt.Printf("%s: the time to the store, redisclient's watcher in this process, %d changes/s\n", mode, cfg.rate)
		if err := b.notify(ctx, mode); err != nil {
			return err
		}
		lat, err := storeLatency(ctx, cfg, b.opt.Addr, mode)
		if err != nil {
			return fmt.Errorf("%s mode, time to the store: %w", mode, err)
		}
		fmt.Printf("  %v\n", lat)
		// The budget is what a change costs at this rate; twice the budget
		// shows what headroom buys.
		more := cfg
		more.budget *= 2
		fmt.Printf("%s: the same under a budget of %d\n", mode, more.budget)
		latMore, err := storeLatency(ctx, more, b.opt.Addr, mode)
		if err != nil {
			return fmt.Errorf("%s mode, time to the store: %w", mode, err)
		}
		fmt.Printf("  %v\n", latMore)
		for i := range r.modes {
			if r.modes[i].mode == mode {
				r.modes[i].store, r.modes[i].storeMore = lat, latMore
			}
		}
	}
	r.print(cfg)
	load, _ = os.ReadFile("/proc/loadavg")
	fmt.Printf("\nload average at the end %s", load)
	return nil
}

// bench is what the phases share.
type bench struct {
	cfg  config
	rdb  *redis.Client
	opt  *redis.Options
	work string
}

// notify turns keyspace notifications on for events mode and off for the
// others, so that polling and tracking are measured on a server that does
// not publish them.
func (b *bench) notify(ctx context.Context, mode model.WatchMode) error {
	flags := ""
	if mode == model.WatchEvents {
		flags = "K$gxe"
	}
	return b.rdb.ConfigSet(ctx, "notify-keyspace-events", flags).Err()
}

// modeFigures is what one mode's dashboard did.
type modeFigures struct {
	mode       model.WatchMode
	idle, busy phaseFigures
	passTook   time.Duration // the dashboard's first pass, 0 when not over
	store      storeFigures
	storeMore  storeFigures // under twice the budget
}

// mode runs the dashboard in mode for two phases: nothing changing, then
// cfg.rate changes a second.
func (b *bench) mode(ctx context.Context, mode model.WatchMode) (modeFigures, error) {
	m := modeFigures{mode: mode}
	if err := b.notify(ctx, mode); err != nil {
		return m, err
	}
	d, err := startDashboard(b.work, b.cfg.bin, b.cfg.url, mode, b.cfg.budget, b.cfg.resyncEvery)
	if err != nil {
		return m, err
	}
	defer d.stop()
	fmt.Printf("%s: the dashboard open (pid %d), nothing changing\n", mode, d.pid)
	if m.idle, err = b.phase(ctx, d, false); err != nil {
		return m, err
	}
	m.passTook = d.passTook()
	fmt.Printf("  %s\n", m.idle.summary(b.cfg.budget))
	fmt.Printf("%s: the dashboard open, %d changes/s\n", mode, b.cfg.rate)
	if m.busy, err = b.phase(ctx, d, true); err != nil {
		return m, err
	}
	fmt.Printf("  %s; %s\n", m.busy.summary(b.cfg.budget), m.busy.changes)
	if err := d.stop(); err != nil {
		return m, err
	}
	return m, nil
}
