package redisclient

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
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
// Redis's invalidations name (see openTracking), reading none that no
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

	// live: the watch has followed events or invalidations. A mode that
	// cannot work at start is a mistake to say before the screen opens;
	// once live, the user is better served by what auto does, said on
	// screen, than by a stop.
	live := false
	stopped := func(no *noEvents) error {
		err := no.error()
		r.state.Phase, r.state.LastError = model.FeedStopped, err.Error()
		_ = r.emit(ctx, model.Batch{})
		return err
	}
	for {
		var no *noEvents // why events cannot be used; nil when not tried
		if o.Mode != model.WatchTracking || live {
			nodes, n, note, err := r.checkNotifications(ctx, o.EnableEvents)
			if err != nil {
				return nil // ctx is done
			}
			if no = n; no == nil {
				w := newEventWatcher(r, o)
				opened, err := w.openAll(ctx, nodes)
				switch {
				case ctx.Err() != nil:
					return nil
				case refused(err):
					no = w.noChannels(err)
				default: // subscribed, or a master could not be reached: the watcher retries
					live = true
					if !w.run(ctx, nodes, opened, note) {
						return nil // ctx is done
					}
					// A master no longer sends the notifications: look again
					// (turning them on when allowed), and track or poll if they
					// are off.
					continue
				}
			}
			if o.Mode == model.WatchEvents && !live {
				return stopped(no)
			}
		}

		// Tracking: asked for, or in place of events.
		var nodes []*redis.Client
		if err := r.retry(ctx, func() (err error) { nodes, err = c.masters(ctx); return err }); err != nil {
			return nil // ctx is done
		}
		w := newTrackingWatcher(r, o)
		// In place of events whose setting someone may turn on again: back
		// to events then, which cost Redis less than tracking every prefix.
		w.eventsBack = o.Mode != model.WatchTracking && no != nil && no.settable
		opened, err := w.openAll(ctx, nodes)
		var tno *noEvents // why tracking cannot be used
		switch {
		case ctx.Err() != nil:
			return nil
		case refused(err):
			tno = w.noTracking(err)
			if o.Mode == model.WatchTracking && !live {
				return stopped(tno)
			}
			no = alsoNo(no, tno)
		default:
			live = true
			if !w.run(ctx, nodes, opened, trackingNote(no)) {
				return nil // ctx is done
			}
			continue // notifications on again, or tracking refused on subscribing again
		}

		// Polling. When only a setting is missing, it looks again now and
		// then (never changing it): once every master sends what countertop
		// needs, it watches live from then on.
		r.state.Note = no.note()
		r.recheck = nil
		if no.settable {
			r.recheck = func(ctx context.Context) bool {
				_, n, _, err := r.c.notifications(ctx, false)
				if err == nil && n != nil && n.settable {
					r.state.Note = alsoNo(n, tno).note() // the masters may have changed
				}
				return err == nil && n == nil
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
