package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// TestFramesWhileFiltering: a filter over many keys is applied by the Store
// a step per read, so the dashboard draws again at frame rate until it is
// applied, and then stops: an idle dashboard is not redrawn at frame rate.
func TestFramesWhileFiltering(t *testing.T) {
	const n = 400_000 // several of the Store's steps
	obs := make([]model.Observation, n)
	for i := range obs {
		obs[i] = str(fmt.Sprintf("ratelimit:user:%d", i), "1", 60_000)
	}
	m := newModel(t, nil, 120, 40, obs...)
	if _, cmd := send(m, frameMsg{}); cmd != nil {
		t.Fatal("with no filter being applied, a frame asked for another")
	}

	m, _ = press(m, "/")
	m, cmd := press(m, "7")
	if !m.store.Filtering() {
		t.Fatalf("the filter was applied within the keystroke: the test needs more than %d keys", n)
	}
	awaitFrame(t, cmd)
	m, _ = press(m, "77") // a frame is on its way: these ask for none of their own

	frames := 0
	for {
		m, cmd = send(m, frameMsg{})
		if cmd == nil {
			break
		}
		if !m.store.Filtering() {
			t.Fatal("a frame asked for another after the filter was applied")
		}
		awaitFrame(t, cmd)
		if frames++; frames > 100 {
			t.Fatal("the filter was still being applied after 100 frames")
		}
	}
	if m.store.Filtering() {
		t.Fatal("the frames stopped before the filter was applied")
	}
	for _, c := range m.store.Rows(0, 40) {
		if !strings.Contains(c.Key, "777") {
			t.Fatalf("row %q is shown under the filter 777", c.Key)
		}
	}
	if _, cmd := send(m, frameMsg{}); cmd != nil {
		t.Fatal("a late frame asked for another once the filter was applied")
	}
}

// TestFramesWhileSorting: a new sort of many keys is worked out a step per
// read as well: the rows stay in the sort before it, and the dashboard
// draws again at frame rate until the new one is shown, then stops.
func TestFramesWhileSorting(t *testing.T) {
	const n = 400_000 // several of the Store's steps
	obs := make([]model.Observation, n)
	for i := range obs {
		obs[i] = str(fmt.Sprintf("ratelimit:user:%d", i), fmt.Sprint(i%1000), 60_000)
	}
	m := newModel(t, nil, 120, 40, obs...)
	first := m.store.Rows(0, 1)[0].Key

	m, cmd := press(m, "s") // key to value
	if !m.store.Sorting() {
		t.Fatalf("the sort was worked out within the key press: the test needs more than %d keys", n)
	}
	// The read that ends the sort shows the new one: only a read that left
	// it going must show the old order.
	if got := m.store.Rows(0, 1)[0].Key; m.store.Sorting() && got != first {
		t.Errorf("while sorting, the first row is %q, want %q as sorted by key", got, first)
	}
	frames := 0
	for awaitFrame(t, cmd); ; awaitFrame(t, cmd) {
		if m, cmd = send(m, frameMsg{}); cmd == nil {
			break
		}
		if frames++; frames > 200 {
			t.Fatal("the sort was still being worked out after 200 frames")
		}
	}
	if m.store.Sorting() {
		t.Fatal("the frames stopped before the sort was shown")
	}
	if frames < 2 {
		t.Errorf("the sort took %d frames: it was not spread over them", frames)
	}
	if c := m.store.Rows(0, 1)[0]; !strings.HasSuffix(c.Key, "999") {
		t.Errorf("sorted by value, the first row is %s, want one whose value is 999, the highest", c.Key)
	}
}

// awaitFrame fails the test unless cmd, or a command of its batch, brings
// a frameMsg.
func awaitFrame(t *testing.T, cmd tea.Cmd) {
	t.Helper()
	if cmd == nil || !findFrame(cmd, time.Now().Add(5*time.Second)) {
		t.Fatal("the dashboard did not ask for a frame while the filter was being applied")
	}
}

// findFrame runs cmd and each command of its batches in its own goroutine
// (the prompt's cursor blinks for ever) and reports whether one brings a
// frameMsg before deadline.
func findFrame(cmd tea.Cmd, deadline time.Time) bool {
	found := make(chan bool, 64)
	var start func(c tea.Cmd)
	start = func(c tea.Cmd) {
		go func() {
			switch msg := c().(type) {
			case tea.BatchMsg:
				for _, c := range msg {
					if c != nil {
						start(c)
					}
				}
			case frameMsg:
				found <- true
			}
		}()
	}
	start(cmd)
	select {
	case <-found:
		return true
	case <-time.After(time.Until(deadline)):
		return false
	}
}
