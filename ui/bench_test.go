package ui

import (
	"fmt"
	"strconv"
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

// BenchmarkView draws a 120x40 frame: only the rows on screen are read, so
// the cost should not grow with the number of keys.
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
// Store, the selection followed, and the frame drawn, in each sort.
func BenchmarkBatchFrame(b *testing.B) {
	const n, batchSize = 1_000_000, 500
	m := benchModel(n)
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
		b.Run("by-"+sort, func(b *testing.B) {
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
				m, _ = send(m, batchesMsg{batches: []model.Batch{batch}})
				_ = m.View()
				i++
			}
		})
	}
}
