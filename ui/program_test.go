package ui

import (
	"bytes"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/countertop/countertop/model"
)

// TestProgram runs the whole Bubble Tea loop: batches arrive on the feed, a
// key press fires a write through the Writer, q quits.
func TestProgram(t *testing.T) {
	feed := make(chan model.Batch)
	defer close(feed)
	now := time.Now()
	obs := []model.Observation{
		{Key: "ratelimit:api:42", Type: "string", Raw: "17", PTTL: 43_000, At: now},
		{Key: "ratelimit:legacy", Type: "string", Raw: "100", PTTL: model.PTTLNoExpiry, At: now},
	}
	w := newFakeWriter().seed(obs...)
	w.now = time.Now
	m := New(Options{Store: model.NewStore(testRules()), Feed: feed, Writer: w, Title: "countertop test"})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 20))

	feed <- model.Batch{Observed: obs, State: &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedWatching, Addr: "127.0.0.1:7001", Connected: true}}
	waitFor(t, tm, "ratelimit:legacy")

	tm.Send(tea.KeyPressMsg{Code: '+', Text: "+"})
	waitFor(t, tm, "-> 18")
	tm.Send(tea.KeyPressMsg{Code: 'q', Text: "q"})

	final := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if c, _ := final.store.Get("ratelimit:api:42"); c.Value.Int != 18 {
		t.Fatalf("value after + is %v, want 18", c.Value)
	}
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:api:42 1 1m0s"}) {
		t.Fatalf("calls %v", got)
	}
}

func waitFor(t *testing.T, tm *teatest.TestModel, text string) {
	t.Helper()
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(text)) },
		teatest.WithDuration(5*time.Second), teatest.WithCheckInterval(20*time.Millisecond))
}
