package ui

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// benchKey is the name of the i-th key of a benchmark.
func benchKey(i int) string { return fmt.Sprintf("ratelimit:user:%07d", i) }

// benchModel is a 120x40 dashboard over n keys, with the last row selected.
func benchModel(n int) *Model {
	obs := make([]model.Observation, n)
	for i := range obs {
		obs[i] = str(benchKey(i), fmt.Sprint(i%150), int64(i%60_000))
	}
	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: obs})
	m, _ := send(New(Options{Store: store, Now: testNow}), tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = press(m, "G")
	return m
}

// benchServers is how many servers the dashboards of the several-server
// benchmarks watch: issue 33's ten, which the header sums up past four.
const benchServers = 10

// benchServersModel is a 120x40 dashboard over benchServers servers of
// perServer keys each, the same names on each (regions of one limiter),
// with the last row selected: a SERVER column, a header line a server and
// one that sums up the rest. Each server is watched in a mode and within a
// budget of its own.
func benchServersModel(perServer int) *Model {
	servers := make([]Server, benchServers)
	for i := range servers {
		servers[i] = Server{Name: fmt.Sprintf("eu-%d", i), Budget: float64(5000 * (1 + i%4)), Writer: newFakeWriter()}
	}
	store := model.NewStore(testRules())
	m, _ := send(New(Options{Store: store, Now: testNow, Servers: servers}), tea.WindowSizeMsg{Width: 120, Height: 40})
	modes := []model.WatchMode{model.WatchEvents, model.WatchTracking, model.WatchPoll}
	for i, s := range servers {
		obs := make([]model.Observation, perServer)
		for k := range obs {
			obs[k] = str(benchKey(k), fmt.Sprint((k+i)%150), int64(k%60_000))
		}
		m, _ = send(m, batchesMsg{batches: []model.Batch{{
			Server:   s.Name,
			Observed: obs,
			State:    &model.FeedState{Mode: modes[i%len(modes)], Phase: model.FeedWatching, Interval: time.Second, Connected: true, UpdatedAt: t0},
			Health:   &model.Health{At: t0, Commands: 1200},
		}}})
	}
	m, _ = press(m, "G")
	return m
}

// BenchmarkView draws a 120x40 frame: only the rows on screen are read, so
// the cost should not grow with the number of keys, nor much with the
// servers they are read on (the SERVER column and the header's lines).
func BenchmarkView(b *testing.B) {
	for _, n := range []int{1_000, 1_000_000} {
		b.Run(fmt.Sprint(n, "keys"), func(b *testing.B) {
			m := benchModel(n)
			b.ReportAllocs()
			for b.Loop() {
				_ = m.View()
			}
		})
	}
	b.Run(fmt.Sprint(benchServers, "servers-1000000rows"), func(b *testing.B) {
		m := benchServersModel(1_000_000 / benchServers)
		if screen := plain(m); m.store.Len() != 1_000_000 || !strings.Contains(screen, "7 more answering") || !strings.Contains(screen, "SERVER") {
			b.Fatalf("want a million rows, a SERVER column and the servers summed up past three:\n%s", screen)
		}
		b.ReportAllocs()
		for b.Loop() {
			_ = m.View()
		}
	})
}

// BenchmarkViewTrends is BenchmarkView with a sparkline in every row's
// TREND: each key read rising, once a span, over the last minute.
func BenchmarkViewTrends(b *testing.B) {
	const n = 1_000
	store := model.NewStore(testRules())
	for k := range model.TrendBuckets {
		obs := make([]model.Observation, n)
		for i := range obs {
			obs[i] = str(benchKey(i), fmt.Sprint(i%150+k*10), int64(60_000))
			obs[i].At = t0.Add(time.Duration(k-7) * model.TrendStep)
		}
		store.Apply(model.Batch{Observed: obs})
	}
	m, _ := send(New(Options{Store: store, Now: testNow}), tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = press(m, "G")
	if line := m.trendCell(&m.store.Rows(0, 1)[0], m.store.Rules().List[0], testNow()); line == "" {
		b.Fatal("no sparkline drawn")
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkBatchFrame is what a poll batch costs the dashboard at a million
// keys: new readings of 500 keys (values up, TTLs set again) applied to the
// Store, the selection followed, and the frame drawn, in each sort; then
// the same over a million rows of ten servers, each batch one server's.
func BenchmarkBatchFrame(b *testing.B) {
	const n = 1_000_000
	benchBatchFrames(b, "", benchModel(n), n, nil)
	servers := make([]string, benchServers)
	for i := range servers {
		servers[i] = fmt.Sprintf("eu-%d", i)
	}
	benchBatchFrames(b, fmt.Sprint(benchServers, "servers-"), benchServersModel(n/benchServers), n/benchServers, servers)
}

// benchBatchFrames runs BenchmarkBatchFrame's sorts on m, whose keys are
// the first n benchKeys, on each of servers (none: one server), a batch
// from each server in turn.
func benchBatchFrames(b *testing.B, prefix string, m *Model, n int, servers []string) {
	const batchSize = 500
	names := make([]string, n)
	for i := range names {
		names[i] = benchKey(i)
	}
	raws := make([]string, 150)
	for i := range raws {
		raws[i] = strconv.Itoa(i)
	}
	at := t0
	for _, sort := range []string{"key", "value", "ttl"} {
		b.Run(prefix+"by-"+sort, func(b *testing.B) {
			for m.store.Sort().String() != sort {
				m, _ = press(m, "s")
			}
			batch := model.Batch{Observed: make([]model.Observation, batchSize)}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				at = at.Add(time.Second)
				for j := range batch.Observed {
					k := (i*batchSize + j*7919) % n
					batch.Observed[j] = str(names[k], raws[(k+i)%len(raws)], int64(k%60_000))
					batch.Observed[j].At = at
				}
				if len(servers) > 0 {
					batch.Server = servers[i%len(servers)]
				}
				m, _ = send(m, batchesMsg{batches: []model.Batch{batch}})
				_ = m.View()
				i++
			}
		})
	}
}
