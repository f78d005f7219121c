package serve

import (
	"fmt"
	"io"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// seeded is a Watcher holding n counters, a tenth of them stuck, with
// --metrics-keys 20, and the batch that filled it.
func seeded(n int) (*Watcher, model.Batch) {
	w := NewWatcher(testRules(), Options{MetricsKeys: 20})
	t0 := time.Now()
	batch := model.Batch{State: live(t0), Observed: make([]model.Observation, n)}
	for i := range batch.Observed {
		pttl := int64(30_000)
		if i%10 == 0 {
			pttl = model.PTTLNoExpiry
		}
		batch.Observed[i] = obs(fmt.Sprintf("rl:%d", i), fmt.Sprint(i%20), pttl, t0)
	}
	w.Apply(batch, t0)
	return w, batch
}

// BenchmarkScrape is one GET /metrics over a Store of n keys, a tenth of
// them stuck: what a Prometheus scrape costs countertop (Redis: nothing).
// Meanwhile the feed applies one reading every quarter of a millisecond,
// as a busy feed would; apply-wait-ms is the longest of them during a
// scrape (the median over the scrapes that saw one, as a busy machine
// stalls a goroutine now and then): about how long a scrape keeps the
// feed waiting for the lock.
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			w, batch := seeded(n)
			h := w.Handler()
			type span struct{ start, end time.Time }
			var scrapes, applies []span
			stop, done := make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				tick := time.NewTicker(time.Millisecond / 4)
				defer tick.Stop()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					case <-tick.C:
					}
					o := batch.Observed[i*7919%n] // the same reading again, later: the Store keeps its shape
					o.At = time.Now()
					w.Apply(model.Batch{Observed: []model.Observation{o}}, o.At)
					applies = append(applies, span{o.At, time.Now()})
				}
			}()
			for b.Loop() {
				start := time.Now()
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				io.Copy(io.Discard, rec.Body)
				scrapes = append(scrapes, span{start, time.Now()})
			}
			close(stop)
			<-done
			var waits []time.Duration
			for _, s := range scrapes {
				longest := time.Duration(-1)
				for _, a := range applies {
					if !a.start.Before(s.start) && a.start.Before(s.end) {
						longest = max(longest, a.end.Sub(a.start))
					}
				}
				if longest >= 0 {
					waits = append(waits, longest)
				}
			}
			if len(waits) > 0 {
				slices.Sort(waits)
				b.ReportMetric(float64(waits[len(waits)/2])/float64(time.Millisecond), "apply-wait-ms")
			}
		})
	}
}

// BenchmarkSummary is the part of a scrape that holds the lock, over the
// Store of BenchmarkScrape.
func BenchmarkSummary(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			w, _ := seeded(n)
			for b.Loop() {
				w.summary()
			}
		})
	}
}
