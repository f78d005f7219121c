package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// When the feed stops for good, its reason is on screen in full, however
// long, not cut to the header's width.
func TestStoppedFeedShowsItsReasonInFull(t *testing.T) {
	m := newModel(t, nil, 80, 24)
	reason := `--mode events cannot work: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events, or CONFIG SET notify-keyspace-events 'K$gxe', or use --mode auto`
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{Mode: model.WatchEvents, Phase: model.FeedStopped, LastError: reason}}}, closed: true})

	screen := plain(m)
	if !strings.Contains(screen, "feed stopped") {
		t.Errorf("the header does not say the feed stopped:\n%s", screen)
	}
	flat := strings.Join(strings.Fields(screen), " ")
	if !strings.Contains(flat, strings.Join(strings.Fields("Stopped: "+reason+". Press q to quit."), " ")) {
		t.Errorf("the whole reason is not on screen:\n%s", screen)
	}
	for _, l := range strings.Split(screen, "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line wider than the screen (%d): %q", w, l)
		}
	}
}

// Why countertop polls, and the command that would give live updates, is
// on screen whole at 120 columns and never pushes the table off it.
func TestPollingNoteIsShownWhole(t *testing.T) {
	note := `polling: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`
	for _, size := range [][2]int{{120, 40}, {80, 24}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			m := newModel(t, nil, size[0], size[1], fixture()...)
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, Note: note, UpdatedAt: t0,
			}}}})
			screen := plain(m)
			flat := strings.Join(strings.Fields(screen), " ")
			if size[0] == 120 && !strings.Contains(flat, note) {
				t.Errorf("at 120 columns the note is not whole:\n%s", screen)
			}
			if !strings.Contains(screen, "ratelimit:api:42") {
				t.Errorf("at %dx%d the note pushed the rows off the screen:\n%s", size[0], size[1], screen)
			}
			if n := strings.Count(screen, "\n") + 1; n > size[1] {
				t.Errorf("at %dx%d the frame has %d lines", size[0], size[1], n)
			}
		})
	}
}

// A read-only dashboard does not offer the write keys in its help.
func TestReadOnlyHelpOffersNoWrites(t *testing.T) {
	m := New(Options{Store: model.NewStore(testRules()), ReadOnly: true, Now: testNow})
	m, _ = send(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	if s := plain(m); strings.Contains(s, "incr") || strings.Contains(s, "delete") {
		t.Errorf("the help line offers writes on a read-only dashboard:\n%s", s)
	}
	m, _ = press(m, "?")
	if s := plain(m); strings.Contains(s, "repair") || strings.Contains(s, "delete") || !strings.Contains(s, "filter") {
		t.Errorf("the full help offers writes on a read-only dashboard:\n%s", s)
	}
}
