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

// listed is the keys (" › " and the field, for a field's row) and
// statuses /problems lists.
func listed(t *testing.T, w *Watcher) []string {
	t.Helper()
	code, body := get(t, w.Handler(), "/problems")
	var doc struct {
		Counters []struct {
			Key, Status string
			Field       *string
		}
	}
	if err := json.Unmarshal([]byte(body), &doc); code != 200 || err != nil {
		t.Fatalf("/problems: %d %v\n%s", code, err, body)
	}
	var out []string
	for _, c := range doc.Counters {
		if c.Field != nil {
			c.Key += model.FieldMark + *c.Field
		}
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
			key := model.JSONKey(c.Key)
			if c.FieldRow {
				key += model.FieldMark + model.JSONKey(c.Field)
			}
			out = append(out, key+" "+c.Status.String())
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

// hashObs is a reading of a hash whose fields carry TTLs, a field a
// "name=value/pttl".
func hashObs(key string, at time.Time, fields ...string) model.Observation {
	o := model.Observation{Key: key, Type: "hash", PTTL: model.PTTLNoExpiry, At: at, FieldTTLs: true, Len: int64(len(fields))}
	for _, f := range fields {
		name, rest, _ := strings.Cut(f, "=")
		value, pttl, _ := strings.Cut(rest, "/")
		ms, _ := strconv.ParseInt(pttl, 10, 64)
		o.Fields = append(o.Fields, model.Field{Name: name, Value: value, PTTL: ms})
	}
	return o
}

// A hash whose fields carry TTLs is a row a field: each field without a
// TTL is a problem of its own in /problems and in countertop_problem_key,
// and leaves them when it expires, when the hash is gone, and when the
// hash is read whole again; /problems always lists what a walk of every
// row finds.
func TestProblemsOfHashFieldRows(t *testing.T) {
	w := NewWatcher(testRules(), Options{MetricsKeys: 5})
	t0 := time.Unix(1_700_000_000, 0)
	step := func(what string, b model.Batch, want ...string) {
		t.Helper()
		w.Apply(b, t0)
		got := listed(t, w)
		if !slices.Equal(got, want) || !slices.Equal(got, problemKeys(w)) {
			t.Errorf("%s: /problems lists %q, want %q (a walk of the rows: %q)", what, got, want, problemKeys(w))
		}
		var series []string
		for s := range scraped(t, w) {
			if strings.HasPrefix(s, "countertop_problem_key{") {
				series = append(series, s)
			}
		}
		slices.Sort(series)
		var wantSeries []string
		for _, p := range want {
			i := strings.LastIndexByte(p, ' ')
			key, status := p[:i], p[i+1:]
			wantSeries = append(wantSeries, fmt.Sprintf("countertop_problem_key{key=%q,rule=\"rl:*\",status=%q}", key, status))
		}
		if !slices.Equal(series, wantSeries) {
			t.Errorf("%s: series %q, want %q", what, series, wantSeries)
		}
	}
	step("two fields without a TTL", model.Batch{State: live(t0), Observed: []model.Observation{
		hashObs("rl:h", t0, "api=3/30000", "login=4/-1", "search=5/-1")}},
		"rl:h › login no-expiry", "rl:h › search no-expiry")
	step("login expired", model.Batch{Observed: []model.Observation{hashObs("rl:h", t0.Add(time.Second), "api=3/30000", "search=5/-1")}},
		"rl:h › search no-expiry")
	step("the hash deleted", model.Batch{Removed: []string{"rl:h"}})
	step("back", model.Batch{Observed: []model.Observation{hashObs("rl:h", t0.Add(2*time.Second), "login=4/-1")}},
		"rl:h › login no-expiry")
	whole := hashObs("rl:h", t0.Add(3*time.Second), "login=4/-1")
	whole.FieldTTLs = false
	step("read whole: the hash without a TTL", model.Batch{Observed: []model.Observation{whole}}, "rl:h no-expiry")
}
