// Package serve is what `countertop serve` answers over HTTP: the
// Prometheus metrics, the health check and the problem keys, all read from
// what the watcher last told (a model.Store and each server's feed state)
// under one lock, so that a scrape sends nothing to Redis.
package serve

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/countertop/countertop/model"
)

// Options are what the Watcher reports besides the keys.
type Options struct {
	Budget float64 // countertop's budget of commands a second on its one server; 0: none
	// Servers are the servers watched, when more than one: each batch
	// names its own (model.Batch.Server), and the metrics that are a
	// server's carry a server label. Nil with one server (Budget).
	Servers []Server
	// Shards are the groups of Servers that are shards of one limiter
	// (config's [[shards]]): a key that two of a group hold counts the
	// limit once on each, and countertop_shared_keys counts those keys.
	// A group of which fewer than two servers are watched can show no
	// copy, and has no series.
	Shards      []model.ShardGroup
	Version     string        // the build's version, for countertop_build_info
	Commit      string        // its commit, "" when not known
	MetricsKeys int           // how many problem keys get a labelled gauge of their own
	MaxBehind   time.Duration // how far behind a feed may be before /healthz says it is not fresh
}

// Server is one of several servers the Watcher hears from.
type Server struct {
	Name   string
	Budget float64 // its --max-commands; 0: none
}

// A Watcher holds what the feeds told: the keys in a Store, each
// server's feed state and health, when each current problem was first
// seen. Apply writes; the handlers read, each under the lock.
type Watcher struct {
	opts Options

	mu    sync.Mutex
	store *model.Store
	feeds []*feed // one a server, in the order given
	// problems is every row whose status is a problem, with when it was
	// first seen so, in no order; problemAt is each one's place in it, by
	// row ID. A scrape reads them there, one after the other, rather than
	// the Store.
	problems  []seen
	problemAt map[string]int32
	// fieldProblems is, by hash (its ServerKey), the IDs of its field
	// rows among the problems: a reading or a removal of the hash may end
	// them (a field expired, the hash gone or read whole again), and
	// nothing else names them.
	fieldProblems map[string][]string
}

// feed is what one server's feed told.
type feed struct {
	name     string // "" with one server
	budget   float64
	state    model.FeedState
	heard    bool // a state arrived
	health   model.Health
	closed   string    // why the feed stopped for good; "" while it runs
	scanning bool      // a pass over the keys is going on
	lastPass time.Time // when the last complete pass ended
	errs     map[string]float64
	failing  string // the error kind now in force, counted once when it began
}

// seen is a problem row: its ID, key (and field, for a field's row) and
// server, the rule that covers it, its status, and when it was first seen
// with that status.
type seen struct {
	id     string
	key    string
	field  string
	server string
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
	w := &Watcher{opts: opts, store: store, problemAt: map[string]int32{}, fieldProblems: map[string][]string{}}
	if len(opts.Servers) > 1 {
		for _, s := range opts.Servers {
			w.feeds = append(w.feeds, &feed{name: s.Name, budget: s.Budget, errs: map[string]float64{}})
		}
		store.SetShards(watchedShards(opts.Shards, opts.Servers))
	} else {
		w.feeds = []*feed{{budget: opts.Budget, errs: map[string]float64{}}}
	}
	return w
}

// watchedShards are the groups of shards of which two servers or more
// are among servers: only those can hold a key twice here.
func watchedShards(groups []model.ShardGroup, servers []Server) []model.ShardGroup {
	var watched []model.ShardGroup
	for _, g := range groups {
		n := 0
		for _, s := range servers {
			if slices.Contains(g.Servers, s.Name) {
				n++
			}
		}
		if n >= 2 {
			watched = append(watched, g)
		}
	}
	return watched
}

// several reports whether the Watcher hears from more than one server.
func (w *Watcher) several() bool { return len(w.feeds) > 1 }

// feedOf is the feed of server: the one feed with one server.
func (w *Watcher) feedOf(server string) *feed {
	if !w.several() {
		return w.feeds[0]
	}
	for _, f := range w.feeds {
		if f.name == server {
			return f
		}
	}
	return nil
}

// modeOf is the watch mode a state says, as a label: its name, as --mode
// spells it.
func modeOf(s *model.FeedState) string { return s.Mode.String() }

// Apply applies b, of the server it names, to the Store, as of now, and
// keeps that server's feed state.
func (w *Watcher) Apply(b model.Batch, now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.store.Apply(b)
	for _, k := range b.Removed {
		key := model.ServerKey(b.Server, k)
		w.solved(key)
		for _, id := range slices.Clone(w.fieldProblems[key]) {
			w.solved(id)
		}
	}
	for i := range b.Observed {
		o := &b.Observed[i]
		key := model.ServerKey(b.Server, o.Key)
		w.track(key, now)
		// A hash whose fields carry TTLs is a row a field (model.Rows):
		// each field read, and each field row a problem before, is
		// looked up again (one that is no row, or no longer, is solved).
		if o.FieldTTLs {
			for k := range o.Fields {
				w.track(model.RowID(key, o.Fields[k].Name), now)
			}
		}
		for _, id := range slices.Clone(w.fieldProblems[key]) {
			w.track(id, now)
		}
	}
	f := w.feedOf(b.Server)
	if f == nil {
		return
	}
	if b.Health != nil {
		f.health = *b.Health
		f.count(f.kind())
	}
	if b.State != nil {
		f.setState(b.State, now)
	}
}

// track notes when the row id took its current status, if a problem.
func (w *Watcher) track(id string, now time.Time) {
	c, ok := w.store.Get(id)
	if !ok || !c.Status.Problem() {
		w.solved(id)
		return
	}
	i, ok := w.problemAt[id]
	switch {
	case !ok:
		id = c.ID() // the Store's copy of the name, not the reading's
		w.problemAt[id] = int32(len(w.problems))
		p := seen{id: id, key: c.Key, server: c.Server, rule: c.Rule, status: c.Status, since: now}
		if c.FieldRow && c.Field != "" { // a field named "" has its hash's ID (model.RowID)
			p.field = c.Field
			hash := hashOf(&p)
			w.fieldProblems[hash] = append(w.fieldProblems[hash], id)
		}
		w.problems = append(w.problems, p)
	case w.problems[i].status != c.Status:
		w.problems[i].status, w.problems[i].since = c.Status, now
	}
}

// hashOf is the ServerKey of the hash of p, a field's row: its ID
// (model.RowID) without the field.
func hashOf(p *seen) string { return p.id[:len(p.id)-len(p.field)-1] }

// solved drops the row id from the problems, if there, moving the last
// one into its place.
func (w *Watcher) solved(id string) {
	i, ok := w.problemAt[id]
	if !ok {
		return
	}
	delete(w.problemAt, id)
	if p := &w.problems[i]; p.field != "" {
		hash := hashOf(p)
		ids := w.fieldProblems[hash]
		if ids = slices.DeleteFunc(ids, func(s string) bool { return s == id }); len(ids) == 0 {
			delete(w.fieldProblems, hash)
		} else {
			w.fieldProblems[hash] = ids
		}
	}
	last := int32(len(w.problems) - 1)
	if i != last {
		w.problems[i] = w.problems[last]
		w.problemAt[w.problems[i].id] = i
	}
	w.problems[last] = seen{} // let go of its key
	w.problems = w.problems[:last]
}

// setState keeps s; a pass that ends with Redis answering is a complete
// one, and a new error kind counts once. A feed that says it stopped
// (model.FeedStopped, a server's watch that cannot go on) is closed.
func (f *feed) setState(s *model.FeedState, now time.Time) {
	f.heard = true
	f.state = *s
	if s.Phase == model.FeedStopped && f.closed == "" {
		f.closed = s.LastError
		if f.closed == "" {
			f.closed = "the watch stopped"
		}
	}
	healthy := s.Connected && s.LastError == ""
	if s.Scanning {
		f.scanning = true
	} else if f.scanning && healthy {
		f.scanning = false
		f.lastPass = now
	}
	f.count(f.kind())
}

// kind is the kind of error in force, "" when none: the feed lost Redis
// (disconnected), reads failing while connected (feed), a command left
// unanswered (unanswered), the feed stopped for good (stopped).
func (f *feed) kind() string {
	switch {
	case f.closed != "":
		return "stopped"
	case !f.heard, f.state.Phase == model.FeedConnecting && f.state.LastError == "":
		return "" // the first connection is not lost yet
	case !f.state.Connected:
		return "disconnected"
	case f.state.LastError != "":
		return "feed"
	case f.health.Silent != "":
		return "unanswered"
	}
	return ""
}

// count counts kind once when it begins, then not while it lasts.
func (f *feed) count(kind string) {
	if kind != "" && kind != f.failing {
		f.errs[kind]++
	}
	f.failing = kind
}

// Close records that every feed stopped for good, and why.
func (w *Watcher) Close(why string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if why == "" {
		why = "the watch stopped"
	}
	for _, f := range w.feeds {
		f.closed = why
		f.count(f.kind())
	}
}

// live returns whether f is live and fresh, and if not, one sentence
// saying why.
func (f *feed) live(maxBehind time.Duration) (bool, string) {
	switch {
	case f.closed != "":
		return false, "countertop stopped watching: " + f.closed
	case !f.heard, f.state.Phase == model.FeedConnecting && f.state.LastError == "":
		return false, "countertop has not heard from Redis yet: it is connecting"
	case !f.state.Connected || f.state.LastError != "":
		why, _, _ := strings.Cut(f.state.LastError, "; countertop keeps trying")
		if why == "" {
			why = "the connection to Redis was lost"
		}
		return false, why
	case f.health.Silent != "":
		return false, fmt.Sprintf("Redis at %s has left a command unanswered since %s", f.health.Silent, f.health.Since.UTC().Format(time.RFC3339))
	case f.health.Behind > maxBehind:
		return false, fmt.Sprintf("the feed is %s behind Redis, more than %s", model.FormatDuration(f.health.Behind), model.FormatDuration(maxBehind))
	}
	return true, ""
}

// Health returns whether every feed is live and fresh, and one sentence
// saying so or, server by server, why not.
func (w *Watcher) Health() (bool, string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var down []string
	for _, f := range w.feeds {
		if ok, why := f.live(w.opts.MaxBehind); !ok {
			if w.several() {
				why = model.Printable(f.name) + ": " + why
			}
			down = append(down, why)
		}
	}
	switch {
	case len(down) > 0 && w.several():
		return false, fmt.Sprintf("%d of %d servers not live: %s", len(down), len(w.feeds), strings.Join(down, "; "))
	case len(down) > 0:
		return false, down[0]
	case w.several():
		return true, fmt.Sprintf("live: watching %d keys on %d servers", w.store.Len(), len(w.feeds))
	}
	f := w.feeds[0]
	return true, fmt.Sprintf("live: watching %d keys at %s (%s)", w.store.Len(), f.state.Addr, modeOf(&f.state))
}
