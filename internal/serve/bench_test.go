package serve

import (
	"fmt"
	"io"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// BenchmarkScrape is one GET /metrics over a Store of n keys, a tenth of
// them stuck: what a Prometheus scrape costs countertop (Redis: nothing).
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
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
			h := w.Handler()
			b.ResetTimer()
			for b.Loop() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
				io.Copy(io.Discard, rec.Body)
			}
		})
	}
}
