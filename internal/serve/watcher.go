// Package serve is what `countertop serve` answers over HTTP: the
// Prometheus metrics, the health check and the problem keys, all read from
// what the watcher last told (a model.Store and the feed's state) under one
// lock, so that a scrape sends nothing to Redis.
package serve

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/countertop/countertop/model"
)

// Options are what the Watcher reports besides the keys.
type Options struct {
	Budget      float64       // countertop's budget of commands a second per server; 0: none
	Version     string        // the build's version, for countertop_build_info
	Commit      string        // its commit, "" when not known
	MetricsKeys int           // how many problem keys get a labelled gauge of their own
	MaxBehind   time.Duration // how far behind the feed may be before /healthz says it is not fresh
}

// A Watcher holds what the feed told: the keys in a Store, the feed's
// state and health, when each current problem was first seen. Apply
// writes; the handlers read, each under the lock.
type Watcher struct {
	opts Options

	mu       sync.Mutex
	store    *model.Store
	state    model.FeedState
	heard    bool // a state arrived
	health   model.Health
	closed   string    // why the feed stopped for good; "" while it runs
	scanning bool      // a pass over the keys is going on
	lastPass time.Time // when the last complete pass ended
	errs     map[string]float64
	failing  string // the error kind now in force, counted once when it began
	// problems is every key whose status is a problem, with when it was
	// first seen so, in no order; problemAt is each one's place in it. A
	// scrape reads them there, one after the other, rather than the Store.
	problems  []seen
	problemAt map[string]int32
}

// seen is a problem key: the rule that covers it, its status, and when it
// was first seen with that status.
type seen struct {
	key    string
	rule   int16
	status model.Status
	since  time.Time
}

// NewWatcher returns a Watcher whose Store classifies keys with rules.
func NewWatcher(rules *model.Rules, opts Options) *Watcher {
	if opts.MaxBehind <= 0 {
		opts.MaxBehind = 30 * time.Second
	}
	store := model.NewStore(rules)
	store.Tally() // on an empty Store: from now on Apply keeps the counts a scrape reads
	return &Watcher{opts: opts, store: store, errs: map[string]float64{}, problemAt: map[string]int32{}}
}

// modeOf is the watch mode a state says, as a label: its name, as --mode
// spells it.
func modeOf(s *model.FeedState) string { return s.Mode.String() }

// Apply applies b to the Store, as of now, and keeps the feed's state.
func (w *Watcher) Apply(b model.Batch, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.store.Apply(b)
	for _, k := range b.Removed {
		w.solved(k)
	}
	for i := range b.Observed {
		w.track(b.Observed[i].Key, now)
	}
	if b.Health != nil {
		w.health = *b.Health
		w.count(w.kind())
	}
	if b.State != nil {
		w.setState(b.State, now)
	}
}

// track notes when key took its current status, if a problem.
func (w *Watcher) track(key string, now time.Time) {
	c, ok := w.store.Get(key)
	if !ok || !c.Status.Problem() {
		w.solved(key)
		return
	}
	i, ok := w.problemAt[key]
	switch {
	case !ok:
		w.problemAt[c.Key] = int32(len(w.problems)) // the Store's copy of the name, not the reading's
		w.problems = append(w.problems, seen{key: c.Key, rule: c.Rule, status: c.Status, since: now})
	case w.problems[i].status != c.Status:
		w.problems[i].status, w.problems[i].since = c.Status, now
	}
}

// solved drops key from the problems, if there, moving the last one into
// its place.
func (w *Watcher) solved(key string) {
	i, ok := w.problemAt[key]
	if !ok {
		return
	}
	delete(w.problemAt, key)
	last := int32(len(w.problems) - 1)
	if i != last {
		w.problems[i] = w.problems[last]
		w.problemAt[w.problems[i].key] = i
	}
	w.problems[last] = seen{} // let go of its key
	w.problems = w.problems[:last]
}

// setState keeps s; a pass that ends with Redis answering is a complete
// one, and a new error kind counts once.
func (w *Watcher) setState(s *model.FeedState, now time.Time) {
	w.heard = true
	w.state = *s
	healthy := s.Connected && s.LastError == ""
	if s.Scanning {
		w.scanning = true
	} else if w.scanning && healthy {
		w.scanning = false
		w.lastPass = now
	}
	w.count(w.kind())
}

// kind is the kind of error in force, "" when none: the feed lost Redis
// (disconnected), reads failing while connected (feed), a command left
// unanswered (unanswered), the feed stopped for good (stopped).
func (w *Watcher) kind() string {
	switch {
	case w.closed != "":
		return "stopped"
	case !w.heard, w.state.Phase == model.FeedConnecting && w.state.LastError == "":
		return "" // the first connection is not lost yet
	case !w.state.Connected:
		return "disconnected"
	case w.state.LastError != "":
		return "feed"
	case w.health.Silent != "":
		return "unanswered"
	}
	return ""
}

// count counts kind once when it begins, then not while it lasts.
func (w *Watcher) count(kind string) {
	if kind != "" && kind != w.failing {
		w.errs[kind]++
	}
	w.failing = kind
}

// Close records that the feed stopped for good, and why.
func (w *Watcher) Close(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if why == "" {
		why = "the watch stopped"
	}
	w.closed = why
	w.count(w.kind())
}

// Health returns whether the feed is live and fresh, and one sentence
// saying so or why not.
func (w *Watcher) Health() (bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed != "":
		return false, "countertop stopped watching: " + w.closed
	case !w.heard:
		return false, "countertop has not heard from Redis yet: it is connecting"
	case !w.state.Connected || w.state.LastError != "":
		why, _, _ := strings.Cut(w.state.LastError, "; countertop keeps trying")
		if why == "" {
			why = "the connection to Redis was lost"
		}
		return false, why
	case w.health.Silent != "":
		return false, fmt.Sprintf("Redis at %s has left a command unanswered since %s", w.health.Silent, w.health.Since.UTC().Format(time.RFC3339))
	case w.health.Behind > w.opts.MaxBehind:
		return false, fmt.Sprintf("the feed is %s behind Redis, more than %s", model.FormatDuration(w.health.Behind), model.FormatDuration(w.opts.MaxBehind))
	}
	return true, fmt.Sprintf("live: watching %d keys at %s (%s)", w.store.Len(), w.state.Addr, modeOf(&w.state))
}
