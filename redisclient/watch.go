package redisclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// defaultResyncEvery is how often events mode re-reads everything when
// WatchOptions does not say.
const defaultResyncEvery = 30 * time.Second

// WatchOptions says what Watch watches and how it learns of changes.
type WatchOptions struct {
	PollOptions
	// Mode is how changes are followed: "auto" (the default) uses keyspace
	// notifications when the server sends the ones needed and polls
	// otherwise, saying why in FeedState.Note (and, when only the setting
	// is missing, going live once someone turns it on); "events" uses
	// notifications or fails at start, and once live falls back to polling
	// as auto does when they are turned off; "poll" polls.
	Mode string
	// EnableEvents allows Watch to turn the needed notifications on with
	// CONFIG SET when they are off, adding flags and removing none. Without
	// it Watch never changes the server's config.
	EnableEvents bool
	// ResyncEvery is how often events mode re-reads every key, to catch
	// what lost notifications did not tell (default 30s).
	ResyncEvery time.Duration

	healthEvery time.Duration // overrides defaultHealthEvery, for tests
	followEvery time.Duration // overrides defaultFollowEvery, for tests
}

func (o WatchOptions) withDefaults() WatchOptions {
	o.PollOptions = o.PollOptions.withDefaults()
	if o.Mode == "" {
		o.Mode = "auto"
	}
	if o.ResyncEvery <= 0 {
		o.ResyncEvery = defaultResyncEvery
	}
	return o
}

var errNoPatterns = explained("there is no key pattern to watch — pass --pattern or add a [[rule]] to the config", nil)

// Watch watches the keys matching o.Patterns, by keyspace notifications or
// by polling (see Poll) as o.Mode says, and sends what it reads to out
// until ctx is done, then returns nil. It returns an error at once when the
// options are wrong, and when o.Mode is "events" and notifications cannot
// be used at start, after sending that error as the feed's LastError (Mode
// "stopped"); once it has been live, it polls while they cannot.
//
// With notifications, it subscribes to the patterns' keyspace channels on
// every master (in a cluster, each sends only its own keys' events) and
// re-reads the keys that events name, a few milliseconds' worth at a time
// in one pipeline. As notifications can be lost, it also makes a full pass
// (SCAN, then read, sending Removed for keys that are gone) once subscribed,
// after every time it had to subscribe again, and every ResyncEvery. It
// follows failovers and added masters, subscribing to the new masters and
// dropping the old. The feed's Mode is "events" while every master is
// subscribed to and "reconnecting", with the reason in LastError, while one
// is not. Each full pass also reads the topology again, for the header.
//
// A master may stop sending the notifications while Watch follows them
// (someone turned them off, or a restart forgot a CONFIG SET): the watch
// would then show stale values under "events". Watch looks at the setting
// every recheckIntervals intervals, at each full pass and whenever it
// subscribes again, and as soon as a master lacks it, polls, saying why in
// the Note, in events mode as in auto, until every master has it again.
// With EnableEvents it turns them on again instead, as at start.
func (c *Client) Watch(ctx context.Context, o WatchOptions, out chan<- model.Batch) error {
	if len(o.Patterns) == 0 {
		return errNoPatterns
	}
	o = o.withDefaults()
	r := c.newReader(o.PollOptions, out)
	switch o.Mode {
	case "poll":
		r.poll(ctx)
		return nil
	case "auto", "events":
	default:
		return explained(fmt.Sprintf("%q is not a watch mode: use auto, events or poll", o.Mode), nil)
	}

	// live: the watch has followed events. An events mode that cannot work
	// at start is a mistake to say before the screen opens; once live, the
	// user is better served by polling, said on screen, than by a stop.
	live := false
	for {
		nodes, no, note, err := r.checkNotifications(ctx, o.EnableEvents)
		if err != nil {
			return nil // ctx is done
		}
		if no == nil {
			w := newEventWatcher(r, o)
			opened, err := w.openAll(ctx, nodes)
			switch {
			case ctx.Err() != nil:
				return nil
			case isReply(err):
				no = w.noChannels(err)
			default: // subscribed, or a master could not be reached: the watcher retries
				live = true
				if !w.run(ctx, nodes, opened, note) {
					return nil // ctx is done
				}
				// A master no longer sends the notifications: look again
				// (turning them on when allowed), and poll if they are off.
				continue
			}
		}
		if o.Mode == "events" && !live {
			err := no.error()
			r.state.Mode, r.state.LastError = "stopped", err.Error()
			_ = r.emit(ctx, model.Batch{})
			return err
		}
		// Polling. When only a setting is missing, it looks again now and
		// then (never changing it): once every master sends what countertop
		// needs, it watches live from then on.
		r.state.Note = no.note()
		r.recheck = nil
		if no.settable {
			r.recheck = func(ctx context.Context) bool {
				_, no, _, err := r.c.notifications(ctx, false)
				if err == nil && no != nil && no.settable {
					r.state.Note = no.note() // the masters may have changed
				}
				return err == nil && no == nil
			}
		}
		r.poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// recheckIntervals is how many poll intervals Watch lets pass before it
// looks at the masters' keyspace notifications again: while it polls
// because they could not be used, to go live once they can; while it
// follows them, to poll once they are off. One CONFIG GET per master every
// 5 s at the default interval.
const recheckIntervals = 5

// The notify-keyspace-events flags events mode needs: K (keyspace
// channels, which name the key) and the classes of every event that changes
// what a counter shows: $ string commands (set, incrby, incrbyfloat), g
// generic ones (del, rename, expire, persist), x expired and e evicted.
// Changes in other classes are left to the periodic re-scan.
const (
	keyspaceFlag  = "K"
	neededClasses = "$gxe"
	neededFlags   = keyspaceFlag + neededClasses
)

// missingFlags returns the flags of neededFlags that the setting set lacks.
// The flag A stands for every class; it does not include K.
func missingFlags(set string) string {
	var missing []byte
	for _, f := range []byte(neededFlags) {
		on := strings.IndexByte(set, f) >= 0 || f != keyspaceFlag[0] && strings.IndexByte(set, 'A') >= 0
		if !on {
			missing = append(missing, f)
		}
	}
	return string(missing)
}

// errNoEvents is the cause of noEvents.error(), so that the event watcher
// can tell a master that is up but does not send the notifications (found
// by its look at the setting, or by a subscriber subscribing again) apart
// from a subscription lost or a read that failed (errors.Is): it waits for
// those to come back, but polls in place of that.
var errNoEvents = errors.New("keyspace notifications cannot be used")

// noEvents says why keyspace notifications cannot be used and, when there
// is something the user can do about it, what. Both are sentence fragments.
type noEvents struct {
	why, fix string
	// settable: only a setting is missing, which someone may yet turn on;
	// not a refusal (of CONFIG GET, CONFIG SET or PSUBSCRIBE), which asking
	// again would only repeat.
	settable bool
}

// note is the feed's Note in auto mode, which polls instead.
func (no *noEvents) note() string {
	if no.fix == "" {
		return "polling: " + no.why
	}
	return "polling: " + no.why + "; " + no.fix + " to get live updates"
}

// error is the error of events mode, which cannot work.
func (no *noEvents) error() error {
	fix := "use --mode poll"
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
	var backoff time.Duration
	for {
		nodes, no, note, err = r.c.notifications(ctx, enable)
		if err == nil {
			return nodes, no, note, nil
		}
		r.failed(err)
		if err := r.emit(ctx, model.Batch{}); err != nil {
			return nil, nil, "", err
		}
		backoff = nextBackoff(backoff)
		select {
		case <-ctx.Done():
			return nil, nil, "", ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// notifications is one try of checkNotifications: the masters, why
// notifications cannot be used on those that cannot use them (one
// noEvents for all, see mergeNoEvents), and what was turned on. Its error is one that says nothing about notifications (a
// master could not be reached).
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

// mergeNoEvents is one noEvents for the masters at addrs, which each gave
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
	return &noEvents{why: why, fix: "run with --enable-events or CONFIG SET notify-keyspace-events " + shellQuote(set+missing) + on, settable: true}
}

// shellQuote is a notify-keyspace-events value as the sentences that
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
	missing := missingFlags(set)
	if missing == "" {
		return nil, nil, nil
	}
	want := set + missing // adds, removes nothing
	if !enable {
		return c.notificationsOff(node, set), nil, nil
	}
	fix := fmt.Sprintf("set notify-keyspace-events to %s in %s's config", shellQuote(want), server)
	if err := c.writable("CONFIG SET notify-keyspace-events " + shellQuote(want) + on); err != nil {
		return &noEvents{why: err.Error(), fix: fix}, nil, nil
	}
	switch err := node.ConfigSet(ctx, "notify-keyspace-events", want).Err(); {
	case isReply(err):
		return &noEvents{why: fmt.Sprintf("countertop could not turn keyspace notifications on%s (%s)", on, reason(err)), fix: fix}, nil, nil
	case err != nil:
		return nil, nil, c.explainAt(err, node.Options().Addr)
	}
	return nil, &settingChange{where: where, was: set, now: want}, nil
}

// isReply reports whether err is an error reply from Redis: the server is
// there and refused, as opposed to a failure to reach it.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

// reader reads keys for a watcher and sends what it read as Batches, along
// with the feed's state whenever that changed. It remembers which keys
// exist, so that a full pass can tell which are gone. Only one goroutine
// may use it.
type reader struct {
	c     *Client
	o     PollOptions
	out   chan<- model.Batch
	known map[string]struct{} // keys that existed when last read
	// mode is the state's Mode while reads succeed; outage is its
	// LastError meanwhile: why the feed is not healthy although Redis
	// answers reads (in events mode, a subscription that is down).
	mode, outage string
	state        model.FeedState // as it is now
	sent         model.FeedState // as the dashboard last received it
	// recheck, when set, tells poll to stop (it returns true) so that the
	// watch can go live: see Watch. poll calls it every recheckIntervals.
	recheck func(ctx context.Context) bool
	// topology is the topology being read in the background for the
	// header (see readTopology), nil when none is: a pass starts a read
	// unless one is under way, and takes it at its end (while a master
	// hangs, only if it is there).
	// topologyFrom is when that read began, and topologyAt when the one the
	// header shows began: an older read does not replace a newer.
	topology                 <-chan string
	topologyFrom, topologyAt time.Time
}

func (c *Client) newReader(o PollOptions, out chan<- model.Batch) *reader {
	return &reader{
		c:     c,
		o:     o,
		out:   out,
		known: make(map[string]struct{}),
		mode:  "connecting",
		state: model.FeedState{Mode: "connecting", Addr: c.addr, Topology: c.topology},
	}
}

// readTopology reads the topology in the background and sends it, for
// people, on the channel it returns: "" when it could not be read (a user
// not allowed to ask). A single server's never changes.
func (r *reader) readTopology(ctx context.Context) <-chan string {
	done := make(chan string, 1)
	if r.c.kind == standalone {
		done <- ""
		return done
	}
	go func() {
		t, err := r.c.Topology(ctx)
		if err != nil {
			done <- ""
			return
		}
		done <- t.String()
	}()
	return done
}

// fetch reads keys in pipelined chunks and sends each chunk as a Batch:
// keys that exist as Observed, keys that are gone as Removed. A chunk that
// came says Redis answers, except in a cluster during an outage: there the
// other masters' keys come while one master is down (see Client.fetch and
// advance), and the header must not say all is well between two failed
// reads. In a cluster an outage ends with a poll cycle, or a full pass,
// that read all it set out to, or, when settles is set (events' reads of
// the keys that changed), with a fetch that read every key. read says
// whether any key was read, even when err says that some were not.
func (r *reader) fetch(ctx context.Context, keys []string, settles bool) (read bool, err error) {
	err = r.c.fetch(ctx, keys, r.o.BatchSize, func(obs []model.Observation) error {
		read = true
		b := model.Batch{Observed: obs[:0]} // obs is ours: partition it in place
		for _, o := range obs {
			if o.PTTL == model.PTTLMissing {
				b.Removed = append(b.Removed, o.Key)
				delete(r.known, o.Key)
			} else {
				b.Observed = append(b.Observed, o)
				r.known[o.Key] = struct{}{}
			}
		}
		if r.state.LastError == r.outage || r.c.kind != cluster {
			r.healthy()
		} else {
			r.state.UpdatedAt = time.Now()
		}
		return r.emit(ctx, b)
	})
	if err == nil && read && settles && r.state.LastError != r.outage {
		r.healthy()
		err = r.emit(ctx, model.Batch{})
	}
	return read, err
}

// healthy records that Redis just answered.
func (r *reader) healthy() {
	r.state.Mode = r.mode
	r.state.Connected = true
	r.state.LastError = r.outage
	r.state.UpdatedAt = time.Now()
}

// failed records err, already explained. An error reply means Redis is
// there but refused (NOPERM, LOADING, ...); anything else means it could
// not be reached.
func (r *reader) failed(err error) {
	r.state.Connected = isReply(err)
	if !r.state.Connected {
		r.state.Mode = "reconnecting"
	}
	r.state.LastError = err.Error()
	// A server that answered before is not at a wrong address, as Explain
	// must allow at connect time: say what it is doing instead.
	addr := r.c.hostPort
	if op := as[*net.OpError](err); op != nil && op.Addr != nil {
		addr = op.Addr.String()
	}
	// (A cluster's or Sentinel's sentences name the node and what follows
	// for its slots or its master already.)
	switch answered := !r.state.UpdatedAt.IsZero() && r.c.kind == standalone; {
	case answered && isTimeout(err):
		r.state.LastError = fmt.Sprintf("%s stopped answering: it may be busy with a slow command or a save, or frozen — countertop keeps trying, and the values shown are as last read", addr)
	case answered && errors.Is(err, syscall.ECONNREFUSED):
		r.state.LastError = fmt.Sprintf("could not connect to %s: connection refused — it answered before, so it is restarting or was stopped; countertop keeps trying, and the values shown are as last read", addr)
	case answered && r.state.Connected:
		// Redis answers, but refuses the reads (a password changed under
		// the connection, an ACL tightened): the rows are as stale as in an
		// outage, though the header does not say reconnecting.
		r.state.LastError = strings.TrimSuffix(r.state.LastError, ".") + "; countertop keeps trying, and the values shown are as last read"
	}
	r.state.Scanning = false
}

// outageTopologyTimeout bounds the read of the topology after a failure:
// a node that does not answer within it is counted down.
const outageTopologyTimeout = time.Second

// rereadTopology reads the topology again after a failure, for the header:
// in a cluster or behind Sentinel, a failure is often a node that went
// down, and the header says so while no full pass can end. A topology that
// cannot be read leaves the last one.
func (r *reader) rereadTopology(ctx context.Context) {
	if r.c.kind == standalone {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, outageTopologyTimeout)
	defer cancel()
	from := time.Now()
	if t, err := r.c.Topology(ctx); err == nil {
		r.setTopology(t.String(), from)
	}
}

// setTopology shows t, a topology read that began at from, in the header,
// unless it is empty (it could not be read) or the header shows one read
// since.
func (r *reader) setTopology(t string, from time.Time) {
	if t != "" && !from.Before(r.topologyAt) {
		r.state.Topology, r.topologyAt = t, from
	}
}

// emit sends b, with the feed's state when it changed since last sent;
// nothing when there is nothing to say. It gives up when ctx is done.
func (r *reader) emit(ctx context.Context, b model.Batch) error {
	if r.state != r.sent {
		s := r.state
		b.State = &s
		r.sent = s
	}
	if len(b.Observed) == 0 && len(b.Removed) == 0 && b.State == nil {
		return nil
	}
	select {
	case r.out <- b:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
