package model

import (
	"testing"
	"time"
)

// TestWatchModeTable fails on a mode without a complete entry: a constant
// added without one would be named "", refused by the config, and shown
// as nothing in the header.
func TestWatchModeTable(t *testing.T) {
	seen := map[string]WatchMode{}
	for m := range NumWatchModes {
		s := m.Spec()
		if s.Name == "" || s.Word == "" || s.About == "" {
			t.Errorf("WatchMode(%d) %q has no complete entry in watchModes: %+v", m, s.Name, s)
		}
		if s.Push && s.StaleIntervals > 0 {
			t.Errorf("%s: a push mode vouches for rows between reads, and sets no age at which they are stale", s.Name)
		}
		if other, dup := seen[s.Name]; dup {
			t.Errorf("WatchMode(%d) and WatchMode(%d) are both named %q", other, m, s.Name)
		}
		seen[s.Name] = m
		if got, err := ParseWatchMode(s.Name); got != m || err != nil {
			t.Errorf("ParseWatchMode(%q) = %v, %v; want %v", s.Name, got, err, m)
		}
	}
}

// TestWatchModeNames pins each constant's name and word: config files and
// --mode spell modes so, and the header says the words.
func TestWatchModeNames(t *testing.T) {
	for _, tc := range []struct {
		mode       WatchMode
		name, word string
	}{
		{WatchAuto, "auto", "auto"},
		{WatchEvents, "events", "events"},
		{WatchTracking, "tracking", "tracking"},
		{WatchPoll, "poll", "polling"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if s := tc.mode.Spec(); tc.mode.String() != tc.name || s.Word != tc.word {
				t.Errorf("WatchMode(%d) is %q, said %q; want %q, said %q", tc.mode, tc.mode, s.Word, tc.name, tc.word)
			}
		})
	}
}

// A mode the table does not hold is refused in a sentence that lists
// those it does.
func TestParseWatchModeRefuses(t *testing.T) {
	for _, name := range []string{"push", "", "Events", "polling"} {
		t.Run(name, func(t *testing.T) {
			_, err := ParseWatchMode(name)
			want := `"` + name + `" is not a mode (use auto, events, tracking or poll)`
			if err == nil || err.Error() != want {
				t.Errorf("ParseWatchMode(%q): %v; want %s", name, err, want)
			}
		})
	}
	if s := NumWatchModes.String(); s != "WatchMode(4)" {
		t.Errorf("a mode out of the table prints as %q", s)
	}
}

// What "fresh" means comes from the mode's entry: a push mode vouches for
// the rows while it watches; polling's rows are stale after three
// intervals; neither holds while the feed connects, reconnects or stopped.
func TestFeedStateFreshness(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  FeedState
		pushed bool
		stale  time.Duration
	}{
		{"events", FeedState{Mode: WatchEvents, Phase: FeedWatching}, true, 0},
		{"tracking", FeedState{Mode: WatchTracking, Phase: FeedWatching}, true, 0},
		{"polling", FeedState{Mode: WatchPoll, Phase: FeedWatching, Interval: time.Second}, false, 3 * time.Second},
		{"events down", FeedState{Mode: WatchEvents, Phase: FeedReconnecting}, false, 0},
		{"polling down", FeedState{Mode: WatchPoll, Phase: FeedReconnecting, Interval: time.Second}, false, 0},
		{"connecting", FeedState{}, false, 0},
		{"stopped", FeedState{Mode: WatchTracking, Phase: FeedStopped}, false, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.state.Pushed(); got != tc.pushed {
				t.Errorf("Pushed() = %v, want %v", got, tc.pushed)
			}
			if got := tc.state.StaleAfter(); got != tc.stale {
				t.Errorf("StaleAfter() = %v, want %v", got, tc.stale)
			}
		})
	}
}
