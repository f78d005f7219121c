package redisclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// The notify-keyspace-events flags events mode needs: K (keyspace
// channels, which name the key) and the classes of every event that changes
// what a counter shows: $ string commands (set, incrby, incrbyfloat), g
// generic ones (del, rename, expire, persist), x expired and e evicted.
// Without them, events mode cannot be used.
//
// typeClasses are those of the other types countertop reads: h hashes
// (HINCRBY, HSET), z sorted sets (ZADD) and l lists (LPUSH), the layouts of
// buckets, hash-field counters and logs. h holds every event of a hash's
// fields' TTLs too (Redis 7.4 and later: hexpire for HEXPIRE and
// HPEXPIRE, hpersist, hexpired when a field expires, hdel when one is
// given a TTL in the past), and a hash whose last field goes sends g's
// del: a hash read field by field needs no other class. countertop asks
// for them too (wantedFlags, which --enable-events turns on and the
// advice names); a master whose setting lacks one is followed all the
// same, the keys of that type read again every interval (see rereads), as
// the header says.
const (
	keyspaceFlag  = "K"
	neededClasses = "$gxe"
	typeClasses   = "hzl"
	neededFlags   = keyspaceFlag + neededClasses
	wantedFlags   = neededFlags + typeClasses
)

// missingFlags returns the flags of neededFlags that the setting set lacks.
func missingFlags(set string) string { return missingOf(set, neededFlags) }

// missingOf returns the flags of flags that the setting set lacks. The flag
// A stands for every class; it does not include K.
func missingOf(set, flags string) string {
	var missing []byte
	for _, f := range []byte(flags) {
		on := strings.IndexByte(set, f) >= 0 || f != keyspaceFlag[0] && strings.IndexByte(set, 'A') >= 0
		if !on {
			missing = append(missing, f)
		}
	}
	return string(missing)
}

// typeNames are the types of typeClasses' classes, for people.
var typeNames = map[byte]string{'h': "hashes", 'z': "sorted sets", 'l': "lists"}

// polledNote is the header's phrase on the types read every interval
// because a master lacks classes, some of typeClasses; "" when none is.
func polledNote(classes string, interval time.Duration) string {
	if classes == "" {
		return ""
	}
	names := make([]string, len(classes))
	for i := range len(classes) {
		names[i] = typeNames[classes[i]]
	}
	list := names[0]
	if n := len(names); n > 1 {
		list = strings.Join(names[:n-1], ", ") + " and " + names[n-1]
	}
	return fmt.Sprintf("%s re-read every %s: notify-keyspace-events lacks %s", list, model.FormatDuration(interval), classes)
}

// errNoEvents is the cause of noEvents.error(), so that the event watcher
// can tell a master that is up but does not send the notifications (found
// by its look at the setting, or by a subscriber subscribing again) apart
// from a subscription lost or a read that failed (errors.Is): it waits for
// those to come back, but polls in place of that.
var errNoEvents = errors.New("keyspace notifications cannot be used")

// noEvents says why keyspace notifications (or client tracking, or both)
// cannot be used and, when there is something the user can do about it,
// what. Both are sentence fragments.
type noEvents struct {
	why, fix string
	// settable: only a setting is missing, which someone may yet turn on;
	// not a refusal (of CONFIG GET, CONFIG SET or PSUBSCRIBE), which asking
	// again would only repeat.
	settable bool
	tracking bool // it says why client tracking cannot be used (see tracking.refused)
}

// note returns the feed's Note in auto mode, which polls instead.
func (no *noEvents) note() string {
	if no.fix == "" {
		return "polling: " + no.why
	}
	return "polling: " + no.why + "; " + no.fix + " to get live updates"
}

// error returns the error of events (or tracking) mode, which cannot work.
func (no *noEvents) error() error {
	fix := "use --mode tracking or --mode poll"
	if no.tracking {
		fix = "use --mode poll"
	}
	if no.fix != "" {
		fix = no.fix + ", or " + fix
	}
	return explained(no.why+" — "+fix, errNoEvents)
}

// checkNotifications reads notify-keyspace-events on every master and,
// when enable allows, turns on the flags that are missing. It returns the
// masters and nil when notifications can be used everywhere, with a note for
// the feed when it changed the setting. While Redis cannot be reached it
// reports that in the feed's state and retries; its error is ctx's.
func (r *reader) checkNotifications(ctx context.Context, enable bool) (nodes []*redis.Client, no *noEvents, note string, err error) {
	err = r.retry(ctx, func() (err error) {
		nodes, no, note, err = r.c.notifications(ctx, enable)
		return err
	})
	return nodes, no, note, err
}

// retry runs try until it succeeds, with backoff, saying in the feed's
// state why it failed meanwhile. Its error is ctx's.
func (r *reader) retry(ctx context.Context, try func() error) error {
	var backoff time.Duration
	for {
		err := try()
		if err == nil {
			return nil
		}
		r.failed(err)
		if err := r.emit(ctx, model.Batch{}); err != nil {
			return err
		}
		backoff = nextBackoff(backoff)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// notifications makes one try of checkNotifications. It returns the
// masters, why notifications cannot be used on those that cannot use them
// (one noEvents for all: see mergeNoEvents), and what was turned on. Its
// error says nothing about notifications (a master could not be reached).
func (c *Client) notifications(ctx context.Context, enable bool) ([]*redis.Client, *noEvents, string, error) {
	nodes, err := c.masters(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	var turnedOn []settingChange
	var nos []*noEvents
	var without []string // the masters of nos
	for _, n := range nodes {
		no, change, err := c.nodeNotifications(ctx, n, enable)
		if err != nil {
			return nil, nil, "", err
		}
		if no != nil {
			nos, without = append(nos, no), append(without, n.Options().Addr)
		}
		if change != nil {
			turnedOn = append(turnedOn, *change)
		}
	}
	if len(nos) > 0 {
		return nil, mergeNoEvents(nos, without), "", nil
	}
	return nodes, nil, turnedOnNote(turnedOn), nil
}

// mergeNoEvents returns one noEvents for the masters at addrs, which each gave
// one of nos: masters with the same reason are named together ("off on
// masters A, B and C"), so that the note names every master to fix.
func mergeNoEvents(nos []*noEvents, addrs []string) *noEvents {
	if len(nos) == 1 {
		return nos[0]
	}
	type reasons struct{ why, fix string }
	var order []reasons
	where := map[reasons][]string{}
	for i, no := range nos {
		m := "master " + addrs[i]
		r := reasons{strings.ReplaceAll(no.why, m, "\x00"), strings.ReplaceAll(no.fix, m, "\x00")}
		if _, ok := where[r]; !ok {
			order = append(order, r)
		}
		where[r] = append(where[r], addrs[i])
	}
	var whys, fixes []string
	settable := !slices.ContainsFunc(nos, func(no *noEvents) bool { return !no.settable })
	for _, r := range order {
		names := "master " + where[r][0]
		if w := where[r]; len(w) > 1 {
			names = "masters " + strings.Join(w[:len(w)-1], ", ") + " and " + w[len(w)-1]
		}
		whys = append(whys, strings.ReplaceAll(r.why, "\x00", names))
		if fix := strings.ReplaceAll(r.fix, "\x00", names); fix != "" && !slices.Contains(fixes, fix) {
			fixes = append(fixes, fix)
		}
	}
	return &noEvents{why: strings.Join(whys, "; "), fix: strings.Join(fixes, "; "), settable: settable}
}

// settingChange is notify-keyspace-events turned on at a master.
type settingChange struct{ where, was, now string }

// turnedOnNote says what notifications were turned on, the masters whose
// setting was the same together; "" when none were.
func turnedOnNote(changes []settingChange) string {
	type setting struct{ was, now string }
	var order []setting
	where := map[setting][]string{}
	for _, ch := range changes {
		s := setting{ch.was, ch.now}
		if _, ok := where[s]; !ok {
			order = append(order, s)
		}
		where[s] = append(where[s], ch.where)
	}
	notes := make([]string, len(order))
	for i, s := range order {
		at := ""
		switch w := where[s]; {
		case len(w) > 1:
			at = fmt.Sprintf(" at %d masters", len(w))
		case w[0] != "":
			at = " at " + w[0]
		}
		notes[i] = fmt.Sprintf("turned keyspace notifications on%s (notify-keyspace-events was %q, now %q)", at, s.was, s.now)
	}
	return strings.Join(notes, "; ")
}

// notificationsOff explains that node's notify-keyspace-events, set, lacks
// what countertop needs (nil when it does not), and how to fix it.
func (c *Client) notificationsOff(node *redis.Client, set string) *noEvents {
	missing := missingFlags(set)
	if missing == "" {
		return nil
	}
	server, on := "the server", ""
	if c.kind == cluster {
		server = "master " + node.Options().Addr
		on = " on " + server
	}
	why := fmt.Sprintf("keyspace notifications are off on %s (notify-keyspace-events=%q)", server, set)
	switch {
	case !strings.Contains(missing, keyspaceFlag) && missing != neededClasses:
		why = fmt.Sprintf("%s's keyspace notifications leave out events countertop needs (notify-keyspace-events=%q lacks %s)", server, set, missing)
	case strings.Contains(missing, keyspaceFlag) && strings.Contains(set, "E") && strings.ContainsFunc(set, func(r rune) bool { return r != 'K' && r != 'E' }):
		// E and a class send keyevent notifications, whose channels name
		// the event, not the key: such a setting is not off, and saying
		// so would read as a mistake.
		why = fmt.Sprintf("%s sends keyevent notifications but not the keyspace ones countertop follows (notify-keyspace-events=%q lacks %s)", server, set, missing)
	}
	want := set + missingOf(set, wantedFlags) // the classes of hashes, sorted sets and lists too
	return &noEvents{why: why, fix: "run with --enable-events or CONFIG SET notify-keyspace-events " + shellQuote(want) + on, settable: true}
}

// shellQuote returns a notify-keyspace-events value as the sentences that
// suggest it write it: in single quotes, so that a command pasted into a
// shell (redis-cli CONFIG SET notify-keyspace-events 'K$gxe') keeps the $
// and what follows it. Flags are letters and $; anything else is shown
// escaped (model.Printable), and a quote closes and reopens the quotes.
func shellQuote(value string) string {
	return "'" + strings.ReplaceAll(model.Printable(value), "'", `'\''`) + "'"
}

// passing matches the error replies that last a while only: a server busy
// with a script, loading its data, failing over, or a password changed
// under the connection. A CONFIG GET refused so is asked again (with the
// errors that are no reply at all); any other refusal is taken as final.
var passing = reply("BUSY ", "LOADING", "MASTERDOWN", "TRYAGAIN", "CLUSTERDOWN", "NOAUTH", "WRONGPASS", "invalid password", "invalid username-password pair")

// nodeNotifications reads notify-keyspace-events on node and, when enable
// allows, turns on the flags that are missing. It returns nil when
// notifications can be used there, with what it changed, if anything. Its
// error is one that says nothing about notifications (node could not be
// reached).
func (c *Client) nodeNotifications(ctx context.Context, node *redis.Client, enable bool) (*noEvents, *settingChange, error) {
	// In a cluster, say which master; a single server is "the server".
	where, server, on := "", "the server", ""
	if c.kind == cluster {
		where = "master " + node.Options().Addr
		server, on = where, " on "+where
	}
	conf, err := node.ConfigGet(ctx, "notify-keyspace-events").Result()
	set, reported := conf["notify-keyspace-events"]
	switch {
	case isReply(err) && !passing(err):
		// Not allowed for this user, turned off or not known (as managed
		// services and proxies answer): asking again would not help.
		no := &noEvents{why: fmt.Sprintf("%s does not allow CONFIG GET (%s), so countertop cannot tell whether keyspace notifications are on", server, reason(err))}
		if redis.HasErrorPrefix(err, "NOPERM") {
			no.fix = "grant the user CONFIG GET with ACL SETUSER <user> +config|get"
		}
		return no, nil, nil
	case err != nil:
		return nil, nil, c.explainAt(err, node.Options().Addr)
	case !reported:
		return &noEvents{why: server + " has no notify-keyspace-events setting, so countertop cannot tell whether keyspace notifications are on"}, nil, nil
	}
	missing := missingOf(set, wantedFlags)
	if missing == "" {
		return nil, nil, nil
	}
	want := set + missing // adds, removes nothing
	if !enable {
		return c.notificationsOff(node, set), nil, nil
	}
	// Where only the classes of other types than strings are missing,
	// events can be followed without them (their keys are polled): a
	// refusal to add them is no reason to stop.
	typesOnly := missingFlags(set) == ""
	fix := fmt.Sprintf("set notify-keyspace-events to %s in %s's config", shellQuote(want), server)
	if err := c.writable("CONFIG SET notify-keyspace-events " + shellQuote(want) + on); err != nil {
		if typesOnly {
			return nil, nil, nil
		}
		return &noEvents{why: err.Error(), fix: fix}, nil, nil
	}
	switch err := node.ConfigSet(ctx, "notify-keyspace-events", want).Err(); {
	case isReply(err) && typesOnly:
		return nil, nil, nil
	case isReply(err):
		return &noEvents{why: fmt.Sprintf("countertop could not turn keyspace notifications on%s (%s)", on, reason(err)), fix: fix}, nil, nil
	case err != nil:
		return nil, nil, c.explainAt(err, node.Options().Addr)
	}
	return nil, &settingChange{where: where, was: set, now: want}, nil
}

// checkSettings returns an errNoEvents error (noEvents.error()) when one of
// nodes, the masters, no longer sends the keyspace notifications
// countertop needs: someone turned them off while it watched. Changes would
// then show only at each full pass, under a header that says events as if
// all were well; the watcher stops instead, and Watch polls. A master that
// does not answer CONFIG GET now is passed over: a master lost is the
// subscriptions' news, and a refusal says nothing of the setting.
func (e *events) checkSettings(ctx context.Context, nodes []*redis.Client) error {
	var nos []*noEvents
	var without []string // the masters of nos
	for _, n := range nodes {
		var conf map[string]string
		err := e.w.c.onMaster(ctx, n.Options().Addr, func() (err error) { // a master that hangs is passed over at once
			conf, err = n.ConfigGet(ctx, "notify-keyspace-events").Result()
			return err
		})
		set, ok := conf["notify-keyspace-events"]
		if err != nil || !ok {
			continue
		}
		e.typesOff[n.Options().Addr] = missingOf(set, typeClasses)
		if no := e.w.c.notificationsOff(n, set); no != nil {
			nos, without = append(nos, no), append(without, n.Options().Addr)
		}
	}
	if len(nos) == 0 {
		e.pollTypes(nodes)
		return nil
	}
	return mergeNoEvents(nos, without).error()
}

// pollTypes has the keys of the types whose classes one of nodes, the
// masters, lacks (as last read) read every interval, and the header say so.
// A master that was not asked yet counts as lacking none: the first full
// pass asks every one.
func (e *events) pollTypes(nodes []*redis.Client) {
	var classes []byte
	for _, class := range []byte(typeClasses) {
		if slices.ContainsFunc(nodes, func(n *redis.Client) bool {
			return strings.IndexByte(e.typesOff[n.Options().Addr], class) >= 0
		}) {
			classes = append(classes, class)
		}
	}
	if e.w.rereads.poll(string(classes)) {
		e.typesAdded = true
	}
	e.w.polledNote = polledNote(string(classes), e.w.o.Interval)
	e.w.setNote()
}

// setNote makes the feed's Note of its parts (see pushWatcher.note).
func (w *pushWatcher) setNote() {
	w.note = joinNotes(w.polledNote, w.baseNote)
	w.state.Note = joinNotes(w.overflow, w.note)
}

// recheckSettings runs checkSettings on the masters as they are now, between
// full passes: notifications turned off show within recheckIntervals
// intervals, not at the next full pass, up to ResyncEvery away. Masters
// that cannot be listed now are looked at next time; the failure is left
// to the subscriptions and the reads, which tell it.
func (e *events) recheckSettings(ctx context.Context) error {
	nodes, err := e.w.c.masters(ctx)
	if err != nil {
		return nil
	}
	return e.checkSettings(ctx, nodes)
}
