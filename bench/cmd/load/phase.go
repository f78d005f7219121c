package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countertop/countertop/bench/measure"
	"github.com/redis/go-redis/v9"
)

// sampleEvery is how often the phase reads INFO commandstats: the budget
// is a rate a second, so a second is the span it must hold over.
const sampleEvery = time.Second

// phaseFigures is what one phase measured.
type phaseFigures struct {
	window   time.Duration
	ping     measure.Latencies // another client's
	calls    map[string]int64  // countertop's commands, by name (commandstats: "client|tracking")
	maxRate  float64           // countertop's commands in the busiest second, a second
	slow     []redis.SlowLog   // countertop's connections' entries over targetSlow
	ownSlow  int               // the bench's own connections' entries
	cpu      float64           // countertop's CPU, % of one core; -1 when stopped
	changes  string            // what the load generator did, "" when nothing changed
	screen   measure.Latencies // a change of the probe key to the screen
	misses   int               // probe changes never seen on screen within screenTimeout
	passOver bool              // the dashboard's first pass was over before the idle span
	idle     time.Duration     // the span, after the first pass, that idleReads cover
	idleRead map[string]int64  // countertop's reads in it, by command
}

// minIdle is the least span after the first pass that the reads sent
// while nothing changes are counted over.
const minIdle = 5 * time.Second

// sample is INFO commandstats at a moment, with what the bench itself had
// sent by then.
type sample struct {
	at         time.Time
	calls      map[string]int64
	probePings int64
}

// nonReads are the commands countertop sends that read no key: liveness,
// set-up and subscriptions.
var nonReads = []string{"ping", "info", "hello", "select", "auth", "subscribe", "psubscribe", "ssubscribe", "unsubscribe", "punsubscribe"}

func isRead(cmd string) bool {
	return !slices.Contains(nonReads, cmd) && !strings.HasPrefix(cmd, "client|") && !strings.HasPrefix(cmd, "config|") &&
		!strings.HasPrefix(cmd, "command|") && !strings.HasPrefix(cmd, "cluster|")
}

// phase measures cfg.duration with the dashboard d open (nil: countertop
// stopped), with cfg.rate changes a second when changing.
func (b *bench) phase(ctx context.Context, d *dashboard, changing bool) (phaseFigures, error) {
	f := phaseFigures{cpu: -1}
	if err := b.rdb.SlowLogReset(ctx).Err(); err != nil {
		return f, err
	}
	probe, err := measure.StartProbe(ctx, b.probeOptions())
	if err != nil {
		return f, err
	}
	var gen *generator
	if changing {
		if gen, err = startGenerator(b.opt.Addr, int(b.cfg.duration.Seconds()*float64(b.cfg.rate)), b.cfg.matching, b.cfg.hashEvery, b.cfg.rate, false); err != nil {
			probe.End()
			return f, err
		}
	}
	var cpu0 time.Duration
	var sp *screenProbe
	if d != nil {
		if cpu0, err = d.cpu(); err != nil {
			probe.End()
			return f, err
		}
		if changing {
			sp = startScreenProbe(ctx, b.rdb, d)
		}
	}
	start := time.Now()
	var samples []sample
	var passOverAt time.Time
	for {
		s, err := b.sample(ctx, probe)
		if err != nil {
			probe.End()
			return f, err
		}
		samples = append(samples, s)
		if d != nil && !d.passOver() {
			d.checkPass()
		}
		if d != nil && d.passOver() && passOverAt.IsZero() {
			passOverAt = s.at
		}
		if time.Since(start) >= b.cfg.duration {
			break
		}
		time.Sleep(time.Until(s.at.Add(sampleEvery)))
	}
	f.window = time.Since(start)
	if sp != nil {
		f.screen, f.misses = sp.end()
	}
	f.ping = probe.End()
	if gen != nil {
		if f.changes, err = gen.summary(); err != nil {
			return f, err
		}
	}
	if d != nil {
		cpu1, err := d.cpu()
		if err != nil {
			return f, err
		}
		f.cpu = 100 * (cpu1 - cpu0).Seconds() / f.window.Seconds()
	}
	if f.slow, f.ownSlow, err = b.slowlog(ctx); err != nil {
		return f, err
	}

	first, last := samples[0], samples[len(samples)-1]
	f.calls = countertops(first, last)
	for i := 1; i < len(samples); i++ {
		c := countertops(samples[i-1], samples[i])
		f.maxRate = max(f.maxRate, float64(sum(c, nil))/samples[i].at.Sub(samples[i-1].at).Seconds())
	}
	if d != nil && !changing && !passOverAt.IsZero() && passOverAt.Before(samples[len(samples)-1].at.Add(-minIdle)) {
		// From the sample after the one that saw the pass over: the pass
		// may have ended just before it.
		f.passOver = true
		f.idleRead = map[string]int64{}
		for i := 1; i < len(samples); i++ {
			if !samples[i-1].at.After(passOverAt) {
				continue
			}
			f.idle += samples[i].at.Sub(samples[i-1].at)
			for cmd, n := range countertops(samples[i-1], samples[i]) {
				if isRead(cmd) && n != 0 {
					f.idleRead[cmd] += n
				}
			}
		}
	}
	return f, nil
}

// probeOptions are the probe's connection's: named as the bench's.
func (b *bench) probeOptions() *redis.Options {
	o := *b.opt
	o.ClientName = benchName + "-probe"
	return &o
}

// sample reads INFO commandstats, and what the probe had sent just before.
func (b *bench) sample(ctx context.Context, p *measure.Probe) (sample, error) {
	return sampleOf(ctx, b.rdb, p.Sent())
}

// sampleOf reads INFO commandstats of rdb's server, which had had
// probePings of the bench's PINGs by then.
func sampleOf(ctx context.Context, rdb *redis.Client, probePings int64) (sample, error) {
	s := sample{probePings: probePings, calls: map[string]int64{}}
	info, err := rdb.Info(ctx, "server", "commandstats").Result()
	if err != nil {
		return s, err
	}
	for line := range strings.Lines(info) {
		name, fields, _ := strings.Cut(strings.TrimSpace(line), ":")
		if name == "server_time_usec" {
			// Redis's clock as it counted: a reply that a busy machine
			// delays does not blur the span between two samples.
			us, err := strconv.ParseInt(fields, 10, 64)
			if err != nil {
				return s, fmt.Errorf("INFO server says server_time_usec:%s", fields)
			}
			s.at = time.UnixMicro(us)
		}
		cmd, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !isCmd {
			continue
		}
		for field := range strings.SplitSeq(fields, ",") {
			if v, ok := strings.CutPrefix(field, "calls="); ok {
				s.calls[cmd], _ = strconv.ParseInt(v, 10, 64)
			}
		}
	}
	if s.at.IsZero() {
		return s, fmt.Errorf("INFO server gave no server_time_usec (Redis 6.2 or later does)")
	}
	return s, nil
}

// countertops is the commands Redis ran between two samples, less the
// bench's own: the probe's PINGs, the INFO of the later sample, the load
// generator's INCRs and the screen probe's SETs (countertop sends neither
// on its own), and every HELLO and CLIENT SETNAME, which the bench's
// connections send as they open (countertop's own are sent once, as it
// connects). What is left is countertop's.
func countertops(before, after sample) map[string]int64 {
	d := map[string]int64{}
	for cmd, n := range after.calls {
		if n -= before.calls[cmd]; n != 0 {
			d[cmd] = n
		}
	}
	d["ping"] -= after.probePings - before.probePings
	d["info"]--
	delete(d, "incr")
	delete(d, "set")
	delete(d, "hello")
	delete(d, "client|setname")
	for cmd, n := range d {
		if n <= 0 {
			delete(d, cmd)
		}
	}
	return d
}

// sum adds up calls, those of which keep says true to (nil: all).
func sum(calls map[string]int64, keep func(string) bool) int64 {
	var n int64
	for cmd, c := range calls {
		if keep == nil || keep(cmd) {
			n += c
		}
	}
	return n
}

// slowlog is the SLOWLOG since the phase began: countertop's entries, and
// how many were the bench's own (named benchName-…).
func (b *bench) slowlog(ctx context.Context) ([]redis.SlowLog, int, error) {
	return slowlogOf(ctx, b.rdb)
}

// slowlogOf is slowlog of rdb's server.
func slowlogOf(ctx context.Context, rdb *redis.Client) ([]redis.SlowLog, int, error) {
	logs, err := rdb.SlowLogGet(ctx, -1).Result()
	if err != nil {
		return nil, 0, err
	}
	var theirs []redis.SlowLog
	own := 0
	for _, l := range logs {
		if strings.HasPrefix(l.ClientName, benchName) {
			own++
			continue
		}
		theirs = append(theirs, l)
	}
	return theirs, own, nil
}

// byCommand is calls as "getrange 12, pttl 12", largest first.
func byCommand(calls map[string]int64) string {
	cmds := slices.Collect(maps.Keys(calls))
	slices.SortFunc(cmds, func(a, b string) int {
		if calls[a] != calls[b] {
			return int(calls[b] - calls[a])
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, c := range cmds {
		parts = append(parts, fmt.Sprintf("%s %d", c, calls[c]))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// slowSummary is the SLOWLOG entries by command, with the slowest.
func slowSummary(logs []redis.SlowLog) string {
	count := map[string]int64{}
	var worst time.Duration
	for _, l := range logs {
		count[strings.ToLower(l.Args[0])]++
		worst = max(worst, l.Duration)
	}
	if len(logs) == 0 {
		return "none"
	}
	return fmt.Sprintf("%s (slowest %s)", byCommand(count), msf(worst))
}

// summary is a line for the progress output.
func (f phaseFigures) summary(budget int) string {
	total := sum(f.calls, nil)
	s := fmt.Sprintf("countertop %.0f commands/s (busiest second %.0f; budget %d): %s; PING %v; SLOWLOG %s; CPU %.1f%%",
		float64(total)/f.window.Seconds(), f.maxRate, budget, byCommand(f.calls), f.ping, slowSummary(f.slow), f.cpu)
	if f.passOver {
		s += fmt.Sprintf("; reads after the first pass, over %.0f s: %s", f.idle.Seconds(), byCommand(f.idleRead))
	}
	if f.screen != nil || f.misses > 0 {
		s += fmt.Sprintf("; probe key to the screen %v, %d not seen within %v", f.screen, f.misses, screenTimeout)
	}
	return s
}

func msf(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
