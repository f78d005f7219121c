package redisclient

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// invalidations is the channel on which Redis sends a RESP2 subscriber the
// invalidations of a tracking connection that redirects to it.
const invalidations = "__redis__:invalidate"

// tracking is what a watcher in tracking mode asks Redis to report: with
// BCAST, Redis names every key under the prefixes that is written, expires,
// is evicted or is deleted, and sends a null when a database is flushed.
// It needs no server configuration.
type tracking struct {
	patterns []string
	// prefixes are the patterns' literal prefixes, none a prefix of
	// another (Redis refuses prefixes that overlap); none when every key
	// is tracked.
	prefixes []string
	all      string // a pattern with no literal prefix, when one has none: every key is tracked
}

// newTracking returns the tracking of patterns.
func newTracking(patterns []string) *tracking {
	t := &tracking{patterns: patterns}
	var prefixes []string
	for _, p := range patterns {
		lit := literalPrefix(p)
		if lit == "" {
			t.all = p
			return t
		}
		prefixes = append(prefixes, lit)
	}
	// Sorted, a prefix comes just before the prefixes it covers.
	slices.Sort(prefixes)
	for _, p := range prefixes {
		if n := len(t.prefixes); n > 0 && strings.HasPrefix(p, t.prefixes[n-1]) {
			continue
		}
		t.prefixes = append(t.prefixes, p)
	}
	return t
}

// literalPrefix returns the bytes of pattern before its first glob
// metacharacter: every key the pattern matches begins with them.
func literalPrefix(pattern string) string {
	if i := strings.IndexAny(pattern, `*?[\`); i >= 0 {
		return pattern[:i]
	}
	return pattern
}

// matches reports whether key matches one of the patterns: Redis names
// every key under the prefixes, and those that no pattern matches are not
// worth a read.
func (t *tracking) matches(key string) bool {
	return slices.ContainsFunc(t.patterns, func(p string) bool { return model.GlobMatch(p, key) })
}

// newTrackingWatcher returns a watcher of o.Patterns by client tracking
// that reads through r.
func newTrackingWatcher(r *reader, o WatchOptions) *eventWatcher {
	w := newWatcher(r, o, model.WatchTracking)
	w.tracking = newTracking(o.Patterns)
	return w
}

// openTracking subscribes to the invalidations on node, then has Redis
// track the patterns' prefixes for that subscription, and returns once
// every change from then on will be told.
//
// CLIENT TRACKING ... REDIRECT <id> needs the CLIENT ID of the subscribed
// connection, which is countertop's own (see subConn): it asks before it
// subscribes. It speaks RESP2, in which Redis sends invalidations as
// messages on __redis__:invalidate. Tracking is the state of the
// connection that turned it on, which must stay open for as long: it is a
// connection of node's taken out of its pool for good (EphemeralConn).
//
// Tracking is not per database: a key written in another database under a
// prefix is named too, and its read here finds what this database holds.
func (w *eventWatcher) openTracking(ctx context.Context, node *redis.Client) (*subscription, error) {
	opt := node.Options()
	conn, err := dialSub(ctx, opt, w.c.name, w.c.budget.server(w.c.budgetKey(opt.Addr)))
	if err != nil {
		return nil, err
	}
	sub := &subscription{conn: conn, tracker: node.EphemeralConn()}
	id, err := conn.do(ctx, "CLIENT", "ID")
	if _, ok := id.(int64); err == nil && !ok {
		err = fmt.Errorf("CLIENT ID was answered with %v: %w", id, errProtocol)
	}
	if err == nil {
		err = conn.subscribe(ctx, "SUBSCRIBE", invalidations)
	}
	if err == nil {
		err = sub.tracker.ClientTrackingOn(ctx, &redis.ClientTrackingOptions{
			Redirect: id.(int64),
			Bcast:    true,
			Prefixes: w.tracking.prefixes,
		}).Err()
	}
	if err != nil {
		sub.close()
		return nil, err
	}
	sub.overflows, _ = w.overflowCount(ctx, node)
	return sub, nil
}

// sawFlush tells the reader that a master's keys were flushed: a full pass
// finds which are left. It never waits: one signal pending is enough.
func (w *eventWatcher) sawFlush() {
	select {
	case w.flushSeen <- struct{}{}:
	default:
	}
}

// noTracking returns why tracking cannot be used when it was refused with
// err. The header has little room, and says so in a few words when the fix
// names what is missing.
func (w *eventWatcher) noTracking(err error) *noEvents {
	server := "the server"
	if w.c.kind == cluster {
		server = "a master"
	}
	no := &noEvents{why: fmt.Sprintf("%s refused client tracking (%s)", server, reason(err)), tracking: true}
	switch {
	case redis.HasErrorPrefix(err, "NOPERM"):
		no.why = "the Redis user may not use client tracking"
		no.fix = "grant the user +client|tracking +client|id +subscribe &" + invalidations
		if w.c.kind == cluster {
			no.fix += " on every node"
		}
	case unknownCommand(err):
		no.why = server + " does not offer client tracking, which needs Redis 6 or later"
	}
	return no
}

// unknownCommand reports whether err says the server does not know a
// command or subcommand (an old Redis, or one renamed away).
func unknownCommand(err error) bool {
	return strings.HasPrefix(strings.ToLower(err.Error()), "err unknown")
}

// trackingNote returns the Note of auto mode when it tracks because events
// cannot be used, as no says.
func trackingNote(no *noEvents) string {
	if no == nil {
		return ""
	}
	return "tracking: " + no.why + "; CLIENT TRACKING needs no server config"
}

// alsoNo returns one noEvents that says why neither events (no, nil when
// they were not tried) nor tracking (tno) can be used.
func alsoNo(no, tno *noEvents) *noEvents {
	if no == nil {
		return tno
	}
	fix := no.fix
	switch {
	case fix == "":
		fix = tno.fix
	case tno.fix != "":
		fix += ", or " + tno.fix
	}
	return &noEvents{why: no.why + "; " + tno.why, fix: fix, settable: no.settable, tracking: true}
}
