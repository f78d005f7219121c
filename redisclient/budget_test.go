package redisclient_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

// commandsProcessed returns how many commands s has run, from INFO stats:
// what the server counts, whoever sent them. The INFO that asks counts in
// the next answer, not its own.
func commandsProcessed(t *testing.T, s *redistest.Server) int64 {
	t.Helper()
	info := s.Do(t, "INFO", "stats").(string)
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("INFO stats has no total_commands_processed: %q", info)
	return 0
}

// rateMeter measures the commands a second a server runs over a span.
type rateMeter struct {
	t     *testing.T
	s     *redistest.Server
	n     int64
	start time.Time
}

func meterOf(t *testing.T, s *redistest.Server) *rateMeter {
	return &rateMeter{t: t, s: s, n: commandsProcessed(t, s), start: time.Now()}
}

// perSecond returns the commands a second since the meter began, leaving
// out its own INFO, and the span measured.
func (m *rateMeter) perSecond() (float64, time.Duration) {
	n := commandsProcessed(m.t, m.s) - m.n - 1
	span := time.Since(m.start)
	return float64(n) / span.Seconds(), span
}

// withinBudget fails the test unless rate, measured over span, is at most
// budget: the bucket may give a tenth of a second's worth at once on top,
// after a quiet spell, and the measure spans the INFOs' round trips.
func withinBudget(t *testing.T, rate float64, span time.Duration, budget int) {
	t.Helper()
	allowed := float64(budget) * (1 + 0.1/span.Seconds()) * 1.02
	t.Logf("%.0f commands/s over %v, budget %d", rate, span.Round(time.Millisecond), budget)
	if rate > allowed {
		t.Errorf("countertop sent %.0f commands/s over %v; the budget is %d (%.0f with the bucket's burst)", rate, span, budget, allowed)
	}
}

// A snapshot told a budget keeps to it too, and still reads every key.
func TestSnapshotHoldsToTheBudget(t *testing.T) {
	t.Parallel()
	const keys, budget = 1500, 1000
	s := redistest.Start(t)
	msetNumbered(t, s, keys, "rl:%04d")
	c := connectURL(t, redisclient.Options{URL: s.URL(), MaxCommands: budget})
	m := meterOf(t, s)
	obs, err := snapshot(context.Background(), c, []string{"rl:*"}, 100)
	if err != nil {
		t.Fatal(err)
	}
	rate, span := m.perSecond()
	withinBudget(t, rate, span, budget)
	read := map[string]bool{} // a snapshot may bring a key twice
	for _, o := range obs {
		read[o.Key] = true
	}
	if len(read) != keys {
		t.Errorf("the snapshot read %d keys, want %d", len(read), keys)
	}
}
