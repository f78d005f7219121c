package serve

import (
	"cmp"
	"maps"
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
	descLive = prometheus.NewDesc("countertop_live",
		"1 while every server's feed is live and fresh (what /healthz answers 200 for), else 0.", nil, nil)
	descShared = prometheus.NewDesc("countertop_shared_keys",
		"Keys (or hash fields) that two or more servers of the shard group hold, each copy counting the limit once.",
		[]string{"group"}, nil)
	descBuild = prometheus.NewDesc("countertop_build_info",
		"1, labelled with the version and commit countertop was built from.", []string{"version", "commit"}, nil)
)

// perServer are the metrics that are a server's own: its feed's load,
// budget, mode, passes, lag and errors, and its problem keys. Among
// several servers each carries a server label (its name); with one, none,
// as before there were several.
type perServer struct {
	commands, budget, mode, lastPass, lag, errors, problemKey *prometheus.Desc
}

// newPerServer returns the descriptors of perServer, with the server
// label first when labelled.
func newPerServer(labelled bool) perServer {
	labels := func(l ...string) []string {
		if labelled {
			return append([]string{"server"}, l...)
		}
		return l
	}
	return perServer{
		commands: prometheus.NewDesc("countertop_commands_per_second",
			"Commands a second countertop sent lately to the server.", labels(), nil),
		budget: prometheus.NewDesc("countertop_command_budget",
			"countertop's budget of commands a second for the server (--max-commands); 0: no limit.", labels(), nil),
		mode: prometheus.NewDesc("countertop_watch_mode",
			"1 for the watch mode in force on the server (events, tracking, polling, reconnecting...).", labels("mode"), nil),
		lastPass: prometheus.NewDesc("countertop_last_pass_timestamp_seconds",
			"When the last complete pass over the server's keys ended.", labels(), nil),
		lag: prometheus.NewDesc("countertop_feed_lag_seconds",
			"How far behind the server the changes followed by events or tracking are (0 while it keeps up).", labels(), nil),
		errors: prometheus.NewDesc("countertop_errors_total",
			"Times the server's feed entered an error: disconnected, feed (reads failing), unanswered (a command hanging), stopped.",
			labels("kind"), nil),
		problemKey: prometheus.NewDesc("countertop_problem_key",
			"1 for each of the --metrics-keys most severe problem keys (key escaped as snapshot JSON does).",
			labels("rule", "key", "status"), nil),
	}
}

// The per-server descriptors with one server, and among several.
var (
	oneServer     = newPerServer(false)
	severalServer = newPerServer(true)
)

// errorKinds are the kinds countertop_errors_total always has, 0 until
// they happen, so that increase() sees their first.
var errorKinds = []string{"disconnected", "feed", "unanswered", "stopped"}

// Describe sends the descriptors of the metrics Collect sends.
func (w *Watcher) Describe(ch chan<- *prometheus.Desc) {
	p := w.perServer()
	for _, d := range []*prometheus.Desc{descKeys, descFill, descFirstSeen, p.commands, p.budget, p.mode,
		p.lastPass, p.lag, p.errors, descLive, descShared, descBuild, p.problemKey} {
		ch <- d
	}
}

// perServer is the Watcher's per-server descriptors.
func (w *Watcher) perServer() *perServer {
	if w.several() {
		return &severalServer
	}
	return &oneServer
}

// group is a rule and status, the labels of
// countertop_problem_first_seen_timestamp_seconds.
type group struct {
	rule   int16
	status model.Status
}

// summary is what a scrape reads under the lock: the Store's tally, the
// first-seen times of the problems, the feed's state.
type summary struct {
	rules    *model.Rules
	tally    model.Tally
	first    map[group]time.Time
	problems []seen // every problem key with --metrics-keys, else none
	feeds    []feed // each server's, copied
	shared   []sharedIn
}

// sharedIn is a shard group's name and how many keys two or more of its
// servers hold.
type sharedIn struct {
	group string
	keys  int
}

// summary copies what Collect sends, under the lock: the counts the Store
// keeps (a few per rule), the oldest first-seen of each rule and status,
// and the problem keys for --metrics-keys to choose from outside the
// lock: never a Counter per key, so that the feed's Apply waits little.
func (w *Watcher) summary() summary {
	w.mu.Lock()
	defer w.mu.Unlock()
	sum := summary{rules: w.store.Rules(), tally: w.store.Tally(), first: map[group]time.Time{}}
	for _, f := range w.feeds {
		c := *f
		c.errs = maps.Clone(f.errs)
		sum.feeds = append(sum.feeds, c)
	}
	for i := range w.problems {
		p := &w.problems[i]
		g := group{p.rule, p.status}
		if was, seen := sum.first[g]; !seen || p.since.Before(was) {
			sum.first[g] = p.since
		}
	}
	if w.opts.MetricsKeys > 0 {
		sum.problems = slices.Clone(w.problems)
	}
	for g, group := range w.store.Shards() {
		sum.shared = append(sum.shared, sharedIn{group.Name, w.store.SharedRowsIn(g)})
	}
	return sum
}

// severest returns the n most severe of problems, in order: a compare
// with the last of those found so far tells most keys apart.
func severest(problems []seen, n int) []seen {
	top := make([]seen, 0, n+1)
	for k := range problems {
		p := &problems[k]
		if len(top) == n && !severer(p, &top[n-1]) {
			continue
		}
		i := len(top)
		for i > 0 && severer(p, &top[i-1]) {
			i--
		}
		top = slices.Insert(top, i, *p)[:min(len(top)+1, n)]
	}
	return top
}

// severer orders countertop_problem_key's keys: the most severe first,
// then the longest-standing, then by name (and field), so that the same
// keys keep their series from one scrape to the next.
func severer(a, b *seen) bool {
	return cmp.Or(cmp.Compare(a.status, b.status), a.since.Compare(b.since), cmp.Compare(a.key, b.key),
		cmp.Compare(a.field, b.field), cmp.Compare(a.server, b.server)) < 0
}

// keyLabel is countertop_problem_key's key label of p: its key escaped
// as snapshot JSON does, and for a field's row " › " and its field, so
// that two fields of one hash are two series.
func keyLabel(p *seen) string {
	if p.field == "" {
		return model.JSONKey(p.key)
	}
	return model.JSONKey(p.key) + model.FieldMark + model.JSONKey(p.field)
}

// Collect reads the Store and the feed's state under the lock (summary),
// and sends the metrics once it is released.
func (w *Watcher) Collect(ch chan<- prometheus.Metric) {
	live, _ := w.Health()
	sum := w.summary()
	rules := sum.rules
	ruleLabel := func(i int16) string {
		if i < 0 {
			return "" // no rule covers the key: --limit and --window apply
		}
		return model.JSONKey(rules.At(int(i)).Pattern)
	}
	for g, n := range sum.tally.Keys {
		ch <- prometheus.MustNewConstMetric(descKeys, prometheus.GaugeValue, float64(n), ruleLabel(g.Rule), g.Layout.String(), g.Status.String())
	}
	for r, f := range sum.tally.Fill {
		ch <- prometheus.MustNewConstMetric(descFill, prometheus.GaugeValue, f, ruleLabel(r))
	}
	for g, t := range sum.first {
		ch <- prometheus.MustNewConstMetric(descFirstSeen, prometheus.GaugeValue, seconds(t), ruleLabel(g.rule), g.status.String())
	}
	p := w.perServer()
	for i := range sum.feeds {
		f := &sum.feeds[i]
		var server []string // the label among several
		if w.several() {
			server = []string{f.name}
		}
		ch <- prometheus.MustNewConstMetric(p.commands, prometheus.GaugeValue, f.health.Commands, server...)
		ch <- prometheus.MustNewConstMetric(p.budget, prometheus.GaugeValue, f.budget, server...)
		if f.heard {
			ch <- prometheus.MustNewConstMetric(p.mode, prometheus.GaugeValue, 1, append(server, modeOf(&f.state))...)
		}
		if !f.lastPass.IsZero() {
			ch <- prometheus.MustNewConstMetric(p.lastPass, prometheus.GaugeValue, seconds(f.lastPass), server...)
		}
		ch <- prometheus.MustNewConstMetric(p.lag, prometheus.GaugeValue, f.health.Behind.Seconds(), server...)
		for _, k := range errorKinds {
			ch <- prometheus.MustNewConstMetric(p.errors, prometheus.CounterValue, f.errs[k], append(server, k)...)
		}
	}
	ch <- prometheus.MustNewConstMetric(descLive, prometheus.GaugeValue, b2f(live))
	for _, s := range sum.shared {
		ch <- prometheus.MustNewConstMetric(descShared, prometheus.GaugeValue, float64(s.keys), s.group)
	}
	ch <- prometheus.MustNewConstMetric(descBuild, prometheus.GaugeValue, 1, w.opts.Version, w.opts.Commit)
	for _, k := range severest(sum.problems, w.opts.MetricsKeys) {
		labels := []string{ruleLabel(k.rule), keyLabel(&k), k.status.String()}
		if w.several() {
			labels = append([]string{k.server}, labels...)
		}
		ch <- prometheus.MustNewConstMetric(p.problemKey, prometheus.GaugeValue, 1, labels...)
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
