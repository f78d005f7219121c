package serve

import (
	"cmp"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/countertop/countertop/model"
)

// The metrics, as docs/serve.md describes them.
var (
	descKeys = prometheus.NewDesc("countertop_keys",
		"Keys watched, by the pattern of the rule that covers them (empty: no rule), layout and status.",
		[]string{"rule", "layout", "status"}, nil)
	descFill = prometheus.NewDesc("countertop_fill_ratio_max",
		"The highest value/limit of the rule's keys (1 = at the limit; a bucket's share used).",
		[]string{"rule"}, nil)
	descFirstSeen = prometheus.NewDesc("countertop_problem_first_seen_timestamp_seconds",
		"When the oldest current problem of the rule and status was first seen with that status.",
		[]string{"rule", "status"}, nil)
	descCommands = prometheus.NewDesc("countertop_commands_per_second",
		"Commands a second countertop sent lately to its busiest server.", nil, nil)
	descBudget = prometheus.NewDesc("countertop_command_budget",
		"countertop's budget of commands a second per server (--max-commands); 0: no limit.", nil, nil)
	descMode = prometheus.NewDesc("countertop_watch_mode",
		"1 for the watch mode in force (events, tracking, polling, reconnecting...).", []string{"mode"}, nil)
	descLastPass = prometheus.NewDesc("countertop_last_pass_timestamp_seconds",
		"When the last complete pass over the keys ended.", nil, nil)
	descLag = prometheus.NewDesc("countertop_feed_lag_seconds",
		"How far behind Redis the changes followed by events or tracking are (0 while it keeps up).", nil, nil)
	descErrors = prometheus.NewDesc("countertop_errors_total",
		"Times the feed entered an error: disconnected, feed (reads failing), unanswered (a command hanging), stopped.",
		[]string{"kind"}, nil)
	descLive = prometheus.NewDesc("countertop_live",
		"1 while the feed is live and fresh (what /healthz answers 200 for), else 0.", nil, nil)
	descBuild = prometheus.NewDesc("countertop_build_info",
		"1, labelled with the version and commit countertop was built from.", []string{"version", "commit"}, nil)
	descProblemKey = prometheus.NewDesc("countertop_problem_key",
		"1 for each of the --metrics-keys most severe problem keys (key escaped as snapshot JSON does).",
		[]string{"rule", "key", "status"}, nil)
)

// errorKinds are the kinds countertop_errors_total always has, 0 until
// they happen, so that increase() sees their first.
var errorKinds = []string{"disconnected", "feed", "unanswered", "stopped"}

// Describe sends the descriptors of the metrics Collect sends.
func (w *Watcher) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descKeys, descFill, descFirstSeen, descCommands, descBudget, descMode,
		descLastPass, descLag, descErrors, descLive, descBuild, descProblemKey} {
		ch <- d
	}
}

// group is one countertop_keys series.
type group struct {
	rule   int16
	layout model.Layout
	status model.Status
}

// problem is a problem key as countertop_problem_key orders them.
type problem struct {
	key    string
	rule   int16
	status model.Status
	since  time.Time
}

// Collect reads the Store and the feed's state under the lock, and sends
// the metrics once it is released.
func (w *Watcher) Collect(ch chan<- prometheus.Metric) {
	live, _ := w.Health()
	w.mu.Lock()
	rules := w.store.Rules()
	groups := map[group]int{}
	fill := map[int16]float64{}
	first := map[group]time.Time{} // layout unused
	var problems []problem
	for _, c := range w.store.Rows(0, w.store.Len()) {
		groups[group{c.Rule, c.Layout, c.Status}]++
		if f, ok := c.Percent(rules.At(int(c.Rule)).Limit); ok {
			if was, seen := fill[c.Rule]; !seen || f > was {
				fill[c.Rule] = f
			}
		}
		if !c.Status.Problem() {
			continue
		}
		s, ok := w.firstSeen[c.Key]
		if !ok {
			continue
		}
		g := group{rule: c.Rule, status: c.Status}
		if was, seen := first[g]; !seen || s.since.Before(was) {
			first[g] = s.since
		}
		if w.opts.MetricsKeys > 0 {
			problems = append(problems, problem{c.Key, c.Rule, c.Status, s.since})
		}
	}
	state, heard, health, lastPass := w.state, w.heard, w.health, w.lastPass
	errs := make(map[string]float64, len(w.errs))
	for k, v := range w.errs {
		errs[k] = v
	}
	w.mu.Unlock()

	ruleLabel := func(i int16) string {
		if i < 0 {
			return "" // no rule covers the key: --limit and --window apply
		}
		return model.JSONKey(rules.At(int(i)).Pattern)
	}
	for g, n := range groups {
		ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(n), ruleLabel(g.rule), g.layout.String(), g.status.String())
	}
	for r, f := range fill {
		ch <- prometheus.MustNewConstMetric(descFill, prometheus.GaugeValue, f, ruleLabel(r))
	}
	for g, t := range first {
		ch <- prometheus.MustNewConstMetric(descFirstSeen, prometheus.GaugeValue, seconds(t), ruleLabel(g.rule), g.status.String())
	}
	ch <- prometheus.MustNewConstMetric(descCommands, prometheus.GaugeValue, health.Commands)
	ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, w.opts.Budget)
	if heard {
		ch <- prometheus.MustNewConstMetric(descMode, prometheus.GaugeValue, 1, modeOf(&state))
	}
	if !lastPass.IsZero() {
		ch <- prometheus.MustNewConstMetric(descLastPass, prometheus.GaugeValue, seconds(lastPass))
	}
	ch <- prometheus.MustNewConstMetric(descLag, prometheus.GaugeValue, health.Behind.Seconds())
	for _, k := range errorKinds {
		ch <- prometheus.MustNewConstMetric(descErrors, prometheus.CounterValue, errs[k], k)
	}
	ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, b2f(live))
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, w.opts.Version, w.opts.Commit)

	// The most severe first, then the longest-standing, then by name, so
	// that the same keys keep their series from one scrape to the next.
	slices.SortFunc(problems, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.status, b.status), a.since.Compare(b.since), cmp.Compare(a.key, b.key))
	})
	for _, p := range problems[:min(len(problems), w.opts.MetricsKeys)] {
		ch <- prometheus.MustNewConstMetric(descProblemKey, prometheus.GaugeValue, 1, ruleLabel(p.rule), model.JSONKey(p.key), p.status.String())
	}
}

// seconds is t as a Prometheus timestamp: seconds since the epoch.
func seconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
