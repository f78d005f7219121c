package ui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// TestFreshnessOfWhatEventsDoNotTell: under a live feed, a row the feed
// vouches for only until a time (a type whose events the server does not
// send, a log whose hits leave its window) keeps the header from saying
// "live" once that time has passed, and says how long ago it was known
// true; the detail screen says why.
func TestFreshnessOfWhatEventsDoNotTell(t *testing.T) {
	events := &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7000", Connected: true}
	row := func(key string, at, until time.Duration) model.Batch {
		o := str(key, "1", 60_000)
		o.At = t0.Add(at)
		if until >= 0 {
			o.KnownUntil = t0.Add(until)
		}
		return model.Batch{Observed: []model.Observation{o}}
	}
	tests := []struct {
		name   string
		batch  model.Batch
		after  time.Duration // from t0, when the header is read
		header string
		detail string // the detail screen's "read" line, after "read      "
	}{
		{"vouched for while live", row("ratelimit:a", 0, -1), time.Minute, "live",
			"1m00s ago (unchanged since, as events tell)"},
		{"a log whose first hit leaves later", row("ratelimit:a", 0, 90*time.Second), time.Minute, "live",
			"1m00s ago (unchanged since, as events tell)"},
		{"a log whose first hit has left", row("ratelimit:a", 0, 50*time.Second), time.Minute, "read 10s ago",
			"1m00s ago (hits have left its window since: read again within the interval)"},
		{"a type the server sends no events of", row("ratelimit:a", 59500*time.Millisecond, 59500*time.Millisecond), time.Minute, "read 0.5s ago",
			"0.5s ago (the server sends no events of its type: read every interval)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: t0}
			m := New(Options{Store: model.NewStore(testRules()), Now: c.now})
			m, _ = send(m, tea.WindowSizeMsg{Width: 120, Height: 30})
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: events}, tt.batch}})
			c.t = t0.Add(tt.after)
			m, _ = send(m, tickMsg{m.tickGen})
			if got := ansi.Strip(m.age()); got != tt.header {
				t.Errorf("header's age = %q, want %q", got, tt.header)
			}
			m, _ = press(m, "<enter>")
			if want := "read      " + tt.detail; !strings.Contains(plain(m), want) {
				t.Errorf("the detail screen does not say %q:\n%s", want, plain(m))
			}
		})
	}
}
