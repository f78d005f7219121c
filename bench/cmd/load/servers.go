package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/bench/seed"
	ctconfig "github.com/countertop/countertop/config"
)

// The dashboard over several servers (issue 33, item 7), with -servers:
//
//   - the first screen: from the dashboard's start to its screen showing
//     rows of every live server but one, with that one's place taken by a
//     server that accepts and never answers, and without it, turn about;
//   - each server's load (INFO commandstats, each on its own clock) against
//     its own budget, while the real dashboard watches them all: during
//     the first pass, then nothing changing, then cfg.rate INCRs a second
//     on each server.
//
// Each server is watched in its own best mode within its own budget, as a
// config file names them: the first 40 % with keyspace notifications on
// (auto picks events), the next 40 % without (auto picks tracking), the
// rest polled (mode = "poll", as where neither is allowed); every other
// server under a budget of serversLowBudget, the others under the
// dashboard's default.

// serversLowBudget is the budget of every other server.
const serversLowBudget = 5000

// firstScreenTimeout bounds the wait for a first screen.
const firstScreenTimeout = time.Minute

// passTimeout bounds the first pass over every server.
const passTimeout = 10 * time.Minute

// firstScreenRows is the pane's height while the first screen is timed:
// tall enough that the rows of a server whose pass goes a quarter as fast
// as the others' (its budget a quarter of theirs) are among those on
// screen from its first reads, sorted by key; 120x40 is the rest's.
const firstScreenRows = 200

// benchServer is one of the servers and how the dashboard watches it.
type benchServer struct {
	name, url string
	addr      string
	mode      string // the [[server]] table's: "auto" or "poll"
	events    bool   // keyspace notifications on (auto picks events)
	budget    int    // max_commands; config.DefaultMaxCommands when not set
	rdb       *redis.Client
}

// modeWord is how the report names the mode the server is watched in.
func (s benchServer) modeWord() string {
	switch {
	case s.mode == "poll":
		return "poll"
	case s.events:
		return "auto (events)"
	}
	return "auto (tracking)"
}

func runServers(ctx context.Context, cfg config, urls []string, screens int) error {
	if len(urls) < 2 {
		return fmt.Errorf("-servers names %d server: give two or more", len(urls))
	}
	servers := make([]benchServer, len(urls))
	for i, url := range urls {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return err
		}
		opt.ClientName = benchName + "-control"
		s := benchServer{name: fmt.Sprintf("s%d", i), url: url, addr: opt.Addr, mode: "auto", budget: ctconfig.DefaultMaxCommands, rdb: redis.NewClient(opt)}
		defer s.rdb.Close()
		switch {
		case i < len(urls)*4/10:
			s.events = true
		case i >= len(urls)*8/10:
			s.mode = "poll"
		}
		if i%2 == 1 {
			s.budget = serversLowBudget
		}
		flags := ""
		if s.events {
			// Every class the seeded keys need, hashes too: without h
			// the hashes are read again every interval (redisclient's
			// rereads), which is not events mode at its best.
			flags = "K$hgxe"
		}
		for k, v := range map[string]string{"slowlog-log-slower-than": fmt.Sprint(targetSlow.Microseconds()), "slowlog-max-len": "10000", "notify-keyspace-events": flags} {
			if err := s.rdb.ConfigSet(ctx, k, v).Err(); err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
		}
		servers[i] = s
	}
	keys, err := servers[0].rdb.DBSize(ctx).Result()
	if err != nil {
		return fmt.Errorf("cannot reach the benchmark Redis: %w", err)
	}
	work, err := os.MkdirTemp("", "countertop-servers")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	fmt.Printf("machine: %d CPUs for countertop and the bench; %s; load average at start %s", runtime.NumCPU(), runtime.Version(), loadavg())
	fmt.Printf("%d servers of %d keys each, %d matching %s (the same names on each); each steady phase %v; changes %d/s on each server\n\n",
		len(servers), keys, cfg.matching, seed.Pattern, cfg.duration, cfg.rate)
	for _, s := range servers {
		fmt.Printf("  %-4s %-16s budget %6d   %s\n", s.name, s.modeWord(), s.budget, s.addr)
	}
	fmt.Println()

	if screens > 0 {
		if err := firstScreens(ctx, cfg, work, servers[:len(servers)-1], screens); err != nil {
			return err
		}
	}
	return serversLoad(ctx, cfg, work, servers)
}

// writeServersConfig writes the config file of servers, and of a server
// named "hang" at hang after them when hang is not "".
func writeServersConfig(dir string, servers []benchServer, hang string) (string, error) {
	var b strings.Builder
	for _, s := range servers {
		fmt.Fprintf(&b, "[[server]]\nname = %q\nurl = %q\nmode = %q\n", s.name, s.url, s.mode)
		if s.budget != ctconfig.DefaultMaxCommands {
			fmt.Fprintf(&b, "max_commands = %d\n", s.budget)
		}
		b.WriteString("\n")
	}
	if hang != "" {
		fmt.Fprintf(&b, "[[server]]\nname = \"hang\"\nurl = \"redis://%s/0\"\n", hang)
	}
	path := filepath.Join(dir, fmt.Sprintf("servers-%d.toml", time.Now().UnixNano()))
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// hangingServer accepts connections and never answers, until closed.
func hangingServer() (net.Listener, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	go func() {
		var held []net.Conn // open, unanswered, until the listener closes
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	return ln, nil
}

// screenTimes is when a first screen showed what, from the start.
type screenTimes struct {
	header, rows time.Duration
	hangLine     string // the hanging server's header line then, if any
}

// firstScreens times the dashboard's first screen over live, with and
// without a hanging server after them, runs times each, turn about.
func firstScreens(ctx context.Context, cfg config, work string, live []benchServer, runs int) error {
	ln, err := hangingServer()
	if err != nil {
		return err
	}
	defer ln.Close()
	fmt.Printf("first screen: from the start to the header, and to rows of each of the %d live servers on screen (120x%d), %d runs each, turn about; load average %s",
		len(live), firstScreenRows, runs, loadavg())
	times := map[bool][]screenTimes{}
	for r := range runs {
		for _, hang := range []bool{false, true} {
			addr := ""
			if hang {
				addr = ln.Addr().String()
			}
			t, err := firstScreen(cfg, work, live, addr)
			if err != nil {
				return fmt.Errorf("first screen, run %d, hanging server %t: %w", r+1, hang, err)
			}
			times[hang] = append(times[hang], t)
		}
	}
	for _, hang := range []bool{false, true} {
		what := fmt.Sprintf("%d live servers", len(live))
		if hang {
			what += " and one that hangs"
		}
		var header, rows measure.Latencies
		for _, t := range times[hang] {
			header, rows = append(header, t.header), append(rows, t.rows)
		}
		slices.Sort(header)
		slices.Sort(rows)
		fmt.Printf("  %s:\n    the header: median %.0f ms (%s)\n    rows of every live server: median %.0f ms (%s)\n",
			what, ms(header.At(0.5)), spans(header), ms(rows.At(0.5)), spans(rows))
		if hang {
			fmt.Printf("    the hanging server's line then: %q\n", times[hang][0].hangLine)
		}
	}
	fmt.Printf("  load average %s\n", loadavg())
	return nil
}

// firstScreen starts the dashboard over live (and a server at hang, when
// not ""), times its first screen, and quits it.
func firstScreen(cfg config, work string, live []benchServer, hang string) (screenTimes, error) {
	var t screenTimes
	path, err := writeServersConfig(work, live, hang)
	if err != nil {
		return t, err
	}
	d, err := launchDashboard(work, cfg.bin, fmt.Sprintf("--config %s --pattern '%s'", path, seed.Pattern), 120, firstScreenRows)
	if err != nil {
		return t, err
	}
	defer d.stop()
	err = d.waitScreen(firstScreenTimeout, 5*time.Millisecond, func(s string) bool {
		at := time.Since(d.started)
		if t.header == 0 && strings.Contains(s, "countertop ·") {
			t.header = at
		}
		shown := rowServers(s)
		for _, l := range live {
			if !shown[l.name] {
				return false
			}
		}
		t.rows = at
		for line := range strings.Lines(s) {
			if strings.HasPrefix(line, "hang · ") {
				t.hangLine = strings.TrimSpace(line)
			}
		}
		return true
	})
	if err != nil {
		return t, err
	}
	return t, d.stop()
}

// rowServers are the servers named in the SERVER cells of the screen's
// rows: the field after a matching key's.
func rowServers(screen string) map[string]bool {
	shown := map[string]bool{}
	prefix := strings.TrimSuffix(seed.Pattern, "*")
	for line := range strings.Lines(screen) {
		f := strings.Fields(line)
		for i := 0; i+1 < len(f); i++ {
			if strings.HasPrefix(f[i], prefix) {
				shown[f[i+1]] = true
				break
			}
		}
	}
	return shown
}

// spans is every latency of l, in ms.
func spans(l measure.Latencies) string {
	parts := make([]string, len(l))
	for i, d := range l {
		parts[i] = fmt.Sprintf("%.0f", ms(d))
	}
	return strings.Join(parts, ", ") + " ms"
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// serversPhase is what one phase measured on each server.
type serversPhase struct {
	name    string
	window  time.Duration
	calls   []map[string]int64 // countertop's commands on each server
	max     []float64          // its busiest second on each, a second
	slow    [][]redis.SlowLog  // its SLOWLOG entries over targetSlow on each
	ownSlow []int              // the bench's own entries on each: INFO, INCR
	cpu     float64            // countertop's CPU, % of one core
	load    string             // the load average at its end
	note    string             // what the generators did, or how the pass ended
}

// serversLoad runs the dashboard over every server and measures each
// server's load: through the first pass, then idle, then changing.
func serversLoad(ctx context.Context, cfg config, work string, servers []benchServer) error {
	path, err := writeServersConfig(work, servers, "")
	if err != nil {
		return err
	}
	for _, s := range servers {
		if err := s.rdb.SlowLogReset(ctx).Err(); err != nil {
			return err
		}
	}
	fmt.Printf("\nload: the dashboard over the %d servers (120x40); load average %s", len(servers), loadavg())
	d, err := launchDashboard(work, cfg.bin, fmt.Sprintf("--config %s --pattern '%s'", path, seed.Pattern), 120, 40)
	if err != nil {
		return err
	}
	defer d.stop()
	var phases []serversPhase
	for _, p := range []struct {
		name     string
		changing bool
	}{{"first pass", false}, {"idle", false}, {"changing", true}} {
		f, err := serversPhaseRun(ctx, cfg, d, servers, p.name, p.changing)
		if err != nil {
			return fmt.Errorf("%s: %w", p.name, err)
		}
		fmt.Printf("  %s: %.0f s, countertop's CPU %.1f %% of a core%s; load average %s", f.name, f.window.Seconds(), f.cpu, f.note, f.load)
		phases = append(phases, f)
	}
	screen, _ := d.screen()
	if err := d.stop(); err != nil {
		return err
	}
	printServersLoad(servers, phases)
	fmt.Printf("\nthe screen at the end:\n%s\nload average at the end %s", screen, loadavg())
	return nil
}

// serversPhaseRun samples every server's commandstats each second, for
// cfg.duration, or through the dashboard's first pass when name is "first
// pass", with cfg.rate INCRs a second on each server when changing.
func serversPhaseRun(ctx context.Context, cfg config, d *dashboard, servers []benchServer, name string, changing bool) (serversPhase, error) {
	f := serversPhase{name: name, max: make([]float64, len(servers)), slow: make([][]redis.SlowLog, len(servers)), ownSlow: make([]int, len(servers))}
	pass := name == "first pass"
	if !pass {
		for _, s := range servers {
			if err := s.rdb.SlowLogReset(ctx).Err(); err != nil {
				return f, err
			}
		}
	}
	var gens []*generator
	if changing {
		for _, s := range servers {
			g, err := startGenerator(s.addr, int(cfg.duration.Seconds()*float64(cfg.rate)), cfg.matching, cfg.hashEvery, cfg.rate, false)
			if err != nil {
				return f, err
			}
			gens = append(gens, g)
		}
	}
	cpu0, err := d.cpu()
	if err != nil {
		return f, err
	}
	start := time.Now()
	var samples [][]sample // a sample of every server, each second
	for {
		round := make([]sample, len(servers))
		for i, s := range servers {
			if round[i], err = sampleOf(ctx, s.rdb, 0); err != nil {
				return f, fmt.Errorf("%s: %w", s.name, err)
			}
		}
		samples = append(samples, round)
		if pass {
			d.checkPass()
			if d.passOver() {
				f.note = "; the pass over on screen after " + d.passTook().Round(time.Second).String()
				break
			}
			if time.Since(start) > passTimeout {
				f.note = fmt.Sprintf("; the pass NOT over on screen after %v", passTimeout)
				break
			}
		} else if time.Since(start) >= cfg.duration {
			break
		}
		time.Sleep(time.Until(start.Add(time.Duration(len(samples)) * sampleEvery)))
	}
	f.window = time.Since(start)
	for _, g := range gens {
		said, err := g.summary()
		if err != nil {
			return f, err
		}
		if f.note == "" {
			f.note = "; each server's generator: " + said
		}
	}
	cpu1, err := d.cpu()
	if err != nil {
		return f, err
	}
	f.cpu = 100 * (cpu1 - cpu0).Seconds() / f.window.Seconds()
	first, last := samples[0], samples[len(samples)-1]
	for i, s := range servers {
		f.calls = append(f.calls, countertops(first[i], last[i]))
		for j := 1; j < len(samples); j++ {
			c := countertops(samples[j-1][i], samples[j][i])
			f.max[i] = max(f.max[i], float64(sum(c, nil))/samples[j][i].at.Sub(samples[j-1][i].at).Seconds())
		}
		if f.slow[i], f.ownSlow[i], err = slowlogOf(ctx, s.rdb); err != nil {
			return f, err
		}
	}
	f.load = loadavg()
	return f, nil
}

// printServersLoad writes a row a server: its mode (as its commands show
// it), its budget, and its commands a second in each phase, on average
// and in the busiest second; then each server's verdict.
func printServersLoad(servers []benchServer, phases []serversPhase) {
	fmt.Printf("\neach server's commands/s from countertop, by Redis's commandstats: on average (busiest second)\n\n")
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := []string{"server", "mode", "seen", "budget"}
	for _, p := range phases {
		head = append(head, p.name)
	}
	fmt.Fprintln(w, strings.Join(append(head, "SLOWLOG > 10 ms", ""), "\t"))
	worst := make([]float64, len(servers))
	for i, s := range servers {
		all := map[string]int64{}
		cells := []string{s.name, s.modeWord(), "", fmt.Sprint(s.budget)}
		slow := 0
		for _, p := range phases {
			for cmd, n := range p.calls[i] {
				all[cmd] += n
			}
			cells = append(cells, fmt.Sprintf("%.0f (%.0f)", float64(sum(p.calls[i], nil))/p.window.Seconds(), p.max[i]))
			worst[i] = max(worst[i], p.max[i])
			slow += len(p.slow[i])
		}
		cells[2] = modeSeen(all)
		fmt.Fprintln(w, strings.Join(append(cells, fmt.Sprint(slow), ""), "\t"))
	}
	w.Flush()
	fmt.Printf("\ntargets\n")
	for i, s := range servers {
		var slow []redis.SlowLog
		own := 0
		for _, p := range phases {
			slow = append(slow, p.slow[i]...)
			own += p.ownSlow[i]
		}
		fmt.Printf("  %-4s busiest second %.0f of its budget %d (%+.1f%%)   %s; SLOWLOG over %v from countertop: %s; the bench's own (INFO, INCR): %d\n",
			s.name, worst[i], s.budget, 100*(worst[i]/float64(s.budget)-1), verdict(worst[i] <= float64(s.budget)), targetSlow, slowSummary(slow), own)
	}
	for _, p := range phases {
		fmt.Printf("  %s, by command on each server:\n", p.name)
		for i, s := range servers {
			fmt.Printf("    %-4s %s\n", s.name, byCommand(p.calls[i]))
		}
	}
}

// modeSeen is the watch mode countertop's commands on a server show:
// CLIENT TRACKING for tracking (whose invalidations come on a SUBSCRIBE),
// else a subscription for events, else polling.
func modeSeen(calls map[string]int64) string {
	switch {
	case calls["client|tracking"] > 0:
		return "tracking"
	case calls["psubscribe"] > 0 || calls["subscribe"] > 0:
		return "events"
	}
	return "poll"
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown\n"
	}
	return strings.Join(f[:3], " ") + "\n"
}
