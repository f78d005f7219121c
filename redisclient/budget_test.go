package redisclient_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
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
	allowed := float64(budget) * 1.02 // what the sampling's clock may add
	t.Logf("%.0f commands/s over %v, budget %d", rate, span.Round(time.Millisecond), budget)
	if rate > allowed {
		t.Errorf("countertop sent %.0f commands/s over %v; the budget is %d", rate, span, budget)
	}
}

// On a keyspace larger than one interval can read under the budget, the
// poller sends no more than the budget, uses most of it, re-reads the keys
// on screen every interval and the others in turn.
func TestPollHoldsToTheBudget(t *testing.T) {
	t.Parallel()
	const keys, budget, interval = 1000, 1000, 300 * time.Millisecond // an interval reads about 150 keys
	s := redistest.Start(t)
	msetNumbered(t, s, keys, "rl:%04d")
	c := connectURL(t, redisclient.Options{URL: s.URL(), MaxCommands: budget})
	var onScreen []string
	for i := range 20 {
		onScreen = append(onScreen, fmt.Sprintf("rl:%04d", 500+i))
	}
	shown := make(chan []string, 1)
	redisclient.OfferShown(shown, onScreen)
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"rl:*"}, Interval: interval, Shown: shown})
	f.waitFor("the first pass", func() bool { return f.passes > 0 && !f.state.Scanning && f.store.Len() == keys })

	// From here, every read of a key on screen, and every key read.
	screen := map[string][]time.Time{}
	offScreen := map[string]bool{}
	for _, k := range onScreen {
		screen[k] = nil
	}
	f.onBatch = func(b model.Batch) {
		for _, o := range b.Observed {
			if _, ok := screen[o.Key]; ok {
				screen[o.Key] = append(screen[o.Key], o.At)
			} else {
				offScreen[o.Key] = true
			}
		}
	}
	m := meterOf(t, s)
	f.waitFor("four seconds", func() bool { return time.Since(m.start) > 4*time.Second })
	rate, span := m.perSecond()
	withinBudget(t, rate, span, budget)
	if rate < 0.7*budget {
		t.Errorf("countertop sent %.0f commands/s with more keys to read than the budget of %d allows: the budget is not used", rate, budget)
	}
	// A key on screen left to wait its turn with the rest would go about
	// seven intervals unread (1,000 keys at 150 an interval); three allow
	// for a loaded machine's scheduling without hiding that.
	for k, reads := range screen {
		for i := 1; i < len(reads); i++ {
			if gap := reads[i].Sub(reads[i-1]); gap > 3*interval {
				t.Errorf("%s, on screen, was read %v after its last read; want every interval (%v)", k, gap, interval)
			}
		}
		if len(reads) < int(span/interval)/2 {
			t.Errorf("%s, on screen, was read %d times in %v; want about every %v", k, len(reads), span, interval)
		}
	}
	if len(offScreen) != keys-len(onScreen) {
		t.Errorf("%d of the %d keys off screen were read in %v; want each in turn", len(offScreen), keys-len(onScreen), span)
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
