package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// TestRowsAppearWhileScanning feeds the dashboard a first discovery pass
// the way the poller sends one over a large keyspace, a page of keys at a
// time: rows show from the first page on, the header says how far the
// pass has got, and the progress goes once the pass is over.
func TestRowsAppearWhileScanning(t *testing.T) {
	m := newModel(t, nil, 120, 40)
	state := func(scanning bool, seen, matched int64) *model.FeedState {
		return &model.FeedState{Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Connected: true, Scanning: scanning, Seen: seen, Matched: matched}
	}
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: state(true, 0, 0)}}})
	if screen := plain(m); !strings.Contains(screen, "Looking for keys…") || !strings.Contains(screen, "scanning… 0 keys seen, 0 matched") {
		t.Fatalf("before the first page:\n%s", screen)
	}

	const pages, pageSize = 100, 500
	for p := range pages {
		page := make([]model.Observation, pageSize)
		for i := range page {
			page[i] = str(fmt.Sprintf("ratelimit:user:%07d", p*pageSize+i), "1", 60_000)
		}
		seen, matched := int64(p+1)*3500, int64(p+1)*pageSize
		m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: page, State: state(true, seen, matched)}}})
		screen := plain(m)
		progress := fmt.Sprintf("%d keys · 0 stuck · 0 no-expiry · scanning… %s keys seen, %s matched",
			matched, formatCount(seen), formatCount(matched))
		if !strings.Contains(screen, progress) || !strings.Contains(screen, "ratelimit:user:0000000") {
			t.Fatalf("after page %d, want the first row and %q:\n%s", p+1, progress, screen)
		}
	}
	if !strings.Contains(plain(m), "scanning… 350k keys seen, 50k matched") {
		t.Errorf("progress in thousands:\n%s", plain(m))
	}

	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: state(false, 350_000, 50_000)}}})
	if screen := plain(m); strings.Contains(screen, "scanning") || !strings.Contains(screen, "50000 keys") {
		t.Errorf("after the pass:\n%s", screen)
	}
}

// While rows arrive (SCAN finds keys in no order), the cursor stays on the
// first row, where the view is, until the user picks one; from then on it
// stays on that key.
func TestCursorStaysOnTheFirstRowUntilOneIsPicked(t *testing.T) {
	m := newModel(t, newFakeWriter(), 120, 20, str("ratelimit:m", "1", 5000))
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{str("ratelimit:a", "1", 5000), str("ratelimit:z", "1", 5000)}}}})
	if m.selected.id != "ratelimit:a" || m.cursor != 0 {
		t.Fatalf("selected %q at row %d, want the first row, ratelimit:a", m.selected.id, m.cursor)
	}
	m, _ = press(m, "j") // picks ratelimit:m
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{str("ratelimit:0", "1", 5000)}}}})
	if m.selected.id != "ratelimit:m" {
		t.Fatalf("selected %q, want the picked ratelimit:m", m.selected.id)
	}
}
