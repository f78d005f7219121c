package redisclient

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// invalidations is the channel on which Redis sends a RESP2 subscriber the
// invalidations of a tracking connection that redirects to it.
const invalidations = "__redis__:invalidate"

// trackingKind is the push mode of client tracking: it needs no server
// configuration, only a user allowed to use it (Redis 6 and later).
var trackingKind = pushKind{
	mode:    model.WatchTracking,
	follows: "client tracking",
	message: "invalidation",
	lost:    "an invalidation",
	start:   startTracking,
	newMode: func(w *pushWatcher, o WatchOptions) pushMode {
		t := newTracking(o.Patterns)
		t.w = w
		return t
	},
}

// startTracking finds the masters, on which nothing stands in the way of
// trying tracking. Its note says why auto tracks (prior, why events could
// not be used) and when every key is tracked.
func startTracking(ctx context.Context, r *reader, o WatchOptions, prior *noEvents) (nodes []*redis.Client, _ *noEvents, note string, err error) {
	if err := r.retry(ctx, func() (err error) { nodes, err = r.c.masters(ctx); return err }); err != nil {
		return nil, nil, "", err
	}
	note = trackingNote(prior)
	if all := untracked(o.Patterns); all != "" {
		note = joinNotes(note, fmt.Sprintf("tracking every key: the pattern %q has no literal prefix", model.Printable(all)))
	}
	return nodes, nil, note, nil
}

// tracking follows client tracking: with BCAST, Redis names every key
// under the prefixes that is written, expires, is evicted or is deleted,
// and sends a null when a database is flushed.
type tracking struct {
	w        *pushWatcher
	patterns []string
	// prefixes are the patterns' literal prefixes, none a prefix of
	// another (Redis refuses prefixes that overlap); none when every key
	// is tracked, a pattern having none (see untracked).
	prefixes []string
}

// newTracking returns the tracking of patterns.
func newTracking(patterns []string) *tracking {
	t := &tracking{patterns: patterns}
	if untracked(patterns) != "" {
		return t
	}
	prefixes := make([]string, len(patterns))
	for i, p := range patterns {
		prefixes[i] = literalPrefix(p)
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

// untracked returns the first of patterns with no literal prefix, which
// has Redis track every key; "" when each has one.
func untracked(patterns []string) string {
	for _, p := range patterns {
		if literalPrefix(p) == "" {
			return p
		}
	}
	return ""
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

// open subscribes to the invalidations on node, then has Redis track the
// patterns' prefixes for that subscription, and returns once every change
// from then on will be told.
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
func (t *tracking) open(ctx context.Context, node *redis.Client) (*subscription, error) {
	opt := node.Options()
	conn, err := dialSub(ctx, opt, t.w.c.name, t.w.c.budget.server(t.w.c.budgetKey(opt.Addr)))
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
			Prefixes: t.prefixes,
		}).Err()
	}
	if err != nil {
		sub.close()
		return nil, err
	}
	sub.overflows, _ = t.w.overflowCount(ctx, node)
	return sub, nil
}

// reopen subscribes again. A refusal (an ACL tightened, a server replaced
// by an older one) is a noEvents.error(), which the reader tells apart by
// errNoEvents.
func (t *tracking) reopen(ctx context.Context, node *redis.Client) (*subscription, error) {
	sub, err := t.open(ctx, node)
	if refused(err) {
		return nil, t.refused(err).error()
	}
	return sub, err
}

// refused returns why tracking cannot be used when it was refused with
// err. The header has little room, and says so in a few words when the fix
// names what is missing.
func (t *tracking) refused(err error) *noEvents {
	server := "the server"
	if t.w.c.kind == cluster {
		server = "a master"
	}
	no := &noEvents{why: fmt.Sprintf("%s refused client tracking (%s)", server, reason(err)), tracking: true}
	switch {
	case redis.HasErrorPrefix(err, "NOPERM"):
		no.why = "the Redis user may not use client tracking"
		no.fix = "grant the user +client|tracking +client|id +subscribe &" + invalidations
		if t.w.c.kind == cluster {
			no.fix += " on every node"
		}
	case unknownCommand(err):
		no.why = server + " does not offer client tracking, which needs Redis 6 or later"
	}
	return no
}

// message reads an invalidation: a message on __redis__:invalidate (see
// invalidation).
func (t *tracking) message(c *subConn, kind []byte, size int64) (uint64, error) {
	if size != 3 || string(kind) != "message" {
		return 0, c.skipReplies(size - 1)
	}
	channel, err := c.readBulk()
	if err != nil {
		return 0, err
	}
	if string(channel) != invalidations {
		return 0, c.skipReplies(1)
	}
	return t.invalidation(c)
}

// invalidation reads the payload of an invalidation from c: the keys it
// names, put in the changed set when a pattern matches them, or a null
// when a database was flushed. It returns how many keys it named.
func (t *tracking) invalidation(c *subConn) (uint64, error) {
	line, err := c.readLine()
	if err != nil {
		return 0, err
	}
	switch line[0] {
	case '$': // a null (flushed), or a key on its own
		key, err := c.bulkAfter(line)
		switch {
		case err != nil:
			return 0, err
		case key == nil:
			t.w.sawFlush()
			return 0, nil
		}
		t.invalidated(key)
		return 1, nil
	case '*':
		n, ok := atoi(line[1:])
		if !ok {
			return 0, errProtocol
		}
		if n < 0 {
			t.w.sawFlush()
			return 0, nil
		}
		for range n {
			key, err := c.readBulk()
			if err != nil {
				return 0, err
			}
			t.invalidated(key)
		}
		return uint64(n), nil
	}
	return 0, errProtocol
}

// invalidated puts key, which an invalidation named, in the changed set
// when a pattern matches it.
func (t *tracking) invalidated(key []byte) {
	if len(key) == 0 {
		if t.matches("") {
			t.w.changed.add("")
		}
		return
	}
	// A view of the reader's buffer, for the match only: the set copies
	// what it keeps.
	if t.matches(unsafe.String(unsafe.SliceData(key), len(key))) {
		t.w.changed.addBytes(key)
	}
}

// check has nothing to look at: tracking needs no setting.
func (t *tracking) check(context.Context, []*redis.Client) (bool, error) { return false, nil }

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
