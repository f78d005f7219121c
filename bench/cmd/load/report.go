package main

import (
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/model"
)

// report is everything measured.
type report struct {
	idleBase, busyBase phaseFigures // countertop stopped
	modes              []modeFigures
}

// print writes the table of figures, then each target met or missed.
func (r report) print(cfg config) {
	fmt.Printf("\nfigures (PING: another client's p50 / p99 / max in ms; changes: %d INCR/s over %d counters)\n\n", cfg.rate, cfg.matching)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) { fmt.Fprintln(w, strings.Join(cells, "\t")+"\t") }
	head := []string{"", "stopped"}
	for _, m := range r.modes {
		head = append(head, m.mode.String())
	}
	row(head...)
	each := func(name, base string, cell func(modeFigures) string) {
		cells := []string{name, base}
		for _, m := range r.modes {
			cells = append(cells, cell(m))
		}
		row(cells...)
	}
	each("commands/s, idle (busiest s)", "-", func(m modeFigures) string { return rate(m.idle) })
	each("commands/s, changing (busiest s)", "-", func(m modeFigures) string { return rate(m.busy) })
	each("PING idle", pings(r.idleBase.ping), func(m modeFigures) string { return pings(m.idle.ping) })
	each("PING changing", pings(r.busyBase.ping), func(m modeFigures) string { return pings(m.busy.ping) })
	each("SLOWLOG > 10 ms, countertop's", "-", func(m modeFigures) string {
		return fmt.Sprintf("%d + %d", len(m.idle.slow), len(m.busy.slow))
	})
	each("first pass over after, s", "-", func(m modeFigures) string {
		if m.passTook == 0 {
			return "not over"
		}
		return fmt.Sprintf("%.0f", m.passTook.Seconds())
	})
	each("reads/s idle, first pass over", "-", func(m modeFigures) string {
		if !m.idle.passOver {
			return "pass not over"
		}
		return fmt.Sprintf("%.1f", float64(sum(m.idle.idleRead, nil))/m.idle.idle.Seconds())
	})
	each("CPU changing, % of a core", "-", func(m modeFigures) string { return fmt.Sprintf("%.1f", m.busy.cpu) })
	each("change to screen p50/p99/max ms", "-", func(m modeFigures) string { return pings(m.busy.screen) + missed(m.busy.misses) })
	each("change to store p50/p99/max ms", "-", func(m modeFigures) string {
		if m.store.lat == nil {
			return "-"
		}
		return pings(m.store.lat)
	})
	each(fmt.Sprintf("same, budget %d", 2*cfg.budget), "-", func(m modeFigures) string {
		if m.storeMore.lat == nil {
			return "-"
		}
		return pings(m.storeMore.lat)
	})
	w.Flush()

	fmt.Printf("\ntargets\n")
	for _, m := range r.modes {
		avg := max(m.idle.perSec(), m.busy.perSec())
		busiest := max(m.idle.maxRate, m.busy.maxRate)
		fmt.Printf("  %-8s commands/s at most the budget %d: on average %.0f idle, %.0f changing   %s; busiest second %.0f   %s (%+.1f%%)\n",
			m.mode, cfg.budget, m.idle.perSec(), m.busy.perSec(), verdict(avg <= float64(cfg.budget)), busiest,
			verdict(busiest <= float64(cfg.budget)), 100*(busiest/float64(cfg.budget)-1))
	}
	for _, m := range r.modes {
		for _, c := range []struct {
			name       string
			base, with measure.Latencies
		}{{"idle", r.idleBase.ping, m.idle.ping}, {"changing", r.busyBase.ping, m.busy.ping}} {
			ratio := float64(c.with.At(0.99)) / float64(c.base.At(0.99))
			ok := ratio <= targetPingRatio && c.with.Max() < targetPingMax
			fmt.Printf("  %-8s PING %-8s p99 %s = %.2fx stopped's %s (target <= %.1fx), max %s (target < %v)   %s\n",
				m.mode, c.name, msf(c.with.At(0.99)), ratio, msf(c.base.At(0.99)), targetPingRatio, msf(c.with.Max()), targetPingMax, verdict(ok))
		}
	}
	for _, m := range r.modes {
		slow := append(m.idle.slow[:len(m.idle.slow):len(m.idle.slow)], m.busy.slow...)
		fmt.Printf("  %-8s SLOWLOG entries over %v from countertop: %d (%s); the bench's own: %d   %s\n",
			m.mode, targetSlow, len(slow), slowSummary(slow), m.idle.ownSlow+m.busy.ownSlow, verdict(len(slow) == 0))
	}
	for _, m := range r.modes {
		if m.mode == model.WatchPoll {
			continue
		}
		if !m.idle.passOver {
			fmt.Printf("  %-8s reads while nothing changes: the first pass was not over %v before the end of %v   NOT MEASURED\n", m.mode, minIdle, cfg.duration)
			continue
		}
		n := sum(m.idle.idleRead, nil)
		fmt.Printf("  %-8s reads while nothing changes, %.0f s after the first pass: %d (%s)   %s\n", m.mode, m.idle.idle.Seconds(), n, byCommand(m.idle.idleRead), verdict(n == 0))
	}
	for _, m := range r.modes {
		if m.store.lat == nil {
			continue
		}
		p99 := m.store.lat.At(0.99)
		fmt.Printf("  %-8s change to the store p99 %s (target <= %v)   %s; under a budget of %d, p99 %s\n",
			m.mode, msf(p99), targetLatency, verdict(p99 <= targetLatency), 2*cfg.budget, msf(m.storeMore.lat.At(0.99)))
	}
	for _, m := range r.modes {
		fmt.Printf("  %-8s countertop's CPU at %d changes/s: %.1f %% of a core (no target)\n", m.mode, cfg.rate, m.busy.cpu)
	}
}

func rate(f phaseFigures) string { return fmt.Sprintf("%.0f (%.0f)", f.perSec(), f.maxRate) }

// perSec is countertop's commands a second over the phase.
func (f phaseFigures) perSec() float64 { return float64(sum(f.calls, nil)) / f.window.Seconds() }

func pings(l measure.Latencies) string {
	if len(l) == 0 {
		return "none"
	}
	m := func(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }
	return m(l.At(0.5)) + " / " + m(l.At(0.99)) + " / " + m(l.Max())
}

func missed(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d unseen)", n)
}

func verdict(ok bool) string {
	if ok {
		return "MET"
	}
	return "MISSED"
}
