package ui

import (
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
)

// When the feed stops for good, its reason is on screen in full, however
// long, not cut to the header's width.
func TestStoppedFeedShowsItsReasonInFull(t *testing.T) {
	m := newModel(t, nil, 80, 24)
	reason := `--mode events cannot work: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events, or CONFIG SET notify-keyspace-events K$gxe, or use --mode auto`
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{Mode: "stopped", LastError: reason}}}, closed: true})

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
