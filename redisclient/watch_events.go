package redisclient

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// eventsKind is the push mode of keyspace notifications: Watch starts it
// once every master sends the notifications it needs (see
// watch_events_config.go), turning them on first when --enable-events allows.
var eventsKind = pushKind{
	mode:      model.WatchEvents,
	follows:   "keyspace notifications",
	message:   "notification",
	lost:      "an event",
	evictions: true,
	start: func(ctx context.Context, r *reader, o WatchOptions, _ *noEvents) ([]*redis.Client, *noEvents, string, error) {
		return r.checkNotifications(ctx, o.EnableEvents)
	},
	look: func(ctx context.Context, c *Client) (*noEvents, error) {
		_, no, _, err := c.notifications(ctx, false)
		return no, err
	},
	newMode: newEvents,
}

// events follows keyspace notifications: a PSUBSCRIBE on every master of
// each pattern's channel, __keyspace@<db>__:<pattern>, whose messages name
// the key that changed and the event (set, del, expired, evicted...).
// Redis sends them only while notify-keyspace-events says to, which check
// looks at.
type events struct {
	w        *pushWatcher
	enable   bool     // turn missing notifications on (--enable-events), on masters found later too
	prefix   []byte   // "__keyspace@<db>__:", which precedes the key in a channel's name
	channels []string // the patterns' channels, each once
	// typesOff holds, by master, the classes of typeClasses its
	// notify-keyspace-events lacks, as last read; typesAdded says that a
	// type is read every interval since (see rereads.poll).
	typesOff   map[string]string
	typesAdded bool
}

// newEvents returns the events mode of w, which watches o.Patterns.
func newEvents(w *pushWatcher, o WatchOptions) pushMode {
	prefix := fmt.Sprintf("__keyspace@%d__:", w.c.db())
	channels := make([]string, len(o.Patterns))
	for i, p := range o.Patterns {
		channels[i] = prefix + p // the channel glob's * and ? apply to the key
	}
	slices.Sort(channels)
	return &events{
		w:        w,
		enable:   o.EnableEvents,
		prefix:   []byte(prefix),
		channels: slices.Compact(channels),
		typesOff: make(map[string]string),
	}
}

// open subscribes to the patterns' channels on node and waits until Redis
// has confirmed them all: from then on, every event is delivered.
func (e *events) open(ctx context.Context, node *redis.Client) (*subscription, error) {
	opt := node.Options()
	conn, err := dialSub(ctx, opt, e.w.c.name, e.w.c.budget.server(e.w.c.budgetKey(opt.Addr)))
	if err != nil {
		return nil, err
	}
	if err := conn.subscribe(ctx, "PSUBSCRIBE", e.channels...); err != nil {
		conn.close()
		return nil, err
	}
	overflows, _ := e.w.overflowCount(ctx, node)
	return &subscription{conn: conn, overflows: overflows}, nil
}

// reopen checks that node sends the notifications needed, turning them on
// when allowed (a promoted replica or a restarted server may not have
// them), then subscribes. When node cannot send them, its error is
// noEvents.error(), which the reader tells apart by errNoEvents.
func (e *events) reopen(ctx context.Context, node *redis.Client) (*subscription, error) {
	no, _, err := e.w.c.nodeNotifications(ctx, node, e.enable)
	switch {
	case err != nil:
		return nil, err
	case no != nil:
		return nil, no.error()
	}
	return e.open(ctx, node)
}

// refused returns why events cannot be used when subscribing was refused
// with err.
func (e *events) refused(err error) *noEvents {
	grant := make([]string, len(e.channels))
	for i, ch := range e.channels {
		grant[i] = "&" + model.Printable(ch)
	}
	fix := "grant the user their channels with ACL SETUSER <user> " + strings.Join(grant, " ")
	if e.w.c.kind == cluster {
		fix += " on every node"
	}
	return &noEvents{why: fmt.Sprintf("the Redis user may not subscribe to keyspace notifications (%s)", reason(err)), fix: fix}
}

// message reads a keyspace notification: the pattern it came by, the
// channel, which names the key, and the event. Everything after the
// channel's prefix is the key, whatever bytes it holds (':' and newlines
// included). An evicted event is counted (see evicted).
func (e *events) message(c *subConn, kind []byte, size int64) (uint64, error) {
	if size != 4 || string(kind) != "pmessage" {
		return 0, c.skipReplies(size - 1)
	}
	pattern, err := c.readBulk()
	if err != nil {
		return 0, err
	}
	p := e.patternOf(pattern)
	channel, err := c.readBulk()
	if err != nil {
		return 0, err
	}
	if key, ok := bytes.CutPrefix(channel, e.prefix); ok {
		e.w.changed.addBytes(key)
	}
	if p > 0 { // kept past the next read, for evicted
		c.held = append(c.held[:0], channel...)
	}
	event, err := c.readBulk()
	if err != nil {
		return 0, err
	}
	if string(event) == evictedEvent {
		e.evicted(p, c.held)
	}
	return 0, nil
}

// check looks at the masters' notify-keyspace-events (see checkSettings);
// a pass re-reading every key is due once a type is read every interval
// (see rereads).
func (e *events) check(ctx context.Context, nodes []*redis.Client) (whole bool, err error) {
	if nodes == nil {
		err = e.recheckSettings(ctx)
	} else {
		err = e.checkSettings(ctx, nodes)
	}
	whole, e.typesAdded = e.typesAdded, false
	return whole, err
}

// patternOf returns the index in e.channels of pattern, the channel
// pattern a keyspace notification came by; -1 when it is none of them.
func (e *events) patternOf(pattern []byte) int {
	for i, ch := range e.channels {
		if string(pattern) == ch {
			return i
		}
	}
	return -1
}

// evicted counts an evicted event, which came by the channel pattern
// e.channels[p] for channel: once a key, though several watched patterns
// match it and Redis sends the event by each (the first of them counts).
func (e *events) evicted(p int, channel []byte) {
	for _, earlier := range e.channels[:max(p, 0)] {
		if model.GlobMatch(earlier, string(channel)) {
			return
		}
	}
	e.w.evictions.sawEvicted()
}
