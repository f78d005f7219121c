package serve

import (
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/countertop/countertop/internal/report"
	"github.com/countertop/countertop/model"
)

// Handler returns the HTTP handler of /metrics, /healthz and /problems.
func (w *Watcher) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(w)
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /healthz", w.serveHealth)
	mux.HandleFunc("GET /problems", w.serveProblems)
	mux.HandleFunc("GET /{$}", func(rw http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(rw, "countertop serve: /metrics (Prometheus), /healthz (200 while live), /problems (JSON)")
	})
	return mux
}

// serveHealth answers 200 while the feed is live and fresh, 503 otherwise,
// with one sentence either way.
func (w *Watcher) serveHealth(rw http.ResponseWriter, _ *http.Request) {
	live, why := w.Health()
	rw.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if !live {
		rw.WriteHeader(http.StatusServiceUnavailable)
	}
	fmt.Fprintln(rw, model.SafeText(why))
}

// serveProblems writes the problem keys as `snapshot --format json` does.
// Only they are read under the lock (the Watcher keeps a list of them),
// and they are written once it is released.
func (w *Watcher) serveProblems(rw http.ResponseWriter, _ *http.Request) {
	w.mu.Lock()
	rules := w.store.Rules()
	counters := make([]model.Counter, 0, len(w.problems))
	for i := range w.problems {
		if c, ok := w.store.Get(w.problems[i].id); ok {
			counters = append(counters, c)
		}
	}
	w.mu.Unlock()
	problems := make([]*model.Counter, len(counters))
	for i := range counters {
		problems[i] = &counters[i]
	}
	snap := report.NewSnapshot("json", rules)
	snap.AddCounters(problems)
	rw.Header().Set("Content-Type", "application/json")
	if err := snap.Write(rw, time.Now()); err != nil {
		return // the client went away: nothing to tell it
	}
}
