// Command scale measures countertop against a large keyspace in a Redis
// of its own (bench/scale.sh starts one and seeds it with bench/cmd/seed),
// and prints each figure next to its target (issue 6, BENCHMARKS.md):
//
//  1. a cold `countertop snapshot`: wall time against what the same reads
//     cost Redis (INFO commandstats), commands per key, the walk alone, the
//     reads alone through redisclient with every reply thrown away, the
//     same work by a bare client on raw sockets (bare.go: the floor of the
//     ratio for any client on this machine), and the same work done with
//     redis-cli in a shell;
//  2. the slowest command Redis logged (SLOWLOG, over 10 ms) and another
//     client's PING latency while the snapshot runs;
//  3. the dashboard's first pass: first rows and progress while scanning;
//  4. refreshing the matched keys, against the 1 s poll interval, alone
//     and in the poller while discovery passes go on;
//  6. Go heap per tracked key with every key of the keyspace tracked.
//
// Frame cost (5) is a Go benchmark: see bench/scale.sh. With
// -snapshot-only it measures (1) and the SLOWLOG alone, as for a mixed
// keyspace (bench/scale.sh --mixed), whose keys no bare client reads.
//
// Given a node of a cluster as -url, or -url again for several servers,
// it measures (1) and the SLOWLOG over all of them (issue 33, item 7):
// each node's Redis time, in the run and when the bare client reads it
// alone, and the snapshot's wall time against their sum (nodes.go).
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/seed"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// Targets, from issue 6.
const (
	targetRatio    = 1.2                   // snapshot wall time / Redis time
	targetSlowest  = 10 * time.Millisecond // no command slower (SLOWLOG)
	targetInterval = time.Second           // a refresh of every known key fits well within one
	targetHeap     = 256                   // bytes of Go heap per tracked key
	refreshRuns    = 3
)

func main() {
	var cfg config
	flag.Func("url", "the benchmark Redis, seeded by bench/cmd/seed (required; never a shared one): a node of a cluster for the cluster, again for each of several servers", func(u string) error {
		cfg.urls = append(cfg.urls, u)
		return nil
	})
	flag.StringVar(&cfg.bin, "countertop", "", "the countertop binary to time (required)")
	flag.StringVar(&cfg.pattern, "pattern", seed.Pattern, "the pattern the seeded counters match")
	flag.IntVar(&cfg.runs, "runs", 11, "snapshot runs; the median is reported")
	flag.IntVar(&cfg.sample, "sample", 1000, "keys the redis-cli-per-key baseline reads (it is slow)")
	flag.BoolVar(&cfg.heap, "heap", true, "also track every key of the keyspace, to measure heap per key")
	flag.DurationVar(&cfg.steady, "steady", 20*time.Second, "how long to watch the poller once its first pass is over")
	flag.BoolVar(&cfg.snapshotOnly, "snapshot-only", false, "measure the cold snapshot (1) and the SLOWLOG only (always, for several nodes)")
	flag.BoolVar(&cfg.bare, "bare", false, "with -snapshot-only, time the bare client too, on every node at once and on each alone (strings only; always, for several nodes)")
	flag.DurationVar(&cfg.window, "window", 0, "the window of every key (--window), which a log's count inside it needs; 0: none")
	flag.Parse()
	if len(cfg.urls) == 0 || cfg.bin == "" {
		fmt.Fprintln(os.Stderr, "scale: -url and -countertop are required: run bench/scale.sh, which sets them")
		os.Exit(2)
	}
	if err := run(context.Background(), cfg, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "scale: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("\nload average at the end: %s\n", loadAverage())
}

type config struct {
	urls         []string
	bin, pattern string
	runs, sample int
	heap         bool
	steady       time.Duration
	snapshotOnly bool
	bare         bool
	window       time.Duration
}

// rules are the rules countertop reads under: the window of -window.
func (cfg config) rules() *model.Rules {
	return &model.Rules{Fallback: model.Rule{Window: cfg.window, ExpectTTL: true}}
}

// figures is everything measured, for the report.
type figures struct {
	keyspace       int64
	snapshots      []snapshotRun // sorted by wall time
	walks          []snapshotRun // snapshots of a pattern nothing matches: the walk alone
	discards       []snapshotRun // the same reads in this process, each reply thrown away
	bares          []snapshotRun // the same work by a bare client (bare.go)
	idle, during   latencies     // another client's PING
	slow           int           // SLOWLOG entries
	slowest        string        // what they were
	scans          latencies     // each SCAN's cost to Redis in a discovery walk
	pass           passReport
	refreshed      int
	refresh        []time.Duration // sorted
	steady         steadyReport
	oneCLI, perKey time.Duration // the shell baselines; perKey for sample keys
	sample         int
	heap           float64 // bytes per key, 0 when not measured
	heapKeys       int
	fleet          *fleet        // the nodes read
	alone          []serverStats // each node's figures when the bare client reads it alone (see medianAlone), when measured
}

func run(ctx context.Context, cfg config, w io.Writer) error {
	fl, err := newFleet(ctx, cfg.urls)
	if err != nil {
		return err
	}
	defer fl.Close()
	if fl.several() {
		cfg.snapshotOnly, cfg.bare = true, true // the dashboard reads one server
	}
	rdb := fl.nodes[0]
	opt := rdb.Options()
	f := figures{fleet: fl}
	if f.keyspace, err = fl.dbSize(ctx); err != nil {
		return err
	}
	info, err := rdb.InfoMap(ctx, "server").Result()
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "machine: %d CPUs, %s; redis %s; %s; load average %s\n", runtime.NumCPU(), cpuModel(), info["Server"]["redis_version"], runtime.Version(), loadAverage())
	fmt.Fprintf(w, "keyspace: %d keys on %s; pattern %s\n\n", f.keyspace, fl.what(), cfg.pattern)

	// Every command countertop sends from here on must stay out of the
	// SLOWLOG.
	err = fl.each(ctx, func(ctx context.Context, node *redis.Client) error {
		if err := node.ConfigSet(ctx, "slowlog-log-slower-than", fmt.Sprint(targetSlowest.Microseconds())).Err(); err != nil {
			return err
		}
		return node.SlowLogReset(ctx).Err()
	})
	if err != nil {
		return err
	}

	// (1) Cold snapshots, of the pattern and of one nothing matches (the
	// walk alone), and the same reads in this process and by the bare
	// client (on every node at once, then on each alone), turn about, so
	// that a busy moment of the machine falls on all alike; then (2) one
	// more with another client's PING.
	walkOnly := cfg
	walkOnly.pattern = "countertop-scale-nothing:*"
	measures := []func() (snapshotRun, error){
		func() (snapshotRun, error) { return snapshot(ctx, fl, cfg) },
		func() (snapshotRun, error) { return snapshot(ctx, fl, walkOnly) },
		func() (snapshotRun, error) { return discardAll(ctx, fl, cfg) },
	}
	if !cfg.snapshotOnly || cfg.bare {
		measures = append(measures, func() (snapshotRun, error) { return bare(ctx, fl, cfg) })
	}
	if fl.several() {
		for i := range fl.nodes {
			measures = append(measures, func() (snapshotRun, error) { return bare(ctx, fl.alone(i), cfg) })
		}
	}
	series, err := turnAbout(cfg.runs, measures...)
	if err != nil {
		return err
	}
	f.snapshots, f.walks, f.discards = series[0], series[1], series[2]
	if len(series) > 3 {
		f.bares = series[3]
	}
	if fl.several() {
		f.alone = medianAlone(series[4:])
	}
	if cfg.snapshotOnly {
		if f.slow, f.slowest, err = fl.slowlog(ctx); err != nil {
			return err
		}
		f.reportSnapshot(w)
		if fl.several() {
			f.reportNodes(w)
		}
		f.reportSlowlog(w)
		return nil
	}
	if f.idle, err = idleLatency(ctx, opt); err != nil {
		return err
	}
	p, err := startProbe(ctx, opt)
	if err != nil {
		return err
	}
	if _, err := snapshot(ctx, fl, cfg); err != nil {
		return err
	}
	f.during = p.End()

	// (3) The dashboard's first pass; (4) refreshes of what it found.
	client, err := redisclient.Connect(ctx, redisclient.Options{URL: cfg.urls[0], Password: opt.Password})
	if err != nil {
		return err
	}
	defer client.Close()
	pass, store, stop, err := firstPass(ctx, client, []string{cfg.pattern})
	if err != nil {
		return err
	}
	stop()
	f.pass = pass
	keys := make([]string, 0, store.Len())
	for _, c := range store.Rows(0, store.Len()) {
		keys = append(keys, c.Key)
	}
	f.refreshed = len(keys)
	for range refreshRuns {
		start := time.Now()
		if _, err := client.Fetch(ctx, keys); err != nil {
			return err
		}
		f.refresh = append(f.refresh, time.Since(start))
	}
	slices.Sort(f.refresh)
	if f.steady, err = steadyPoll(ctx, rdb, opt, client, cfg.pattern, cfg.steady); err != nil {
		return err
	}
	if f.slow, f.slowest, err = slowlog(ctx, rdb); err != nil {
		return err
	}
	if f.scans, err = scanCosts(ctx, rdb, client, cfg.pattern); err != nil {
		return err
	}

	// The shell baselines of (1), then (6).
	sh, err := newCLI(opt)
	if err != nil {
		return err
	}
	if f.oneCLI, err = sh.run(ctx, sh.oneClient(cfg.pattern)); err != nil {
		return err
	}
	f.sample = cfg.sample
	if f.perKey, err = sh.run(ctx, sh.perKey(cfg.pattern, cfg.sample)); err != nil {
		return err
	}
	if cfg.heap {
		if f.heap, f.heapKeys, err = heapPerKey(ctx, client); err != nil {
			return err
		}
	}
	f.report(w)
	return nil
}

// report prints every figure next to its target.
func (f *figures) report(w io.Writer) {
	f.reportSnapshot(w)
	med := f.snapshots[len(f.snapshots)/2]
	perKey := time.Duration(float64(f.perKey) * float64(med.rows) / float64(f.sample))
	fmt.Fprintf(w, "    without countertop: redis-cli --scan, then TTL and GET per key\n")
	fmt.Fprintf(w, "      on one redis-cli reading commands    %s   %.1fx countertop's wall time\n", secs(f.oneCLI), float64(f.oneCLI)/float64(med.wall))
	fmt.Fprintf(w, "      a redis-cli per command              %s for %d keys, about %s for %d: %.0fx\n",
		secs(f.perKey), f.sample, secs(perKey), med.rows, float64(perKey)/float64(med.wall))

	f.reportSlowlog(w)
	fmt.Fprintf(w, "    each SCAN of a discovery walk, as Redis timed it: %v\n", f.scans)
	fmt.Fprintf(w, "    another client's PING, idle:            %v\n", f.idle)
	fmt.Fprintf(w, "    another client's PING, during snapshot: %v\n", f.during)

	fmt.Fprintf(w, "\n(3) dashboard start-up over %d keys: first rows after %s; progress sent %d times; pass over after %s with %d keys\n",
		f.keyspace, ms(f.pass.firstRows), len(f.pass.progress), secs(f.pass.done), f.pass.keys)
	for _, q := range sample(f.pass.progress, 6) {
		fmt.Fprintf(w, "    at %9s: scanning… %d keys seen, %d matched\n", ms(q.at), q.seen, q.matched)
	}

	refresh := f.refresh[len(f.refresh)/2]
	fmt.Fprintf(w, "\n(4) refreshing %d known keys (Fetch, median of %d): %s, %.0f keys/s   target well under %v   %s\n",
		f.refreshed, len(f.refresh), secs(refresh), float64(f.refreshed)/refresh.Seconds(), targetInterval, verdict(refresh <= targetInterval/2))
	fmt.Fprintf(w, "    a discovery pass (SCAN of %d keys, reading the matches) took %s\n", f.keyspace, secs(f.pass.done))
	st := f.steady
	cycles := st.window.Seconds() / targetInterval.Seconds()
	fmt.Fprintf(w, "    the poller at a %v interval, for %s after its first pass: a pass under way %.0f%% of the time, %d passes ended\n",
		targetInterval, secs(st.window), 100*st.scanning.Seconds()/st.window.Seconds(), st.passes)
	fmt.Fprintf(w, "      a known key read again every   %v   target %v   %s\n", st.periods, targetInterval, verdict(st.periods.At(0.99) < targetInterval*3/2))
	fmt.Fprintf(w, "      Redis time per cycle           SCAN %s (%.0f calls), the reads of the keys %s\n",
		ms(time.Duration(float64(st.server.time("scan"))/cycles)), float64(st.server.count("scan"))/cycles,
		ms(time.Duration(float64(st.server.time(keyCommands...))/cycles)))
	fmt.Fprintf(w, "      another client's PING meanwhile %v\n", st.ping)

	if f.heapKeys > 0 {
		fmt.Fprintf(w, "\n(6) Go heap with all %d keys tracked (Store + poller): %.0f B/key   target <= %d   %s\n",
			f.heapKeys, f.heap, targetHeap, verdict(f.heap <= targetHeap))
	}
}

// reportSlowlog prints (2)'s count of slow commands.
func (f *figures) reportSlowlog(w io.Writer) {
	what := fmt.Sprintf("snapshots, a dashboard pass, %d refreshes, %s of polling", len(f.refresh), secs(f.steady.window))
	if len(f.refresh) == 0 {
		what = "snapshots"
	}
	fmt.Fprintf(w, "\n(2) commands over %v in SLOWLOG (%s): %d   target 0   %s\n", targetSlowest, what, f.slow, verdict(f.slow == 0))
	if f.slow > 0 {
		fmt.Fprintf(w, "    they were: %s\n", f.slowest)
	}
}

// reportSnapshot prints (1): the cold snapshot's wall time against the
// time Redis spent on its reads, and what it sent per key.
func (f *figures) reportSnapshot(w io.Writer) {
	med := f.snapshots[len(f.snapshots)/2]
	redisTime := med.server.time(readCommands...)
	ratio := float64(med.wall) / float64(redisTime)
	on := ""
	if f.fleet.several() {
		on = " on " + f.fleet.what()
	}
	fmt.Fprintf(w, "(1) cold `countertop snapshot` of %d matching keys among %d%s (median of %s)\n", med.rows, f.keyspace, on, walls(f.snapshots))
	fmt.Fprintf(w, "    wall time                  %s\n", secs(med.wall))
	fmt.Fprintf(w, "    Redis time (commandstats)  %s  (%s)\n", secs(redisTime), med.server.breakdown())
	fmt.Fprintf(w, "    Redis CPU (INFO cpu)       %s  (%.2fx its command time: parsing, replies, sockets)\n", secs(med.server.cpu), float64(med.server.cpu)/float64(redisTime))
	if f.fleet.several() {
		fmt.Fprintf(w, "    wall / Redis time          %.2fx    (the nodes' times in the run, summed: they inflate one another on a shared core; see below)\n", ratio)
	} else {
		fmt.Fprintf(w, "    wall / Redis time          %.2fx    target <= %.1fx   %s\n", ratio, targetRatio, verdict(ratio <= targetRatio))
	}
	fmt.Fprintf(w, "    wall / Redis CPU           %.2fx    (1.0: Redis busy from start to exit; it was busy %.0f%% of the time)\n",
		float64(med.wall)/float64(med.server.cpu), 100*float64(med.server.cpu)/float64(med.wall))
	if split := med.server.split(); split != "" {
		if f.fleet.several() {
			fmt.Fprintf(w, "    Redis's main threads       %s (summed over the nodes)\n", split)
		} else {
			fmt.Fprintf(w, "    Redis's main thread        %s\n", split)
		}
		fmt.Fprintf(w, "                               (running alone is %.2fx its command time; idle is the part a client decides:\n", float64(med.server.sched.ran)/float64(redisTime))
		fmt.Fprintf(w, "                               round trips, and countertop's start, sorting, output and exit)\n")
	}
	fmt.Fprintf(w, "    countertop's own CPU       %s (user + system)\n", secs(med.cpu))
	walk := f.walks[len(f.walks)/2]
	fmt.Fprintf(w, "    the walk alone (a pattern nothing matches): wall %s, Redis time %s: %.2fx%s\n",
		secs(walk.wall), secs(walk.server.time(readCommands...)), float64(walk.wall)/float64(walk.server.time(readCommands...)), idle(walk))
	d := f.discards[len(f.discards)/2]
	fmt.Fprintf(w, "    the same reads with every reply thrown away, in this process (no start-up, no sorting,\n")
	fmt.Fprintf(w, "    no output): wall %s, Redis time %s: %.2fx, Redis busy %.0f%% of it%s\n",
		secs(d.wall), secs(d.server.time(readCommands...)), float64(d.wall)/float64(d.server.time(readCommands...)),
		100*float64(d.server.cpu)/float64(d.wall), idle(d))
	if len(f.bares) > 0 {
		b := f.bares[len(f.bares)/2]
		fmt.Fprintf(w, "    the same work by a bare client (raw sockets, each reply skipped as it is read, nothing kept;\n")
		fmt.Fprintf(w, "    the least any client can take here): wall %s for %d keys, Redis time %s: %.2fx, Redis busy %.0f%% of it%s\n",
			secs(b.wall), b.rows, secs(b.server.time(readCommands...)), float64(b.wall)/float64(b.server.time(readCommands...)),
			100*float64(b.server.cpu)/float64(b.wall), idle(b))
	}
	fmt.Fprintf(w, "    commands per key           %.3f (GETRANGE + PTTL; TYPE and a layout's reads for keys that are not strings) + %.4f SCAN\n",
		float64(med.server.count(keyCommands...))/float64(med.rows), float64(med.server.count("scan"))/float64(med.rows))
	fmt.Fprintf(w, "      by command               %s\n", med.server.perKey(med.rows))
}

// snapshotRun is one timed `countertop snapshot`.
type snapshotRun struct {
	wall   time.Duration
	cpu    time.Duration // countertop's, user and system
	rows   int
	server serverStats   // every node's together
	nodes  []serverStats // each node's, in the fleet's order
}

// idle is how long Redis's main thread waited for r's client, for the
// report (", Redis idle 0.012 s"), or "" where that is not known.
func idle(r snapshotRun) string {
	if !r.server.sched.known {
		return ""
	}
	return ", Redis idle " + secs(r.server.sched.idle())
}

func byWall(a, b snapshotRun) int { return cmp.Compare(a.wall, b.wall) }

// turnAbout runs each of measures in turn, n rounds, and returns each
// one's runs sorted by wall time.
func turnAbout(n int, measures ...func() (snapshotRun, error)) ([][]snapshotRun, error) {
	series := make([][]snapshotRun, len(measures))
	for range n {
		for i, measure := range measures {
			r, err := measure()
			if err != nil {
				return nil, err
			}
			series[i] = append(series[i], r)
		}
	}
	for _, runs := range series {
		slices.SortFunc(runs, byWall)
	}
	return series, nil
}

func snapshot(ctx context.Context, fl *fleet, cfg config) (snapshotRun, error) {
	args := []string{"snapshot", "--pattern", cfg.pattern}
	for _, u := range cfg.urls {
		args = append(args, "--url", u)
	}
	if cfg.window > 0 {
		args = append(args, "--window", cfg.window.String())
	}
	return fl.measure(ctx, func() (snapshotRun, error) { return countertop(ctx, cfg.bin, args...) })
}

// discard runs redisclient.Snapshot of the pattern through client in this
// process, with a callback that keeps nothing: the reads alone, the least
// any snapshot this way can take.
func discard(ctx context.Context, client *redisclient.Client, cfg config) error {
	return client.Snapshot(ctx, []string{cfg.pattern}, 0, func([]model.Observation) error { return nil })
}

// countertop runs the binary with args, away from any config file, and
// times it; rows is how many it printed (the table's lines but its header).
func countertop(ctx context.Context, bin string, args ...string) (snapshotRun, error) {
	dir, err := os.MkdirTemp("", "countertop-scale")
	if err != nil {
		return snapshotRun{}, err
	}
	defer os.RemoveAll(dir)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "XDG_CONFIG_HOME="+dir)
	var lines lineCounter
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &lines, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return snapshotRun{}, fmt.Errorf("%s %s: %v: %s", bin, strings.Join(args, " "), err, stderr.String())
	}
	return snapshotRun{
		wall: time.Since(start),
		cpu:  cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(),
		rows: max(0, int(lines)-1),
	}, nil
}

// lineCounter counts the lines written to it.
type lineCounter int

func (c *lineCounter) Write(p []byte) (int, error) {
	*c += lineCounter(bytes.Count(p, []byte{'\n'}))
	return len(p), nil
}

// idleLatency is another client's PING latency with nothing else running.
func idleLatency(ctx context.Context, opt *redis.Options) (latencies, error) {
	p, err := startProbe(ctx, opt)
	if err != nil {
		return nil, err
	}
	time.Sleep(time.Second)
	return p.End(), nil
}

// heapPerKey tracks every key of the keyspace as the dashboard would and
// returns the Go heap it takes per key.
func heapPerKey(ctx context.Context, client *redisclient.Client) (float64, int, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	pass, store, stop, err := firstPass(ctx, client, []string{"*"})
	if err != nil {
		return 0, 0, err
	}
	defer stop()
	store.Rows(0, 40) // a frame: the order is built
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(store)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(pass.keys), pass.keys, nil
}

// sample picks up to n evenly spread items of s, the last included.
func sample[T any](s []T, n int) []T {
	if len(s) <= n {
		return s
	}
	out := make([]T, 0, n)
	for i := range n {
		out = append(out, s[(i+1)*len(s)/n-1])
	}
	return out
}

func walls(runs []snapshotRun) string {
	var s []string
	for _, r := range runs {
		s = append(s, secs(r.wall))
	}
	return strings.Join(s, ", ")
}

// cpuModel is the processor's name as /proc/cpuinfo gives it.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, value, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(value)
		}
	}
	return "unknown CPU"
}

// loadAverage is the machine's load over 1, 5 and 15 minutes, as
// /proc/loadavg gives it: how busy the machine was, for the figures.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f s", d.Seconds()) }
func ms(d time.Duration) string   { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
