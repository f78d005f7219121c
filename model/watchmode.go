package model

import (
	"fmt"
	"strings"
	"time"
)

// WatchMode is how countertop learns that keys changed: what --mode and
// the config file's mode ask for, and what the feed says it does
// (FeedState.Mode). Its zero value, WatchAuto, is the default.
//
// Everything the rest of the code asks of a mode is its entry in
// watchModes (Spec), so that the ui reads what "fresh" means from there,
// and no code compares a mode's name. The modes are implemented in
// redisclient's watch_*.go files, which model does not import; auto
// chooses one of the others.
type WatchMode uint8

const (
	WatchAuto     WatchMode = iota // events, else tracking, else polling; the feed says which
	WatchEvents                    // keyspace notifications
	WatchTracking                  // client tracking (Redis 6 and later)
	WatchPoll                      // every key read again each interval
	NumWatchModes
)

// WatchModeSpec is what the rest of the code asks of a watch mode.
type WatchModeSpec struct {
	// Name is the mode as --mode and the config file spell it: once
	// given, never changed.
	Name string
	// Word is how the header says the feed follows changes ("polling"),
	// and the detail who vouches for a row ("as events tell").
	Word string
	// Push reports whether the servers tell each change as it happens:
	// while the feed follows them, a row read a minute ago is as true as
	// one read now ("live"), and a key not told of has not changed, so
	// its rate fades to 0/s.
	Push bool
	// StaleIntervals, for a mode that reads the rows on screen every
	// interval, is how many intervals old data may be before its age
	// means that reads fail or hang; 0 for a mode that sets no such bound.
	// The header shows such a mode's interval.
	StaleIntervals int
	// About is what --mode's help says of it, after its name.
	About string
}

// watchModes is every mode's spec, keyed by its constant so that no name
// can shift to another mode; TestWatchModeTable fails on a mode without an
// entry.
var watchModes = [NumWatchModes]WatchModeSpec{
	WatchAuto:     {Name: "auto", Word: "auto", About: "events, else tracking, else poll"},
	WatchEvents:   {Name: "events", Word: "events", Push: true, About: "keyspace notifications"},
	WatchTracking: {Name: "tracking", Word: "tracking", Push: true, About: "client tracking, Redis 6+: no server config"},
	WatchPoll:     {Name: "poll", Word: "polling", StaleIntervals: 3, About: "snapshot and check: with --watch"},
}

// Spec returns what the code asks of m: its entry in the table; a zero
// spec for a value out of it.
func (m WatchMode) Spec() WatchModeSpec {
	if m < NumWatchModes {
		return watchModes[m]
	}
	return WatchModeSpec{}
}

// Valid reports whether m is one of the modes.
func (m WatchMode) Valid() bool { return m < NumWatchModes }

// String is the mode as --mode spells it.
func (m WatchMode) String() string {
	if !m.Valid() {
		return fmt.Sprintf("WatchMode(%d)", uint8(m))
	}
	return watchModes[m].Name
}

// WatchModesAbout is every mode with what it does, for --mode's help:
// "auto (events, else tracking, else poll), events (...) ... or poll (...)".
func WatchModesAbout() string {
	var b strings.Builder
	for m := range NumWatchModes {
		switch {
		case m == NumWatchModes-1:
			b.WriteString(" or ")
		case m > 0:
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s (%s)", watchModes[m].Name, watchModes[m].About)
	}
	return b.String()
}

// WatchModeNames are the modes' names, in the table's order: what --mode
// takes.
func WatchModeNames() []string {
	names := make([]string, NumWatchModes)
	for m := range NumWatchModes {
		names[m] = watchModes[m].Name
	}
	return names
}

// ParseWatchMode reads --mode, or the config file's mode.
func ParseWatchMode(name string) (WatchMode, error) {
	for m := range NumWatchModes {
		if name == watchModes[m].Name {
			return m, nil
		}
	}
	return WatchAuto, fmt.Errorf("%q is not a mode (use %s)", name, orList(WatchModeNames()))
}

// FeedPhase is where the feed stands, whatever its mode: connecting,
// watching, reconnecting or stopped.
type FeedPhase uint8

const (
	FeedConnecting   FeedPhase = iota // Redis has not answered yet
	FeedWatching                      // following changes as the feed's Mode says
	FeedReconnecting                  // Redis, or a subscription to one of its servers, is down: countertop retries (LastError says why)
	FeedStopped                       // the mode asked for cannot work: the watch gave up (LastError says why)
	NumFeedPhases
)

// feedPhaseNames are the phases as tests and logs print them.
var feedPhaseNames = [NumFeedPhases]string{
	FeedConnecting:   "connecting",
	FeedWatching:     "watching",
	FeedReconnecting: "reconnecting",
	FeedStopped:      "stopped",
}

func (p FeedPhase) String() string {
	if p >= NumFeedPhases {
		return fmt.Sprintf("FeedPhase(%d)", uint8(p))
	}
	return feedPhaseNames[p]
}

// Pushed reports whether the servers push each change to the feed now: it
// is watching, in a mode that pushes (see WatchModeSpec.Push).
func (s FeedState) Pushed() bool { return s.Phase == FeedWatching && s.Mode.Spec().Push }

// StaleAfter is how old data may be before its age means that reads fail
// or hang: StaleIntervals intervals while watching in a mode that reads
// every interval; 0 when there is no such bound.
func (s FeedState) StaleAfter() time.Duration {
	if s.Phase != FeedWatching {
		return 0
	}
	return time.Duration(s.Mode.Spec().StaleIntervals) * s.Interval
}
