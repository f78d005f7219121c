package redisclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
)

// defaultResyncEvery is WatchOptions.ResyncEvery when it does not say.
const defaultResyncEvery = 30 * time.Second

// WatchOptions says what Watch watches and how it learns of changes.
type WatchOptions struct {
	PollOptions
	// Mode is how changes are followed: events (keyspace notifications),
	// tracking (client tracking, Redis 6 and later), poll, or auto (the
	// zero value): events when the server sends the notifications needed,
	// else tracking when the server and the user allow it, else polling,
	// saying why in FeedState.Note (and, when only the notifications'
	// setting is missing, following events once someone turns it on, from
	// tracking as from polling). Events or tracking that cannot be used at
	// start fail; once live, they do what auto does.
	Mode model.WatchMode
	// EnableEvents allows Watch to turn the needed notifications on with
	// CONFIG SET when they are off, adding flags and removing none. Without
	// it Watch never changes the server's config.
	EnableEvents bool
	// ResyncEvery is how often events and tracking modes scan for keys
	// made or gone that no message named, re-reading every key one time
	// in fullEvery, to catch what a lost message did not tell (default 30s).
	ResyncEvery time.Duration

	healthEvery time.Duration // overrides defaultHealthEvery, for tests
	followEvery time.Duration // overrides defaultFollowEvery, for tests
}

// withDefaults returns o with every unset field at its default.
func (o WatchOptions) withDefaults() WatchOptions {
	o.PollOptions = o.PollOptions.withDefaults()
	if o.ResyncEvery <= 0 {
		o.ResyncEvery = defaultResyncEvery
	}
	return o
}

// errNoPatterns is the error of a watch given no pattern.
var errNoPatterns = explained("there is no key pattern to watch — pass --pattern or add a [[rule]] to the config", nil)

// pushKinds are the push modes, in the order auto tries them: events cost
// Redis less than tracking every prefix.
var pushKinds = []pushKind{eventsKind, trackingKind}

// Watch watches the keys matching o.Patterns, by keyspace notifications,
// by client tracking or by polling (see Poll) as o.Mode says, and sends
// what it reads to out until ctx is done, then returns nil. It returns an
// error at once when the options are wrong, and when o.Mode is events or
// tracking and that cannot be used at start, after sending that error
// as the feed's LastError (Phase stopped); once it has been live, it
// does what auto does while they cannot.
//
// With notifications, it subscribes to the patterns' keyspace channels on
// every master (in a cluster, each sends only its own keys' events) and
// re-reads the keys that events name, a few milliseconds' worth at a time
// in one pipeline. With tracking, it does the same with the keys that
// Redis's invalidations name (see tracking.open), reading none that no
// pattern matches, and makes a full pass when a master says it was
// flushed. As messages can be lost, it also makes a full pass (SCAN, then
// read, sending Removed for keys that are gone) once subscribed, after
// every time it had to subscribe again, and every ResyncEvery. It follows
// failovers and added masters, subscribing to the new masters and
// dropping the old. The feed's Mode is events (or tracking), watching
// while every master is subscribed to and reconnecting, with the reason
// in LastError, while one is not. Each full pass also reads the topology
// again, for the header.
//
// A master may stop sending the notifications while Watch follows them
// (someone turned them off, or a restart forgot a CONFIG SET): the watch
// would then show stale values under "events". Watch looks at the setting
// every recheckIntervals intervals, at each full pass and whenever it
// subscribes again, and as soon as a master lacks it, does what auto
// does, saying why in the Note, until every master has it again. With
// EnableEvents it turns them on again instead, as at start.
func (c *Client) Watch(ctx context.Context, o WatchOptions, out chan<- model.Batch) error {
	if len(o.Patterns) == 0 {
		return errNoPatterns
	}
	o = o.withDefaults()
	if !o.Mode.Valid() {
		return explained(fmt.Sprintf("%v is not a watch mode: use %s", o.Mode, strings.Join(model.WatchModeNames(), ", ")), nil)
	}
	r := c.newReader(o.PollOptions, out)
	r.mode, r.state.Mode = o.Mode, o.Mode
	defer c.heartbeat(ctx, o.Interval, r.started, out, r.lag, &r.evictions)()
	if o.Mode == model.WatchPoll {
		r.poll(ctx)
		return nil
	}

	// live: the watch has followed a push mode. A mode that cannot work at
	// start is a mistake to say before the screen opens; once live, the
	// user is better served by what auto does, said on screen, than by a
	// stop.
	live := false
	stopped := func(no *noEvents) error {
		err := no.error()
		r.state.Phase, r.state.LastError = model.FeedStopped, err.Error()
		_ = r.emit(ctx, model.Batch{})
		return err
	}
watching:
	for {
		var refusals []refusal // the push modes that cannot be used, in auto's order
		for _, k := range pushKinds {
			if !live && o.Mode != model.WatchAuto && o.Mode != k.mode {
				continue // a push mode asked for, not yet followed: that one alone
			}
			prior := whyNot(refusals)
			nodes, no, note, err := k.start(ctx, r, o, prior)
			if err != nil {
				return nil // ctx is done
			}
			if no == nil {
				w := k.watcher(r, o)
				// In place of a mode that only a setting keeps from being
				// used, which someone may turn on again: back to it then,
				// unless this one was asked for.
				if o.Mode != k.mode {
					w.back = c.preferred(refusals)
				}
				opened, err := w.openAll(ctx, nodes)
				switch {
				case ctx.Err() != nil:
					return nil
				case refused(err):
					no = w.push.refused(err)
				default: // subscribed, or a master could not be reached: the watcher retries
					live = true
					if !w.run(ctx, nodes, opened, note) {
						return nil // ctx is done
					}
					// A master no longer gives what the mode needs, or a
					// mode auto prefers can be used again: look again.
					continue watching
				}
			}
			if o.Mode == k.mode && !live {
				return stopped(no)
			}
			refusals = append(refusals, refusal{k, no})
		}

		// Polling. When only a setting is missing, it looks again now and
		// then (never changing it): once every master gives what a mode
		// needs, it watches live from then on.
		r.state.Note = whyNot(refusals).note()
		r.recheck = nil
		if back := c.preferred(refusals); back != nil {
			r.recheck = func(ctx context.Context) bool {
				if back(ctx) {
					return true
				}
				r.state.Note = whyNot(refusals).note() // the masters may have changed
				return false
			}
		}
		r.poll(ctx)
		if ctx.Err() != nil {
			return nil
		}
	}
}

// refusal is a push mode that cannot be used, and why.
type refusal struct {
	kind pushKind
	no   *noEvents
}

// whyNot returns one noEvents that says why none of the modes of refusals
// can be used; nil when there are none.
func whyNot(refusals []refusal) *noEvents {
	var no *noEvents
	for _, f := range refusals {
		no = alsoNo(no, f.no)
	}
	return no
}

// errPreferred is how a watcher standing in for a mode auto prefers (see
// pushWatcher.back) stops once that one can be used again.
var errPreferred = errors.New("a watch mode auto prefers can be used again")

// preferred returns a look at the modes of refusals that a setting alone
// keeps from being used (a setting someone may turn on): it reports
// whether one of them can be used now, and keeps refusals' reasons up to
// date meanwhile, the masters having changed maybe. One CONFIG GET per
// master for events, which the budget counts like any other command; a
// master that cannot be asked now is asked next time. It returns nil when
// no mode of refusals is kept by a setting alone.
func (c *Client) preferred(refusals []refusal) func(ctx context.Context) bool {
	if !slices.ContainsFunc(refusals, settable) {
		return nil
	}
	return func(ctx context.Context) bool {
		for i, f := range refusals {
			if !settable(f) {
				continue
			}
			no, err := f.kind.look(ctx, c)
			switch {
			case err != nil:
			case no == nil:
				return true
			case no.settable:
				refusals[i].no = no
			}
		}
		return false
	}
}

// settable reports whether a setting alone keeps f's mode from being used.
func settable(f refusal) bool { return f.no.settable && f.kind.look != nil }

// recheckIntervals is how many poll intervals Watch lets pass before it
// looks at the masters' keyspace notifications again: while it polls
// because they could not be used, to go live once they can; while it
// follows them, to poll once they are off. One CONFIG GET per master every
// 5 s at the default interval.
const recheckIntervals = 5
