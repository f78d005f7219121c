package serve

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/countertop/countertop/model"
)

// scraped is what a scrape of w says, by series (the name and its labels,
// sorted), of the metrics about keys.
func scraped(t *testing.T, w *Watcher) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	reg.MustRegister(w)
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		switch f.GetName() {
		case "countertop_keys", "countertop_fill_ratio_max", "countertop_problem_first_seen_timestamp_seconds", "countertop_problem_key":
		default:
			continue
		}
		for _, m := range f.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, l.GetName()+"="+strconv.Quote(l.GetValue()))
			}
			out[f.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	return out
}

// recounted is the same series counted from scratch, from a Counter per
// key, as a scrape counted them before the Store kept a tally.
func recounted(w *Watcher) map[string]float64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	rules := w.store.Rules()
	label := func(i int16) string {
		if i < 0 {
			return `""`
		}
		return strconv.Quote(model.JSONKey(rules.At(int(i)).Pattern))
	}
	out := map[string]float64{}
	fill := map[int16]float64{}
	first := map[string]time.Time{}
	var problems []seen
	for _, c := range w.store.Rows(0, w.store.Len()) {
		out[fmt.Sprintf("countertop_keys{layout=%q,rule=%s,status=%q}", c.Layout, label(c.Rule), c.Status)]++
		if f, ok := c.Percent(rules.At(int(c.Rule)).Limit); ok {
			if was, seen := fill[c.Rule]; !seen || f > was {
				fill[c.Rule] = f
			}
		}
		i, ok := w.problemAt[c.ID()]
		if !c.Status.Problem() || !ok {
			continue
		}
		s := w.problems[i]
		g := fmt.Sprintf("countertop_problem_first_seen_timestamp_seconds{rule=%s,status=%q}", label(c.Rule), c.Status)
		if was, seen := first[g]; !seen || s.since.Before(was) {
			first[g] = s.since
		}
		problems = append(problems, seen{id: c.ID(), key: c.Key, server: c.Server, rule: c.Rule, status: c.Status, since: s.since})
	}
	for r, f := range fill {
		out[fmt.Sprintf("countertop_fill_ratio_max{rule=%s}", label(r))] = f
	}
	for g, t := range first {
		out[g] = seconds(t)
	}
	slices.SortFunc(problems, func(a, b seen) int {
		return cmp.Or(cmp.Compare(a.status, b.status), a.since.Compare(b.since), cmp.Compare(a.key, b.key))
	})
	for _, p := range problems[:min(len(problems), w.opts.MetricsKeys)] {
		out[fmt.Sprintf("countertop_problem_key{key=%q,rule=%s,status=%q}", model.JSONKey(p.key), label(p.rule), p.status)] = 1
	}
	return out
}

// listed is the keys and statuses /problems lists.
func listed(t *testing.T, w *Watcher) []string {
	t.Helper()
	code, body := get(t, w.Handler(), "/problems")
	var doc struct {
		Counters []struct{ Key, Status string }
	}
	if err := json.Unmarshal([]byte(body), &doc); code != 200 || err != nil {
		t.Fatalf("/problems: %d %v\n%s", code, err, body)
	}
	var out []string
	for _, c := range doc.Counters {
		out = append(out, c.Key+" "+c.Status)
	}
	slices.Sort(out)
	return out
}

// problemKeys is the same from a walk of every key.
func problemKeys(w *Watcher) []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []string
	for _, c := range w.store.Rows(0, w.store.Len()) {
		if c.Status.Problem() {
			out = append(out, model.JSONKey(c.Key)+" "+c.Status.String())
		}
	}
	slices.Sort(out)
	return out
}

// A scrape says what counting every key from scratch says, after any
// sequence of readings and removals: keys stuck, repaired, gone and back,
// readings older than the one held, several problems first seen at once;
// and /problems lists the problem keys a walk of every key finds.
func TestScrapeIsARecount(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 2))
	w := NewWatcher(testRules(), Options{MetricsKeys: 3})
	t0 := time.Unix(1_700_000_000, 0)
	w.Apply(model.Batch{State: live(t0)}, t0)
	names := []string{"rl:a", "rl:b", "rl:c", "rl:d", "rl:e", "x:f", "x:g", "x:\xff"}
	for step := range 1500 {
		now := t0.Add(time.Duration(step) * time.Second)
		var b model.Batch
		for range 1 + rng.IntN(4) {
			key := names[rng.IntN(len(names))]
			if rng.IntN(10) == 0 {
				b.Removed = append(b.Removed, key)
				continue
			}
			raw := strconv.Itoa(rng.IntN(130))
			if rng.IntN(4) == 0 {
				raw = strconv.FormatFloat(rng.Float64()*130, 'f', 2, 64)
			}
			pttl := [...]int64{30_000, 30_000, model.PTTLNoExpiry, model.PTTLMissing}[rng.IntN(4)]
			b.Observed = append(b.Observed, obs(key, raw, pttl, now.Add(-time.Duration(rng.IntN(2))*time.Second)))
		}
		w.Apply(b, now)
		if step%5 != 0 {
			continue
		}
		if got, want := scraped(t, w), recounted(w); !maps.Equal(got, want) {
			t.Fatalf("step %d:\nscrape  %v\nrecount %v", step, got, want)
		}
		if got, want := listed(t, w), problemKeys(w); !slices.Equal(got, want) {
			t.Fatalf("step %d: /problems lists %q, a walk of the keys finds %q", step, got, want)
		}
	}
}
