package redisclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
	// otherwise, saying why in FeedState.Note; "events" uses notifications
	// or fails; "poll" polls.
	Mode string
	// EnableEvents allows Watch to turn the needed notifications on with
	// CONFIG SET when they are off, adding flags and removing none. Without
	// it Watch never changes the server's config.
	EnableEvents bool
	// ResyncEvery is how often events mode re-reads every key, to catch
	// what lost notifications did not tell (default 30s).
	ResyncEvery time.Duration

	healthEvery time.Duration // overrides defaultHealthEvery, for tests
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
// be used, after sending that error as the feed's LastError (Mode
// "stopped").
//
// With notifications, it subscribes to the patterns' keyspace channels and
// re-reads the keys that events name, a few milliseconds' worth at a time
// in one pipeline. As notifications can be lost, it also makes a full pass
// (SCAN, then read, sending Removed for keys that are gone) once subscribed,
// after every time it had to subscribe again, and every ResyncEvery. The
// feed's Mode is "events" while subscribed and "reconnecting", with the
// reason in LastError, while not.
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

	no, note, err := r.checkNotifications(ctx, o.EnableEvents)
	if err != nil {
		return nil // ctx is done
	}
	if no == nil {
		w := newEventWatcher(r, o)
		ps, err := w.open(ctx, c.rdb)
		switch {
		case ctx.Err() != nil:
			return nil
		case isReply(err):
			no = &noEvents{
				why: fmt.Sprintf("the Redis user may not subscribe to keyspace notifications (%s)", reason(err)),
				fix: fmt.Sprintf("grant the user their channels with ACL SETUSER <user> &__keyspace@%d__:*", c.db()),
			}
		default: // subscribed, or Redis could not be reached: the watcher retries
			w.run(ctx, ps, note)
			return nil
		}
	}
	if o.Mode == "events" {
		err := no.error()
		r.state.Mode, r.state.LastError = "stopped", err.Error()
		_ = r.emit(ctx, model.Batch{})
		return err
	}
	r.state.Note = no.note()
	r.poll(ctx)
	return nil
}

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

// noEvents says why keyspace notifications cannot be used and, when there
// is something the user can do about it, what. Both are sentence fragments.
type noEvents struct{ why, fix string }

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
	return explained(no.why+" — "+fix, nil)
}

// checkNotifications reads notify-keyspace-events and, when enable allows,
// turns on the flags that are missing. It returns nil when notifications
// can be used, with a note for the feed when it changed the setting. While
// Redis cannot be reached it reports that in the feed's state and retries;
// its error is ctx's.
func (r *reader) checkNotifications(ctx context.Context, enable bool) (no *noEvents, note string, err error) {
	var backoff time.Duration
	for {
		no, note, err = r.c.notifications(ctx, enable)
		if err == nil {
			return no, note, nil
		}
		r.failed(err)
		if err := r.emit(ctx, model.Batch{}); err != nil {
			return nil, "", err
		}
		backoff = nextBackoff(backoff)
		select {
		case <-ctx.Done():
			return nil, "", ctx.Err()
		case <-time.After(backoff):
		}
	}
}

// notifications is one try of checkNotifications. Its error is one that
// says nothing about notifications (Redis could not be reached).
func (c *Client) notifications(ctx context.Context, enable bool) (*noEvents, string, error) {
	conf, err := c.rdb.ConfigGet(ctx, "notify-keyspace-events").Result()
	set, reported := conf["notify-keyspace-events"]
	switch {
	case isReply(err):
		no := &noEvents{why: fmt.Sprintf("the server does not allow CONFIG GET (%s), so countertop cannot tell whether keyspace notifications are on", reason(err))}
		if redis.HasErrorPrefix(err, "NOPERM") {
			no.fix = "grant the user CONFIG GET with ACL SETUSER <user> +config|get"
		}
		return no, "", nil
	case err != nil:
		return nil, "", c.explain(err)
	case !reported:
		return &noEvents{why: "the server has no notify-keyspace-events setting, so countertop cannot tell whether keyspace notifications are on"}, "", nil
	}
	missing := missingFlags(set)
	if missing == "" {
		return nil, "", nil
	}
	want := set + missing // adds, removes nothing
	if !enable {
		why := fmt.Sprintf("keyspace notifications are off on the server (notify-keyspace-events=%q)", set)
		if !strings.Contains(missing, keyspaceFlag) && missing != neededClasses {
			why = fmt.Sprintf("the server's keyspace notifications leave out events countertop needs (notify-keyspace-events=%q lacks %s)", set, missing)
		}
		return &noEvents{why: why, fix: "run with --enable-events or CONFIG SET notify-keyspace-events " + model.Printable(want)}, "", nil
	}
	fix := fmt.Sprintf("set notify-keyspace-events to %s in the server's config", model.Printable(want))
	if err := c.writable("CONFIG SET notify-keyspace-events " + model.Printable(want)); err != nil {
		return &noEvents{why: err.Error(), fix: fix}, "", nil
	}
	switch err := c.rdb.ConfigSet(ctx, "notify-keyspace-events", want).Err(); {
	case isReply(err):
		return &noEvents{why: fmt.Sprintf("countertop could not turn keyspace notifications on (%s)", reason(err)), fix: fix}, "", nil
	case err != nil:
		return nil, "", c.explain(err)
	}
	return nil, fmt.Sprintf("turned keyspace notifications on (notify-keyspace-events was %q, now %q)", set, want), nil
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

// discover runs one SCAN pass, reading and sending the keys of each page,
// then reads the known keys the pass did not find, so that deleted keys are
// sent as Removed.
func (r *reader) discover(ctx context.Context) error {
	r.state.Scanning, r.state.Seen, r.state.Matched = true, 0, 0
	if err := r.emit(ctx, model.Batch{}); err != nil {
		return err
	}
	pass := newScanPass()
	err := r.c.scan(ctx, r.c.rdb, r.o.Patterns, r.o.ScanCount, pass, func(keys []string) error {
		r.state.Seen, r.state.Matched = pass.returned, int64(len(pass.found))
		return r.fetch(ctx, keys)
	})
	if err != nil {
		return err
	}
	r.state.Seen, r.state.Matched = pass.returned, int64(len(pass.found))
	r.state.Scanning = false
	r.healthy()

	// SCAN returns every key that existed for the whole pass, so a known key
	// it missed was deleted, or replaced during the pass: reading it tells.
	var missed []string
	for k := range r.known {
		if _, ok := pass.found[k]; !ok {
			missed = append(missed, k)
		}
	}
	if err := r.fetch(ctx, missed); err != nil {
		return err
	}
	return r.emit(ctx, model.Batch{})
}

// fetch reads keys in pipelined chunks and sends each chunk as a Batch:
// keys that exist as Observed, keys that are gone as Removed.
func (r *reader) fetch(ctx context.Context, keys []string) error {
	return r.c.fetch(ctx, keys, r.o.BatchSize, func(obs []model.Observation) error {
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
		r.healthy()
		return r.emit(ctx, b)
	})
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
	r.state.Scanning = false
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
