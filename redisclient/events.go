package redisclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

const (
	// coalesceWindow is how long changed keys may gather before they are
	// read again in one pipeline: far below what a person can see, and
	// long enough that a burst of events costs a few round trips instead of
	// one per event.
	coalesceWindow = 5 * time.Millisecond
	// defaultHealthEvery is how long a subscription may stay silent before
	// it is pinged, and how long the ping may then go unanswered before the
	// connection is taken for dead.
	defaultHealthEvery = 5 * time.Second
	// subscribeTimeout bounds the wait for PSUBSCRIBE's confirmations.
	subscribeTimeout = 10 * time.Second
	// statusBuffer is how much news from subscribers can wait for a
	// reader that is busy with a full pass.
	statusBuffer = 16
	// defaultFollowEvery is how often, in a cluster or behind Sentinel,
	// the reader asks which servers are masters: a failover that broke no
	// connection (the old master runs on as a replica) moves the
	// subscription within seconds.
	defaultFollowEvery = 5 * time.Second
)

// eventWatcher follows changes through keyspace notifications.
//
// A subscriber per master (a single Redis has one, a cluster one per
// master: each server sends notifications only for its own keys) puts the
// keys that events name into a changeSet and never waits for the reader.
// One reader (the read loop) re-reads those keys in coalesced pipelines,
// whatever the event was: a read is the truth about a key (a del, an expiry
// or an eviction reads as gone; a del and a new SET in one window read as
// the new key), and costs little. Notifications are fire and forget, so the
// reader also makes a full pass (SCAN, then read) once the first
// subscriptions are made, after every subscription made later, and every
// ResyncEvery.
//
// The reader also keeps the subscribers in step with the masters: it asks
// which servers are masters before each full pass, whenever a subscription
// is lost, and (in a cluster or behind Sentinel) every followEvery, since a
// failover can leave the old master running as a replica without breaking
// any connection. It subscribes to new masters and drops the servers that
// are masters no longer.
//
// Events can only be followed while every master sends them. The reader
// reads the masters' notify-keyspace-events every recheckIntervals poll
// intervals and at each full pass, and a subscriber checks it each time it
// subscribes again; when a master lacks what countertop needs, the watcher
// stops, and Watch polls (see Watch).
type eventWatcher struct {
	*reader
	resyncEvery time.Duration
	healthEvery time.Duration
	followEvery time.Duration
	enable      bool     // turn missing notifications on (--enable-events), on masters found later too
	prefix      string   // "__keyspace@<db>__:", which precedes the key in a channel's name
	channels    []string // the patterns' channels, each once
	changed     *changeSet
	status      chan subStatus
	subs        map[string]*subscriber // the masters followed, by address
	down        map[string]string      // master -> why its subscription is down
	flushes     map[string]int64       // master -> its FLUSHDB, FLUSHALL and SWAPDB count when last asked, -1 if it refused
	settling    int                    // followMasters calls left that read the topology again, after the masters changed
	wg          sync.WaitGroup         // the subscribers
}

// subscriber keeps a subscription to one master.
type subscriber struct {
	node   string // its address
	client *redis.Client
	stop   context.CancelFunc
	missed bool // the last read of the masters left it out
}

// subStatus is news from a subscriber: its subscription was made
// (err == nil) or lost.
type subStatus struct {
	sub *subscriber
	err error
}

func newEventWatcher(r *reader, o WatchOptions) *eventWatcher {
	prefix := fmt.Sprintf("__keyspace@%d__:", r.c.db())
	channels := make([]string, len(o.Patterns))
	for i, p := range o.Patterns {
		channels[i] = prefix + p // the channel glob's * and ? apply to the key
	}
	slices.Sort(channels)
	return &eventWatcher{
		reader:      r,
		resyncEvery: o.ResyncEvery,
		healthEvery: cmp.Or(o.healthEvery, defaultHealthEvery),
		followEvery: cmp.Or(o.followEvery, defaultFollowEvery),
		enable:      o.EnableEvents,
		prefix:      prefix,
		channels:    slices.Compact(channels),
		changed:     newChangeSet(),
		status:      make(chan subStatus, statusBuffer),
		subs:        make(map[string]*subscriber),
		down:        make(map[string]string),
		flushes:     make(map[string]int64),
	}
}

// db is the number of the database the client reads: keyspace channels
// are named after it.
func (c *Client) db() int {
	if rc, ok := c.rdb.(*redis.Client); ok {
		return rc.Options().DB
	}
	return 0 // a cluster has database 0 only
}

// noChannels is why events cannot be used when subscribing was refused
// with err.
func (w *eventWatcher) noChannels(err error) *noEvents {
	grant := make([]string, len(w.channels))
	for i, ch := range w.channels {
		grant[i] = "&" + model.Printable(ch)
	}
	fix := "grant the user their channels with ACL SETUSER <user> " + strings.Join(grant, " ")
	if w.c.kind == cluster {
		fix += " on every node"
	}
	return &noEvents{why: fmt.Sprintf("the Redis user may not subscribe to keyspace notifications (%s)", reason(err)), fix: fix}
}

// openAll subscribes on each of nodes, and returns the subscriptions made
// by address. Its error is the first error reply, a refusal (NOPERM on the
// channels) that subscribing again would meet too; it then closes what it
// opened. A node that could not be reached is left to its subscriber,
// which retries.
func (w *eventWatcher) openAll(ctx context.Context, nodes []*redis.Client) (map[string]*redis.PubSub, error) {
	opened := make(map[string]*redis.PubSub, len(nodes))
	for _, n := range nodes {
		ps, err := w.open(ctx, n)
		if isReply(err) || ctx.Err() != nil {
			for _, ps := range opened {
				ps.Close()
			}
			return nil, cmp.Or(ctx.Err(), err)
		}
		if err == nil {
			opened[n.Options().Addr] = ps
		}
	}
	return opened, nil
}

// run watches until ctx is done, and returns false; or until a master no
// longer sends the notifications countertop needs, and returns true once
// its subscribers have stopped, so that Watch can poll in its place. nodes
// are the masters and opened the subscriptions already made to them, by
// address; note, when not "", goes first in the feed's Note.
func (w *eventWatcher) run(ctx context.Context, nodes []*redis.Client, opened map[string]*redis.PubSub, note string) (off bool) {
	w.state.Note = "full re-scan every " + model.FormatDuration(w.resyncEvery) + ", in case an event was lost"
	if note != "" {
		w.state.Note = note + "; " + w.state.Note
	}
	ctx, stop := context.WithCancel(ctx) // stops the subscribers when the reader stops
	defer stop()
	w.follow(ctx, nodes, opened)
	off = w.read(ctx) != nil
	stop()
	w.wg.Wait()
	return off
}

// read is the reader's loop. It makes the first full pass, then re-reads
// the keys events named, makes a full pass when one is due, and follows the
// masters, until ctx is done; then it returns nil. After a failure it waits
// with backoff, then makes a full pass: what it failed to read may have
// changed since. It returns an errNoEvents error as soon as a master is
// found not to send the notifications needed.
func (w *eventWatcher) read(ctx context.Context) error {
	resync := time.NewTimer(w.resyncEvery)
	defer resync.Stop()
	settings := time.NewTicker(recheckIntervals * w.o.Interval)
	defer settings.Stop()
	flushCheck := time.NewTicker(w.o.Interval)
	defer flushCheck.Stop()
	var check <-chan time.Time // a single server's master never changes
	if w.c.kind != standalone {
		t := time.NewTicker(w.followEvery)
		defer t.Stop()
		check = t.C
	}
	var (
		due     = true           // a full pass is due
		retry   <-chan time.Time // set while waiting after a failure
		backoff time.Duration
	)
	for {
		var err error
		if due && retry == nil {
			if err = w.pass(ctx); err == nil {
				due, backoff = false, 0
				resync.Reset(w.resyncEvery)
			}
		}
		if err == nil {
			var again bool // a full pass is now due
			select {
			case <-ctx.Done():
				return nil
			case s := <-w.status:
				again, err = w.subscription(ctx, s)
			case <-check:
				err = w.followMasters(ctx)
			case <-settings.C:
				err = w.recheckSettings(ctx)
			case <-flushCheck.C:
				again = !due && retry == nil && w.flushed(ctx)
			case <-w.changed.ready:
				err = w.readChanged(ctx)
			case <-resync.C:
				again = true
			case <-retry:
				retry = nil
			}
			due = due || again
		}
		if err != nil {
			switch {
			case ctx.Err() != nil:
				return nil
			case errors.Is(err, errNoEvents):
				return err
			}
			due = true
			backoff = nextBackoff(backoff)
			retry = time.After(backoff)
			w.failed(err)
			w.rereadTopology(ctx)
			if w.emit(ctx, model.Batch{}) != nil {
				return nil
			}
		}
	}
}

// flushed reports whether keys the watcher knows were taken without a
// keyspace event: FLUSHDB, FLUSHALL and SWAPDB send none, and the rows of
// the keys they took would stay on screen until the next full pass, up to
// ResyncEvery away. A master's count of those commands (INFO
// commandstats) tells that one ran since it was last asked. INFO cannot
// tell on which database, nor whether it failed, so the masters' key
// counts (DBSIZE) must then have fallen below the keys known: a flush of
// another database, or a SWAPDB that failed, starts no pass. (Key counts alone would not do: keys
// that expire or are evicted while their events are on the way keep them
// short of the keys known.)
//
// A master that does not answer in time is asked again next interval, and
// so are all when the keys could not be counted in time; one that refuses
// INFO (NOPERM: an ACL user without it) is not asked again, so as not to
// fill its ACL LOG, and leaves flushes to the full passes.
func (w *eventWatcher) flushed(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, w.o.Interval/2) // the events wait meanwhile
	defer cancel()
	counts := make(map[string]int64, len(w.subs))
	ran := false
	for addr, s := range w.subs {
		last, asked := w.flushes[addr]
		if last < 0 {
			continue // refused
		}
		var n int64
		err := w.c.onMaster(ctx, addr, func() (err error) { // a master that hangs is not waited for
			n, err = flushes(ctx, s.client)
			return err
		})
		switch {
		case redis.HasErrorPrefix(err, "NOPERM"):
			w.flushes[addr] = -1
		case err != nil:
		default:
			ran = ran || asked && n != last
			counts[addr] = n
		}
	}
	pass := false
	if ran {
		var size int64
		for addr, s := range w.subs {
			var n int64
			err := w.c.onMaster(ctx, addr, func() (err error) {
				n, err = s.client.DBSize(ctx).Result()
				return err
			})
			switch {
			case isReply(err):
				pass = true // the keys cannot be counted: a pass is the safe side
			case err != nil:
				return false // no answer in time: ask again next interval
			}
			size += n
		}
		pass = pass || size < int64(len(w.known))
	}
	maps.Copy(w.flushes, counts)
	return pass
}

// flushes is how many FLUSHDB, FLUSHALL and SWAPDB commands node has run,
// from INFO commandstats (failed calls too: flushed checks the keys).
func flushes(ctx context.Context, node *redis.Client) (int64, error) {
	info, err := node.Info(ctx, "commandstats").Result()
	if err != nil {
		return 0, err
	}
	var n int64
	for line := range strings.Lines(info) {
		for _, name := range []string{"cmdstat_flushdb:calls=", "cmdstat_flushall:calls=", "cmdstat_swapdb:calls="} {
			if rest, ok := strings.CutPrefix(line, name); ok {
				calls, _, _ := strings.Cut(rest, ",")
				c, err := strconv.ParseInt(calls, 10, 64)
				if err != nil {
					return 0, fmt.Errorf("INFO commandstats: %q", line)
				}
				n += c
			}
		}
	}
	return n, nil
}

// pass follows the masters as they are now, checks that they still send
// the notifications countertop needs, then makes a full pass.
func (w *eventWatcher) pass(ctx context.Context) error {
	nodes, err := w.c.masters(ctx)
	if err != nil {
		return err
	}
	if w.follow(ctx, nodes, nil) {
		w.settling = 3 // see followMasters
	}
	if err := w.checkSettings(ctx, nodes); err != nil {
		return err
	}
	w.flushed(ctx) // the pass reads what a flush did: only the counts matter here
	return w.discover(ctx)
}

// followMasters asks which servers are masters now and follows them (see
// follow). Once the masters changed, it reads the topology for the header
// at this call and the next two: the pass the change brings may have read
// it in the middle of the failover (the old master and the new both
// masters), and the next pass is a resync away.
func (w *eventWatcher) followMasters(ctx context.Context) error {
	nodes, err := w.c.masters(ctx)
	if err != nil {
		return err
	}
	if w.follow(ctx, nodes, nil) {
		w.settling = 3
	}
	if w.settling > 0 {
		w.settling--
		w.rereadTopology(ctx)
		return w.emit(ctx, model.Batch{})
	}
	return nil
}

// follow subscribes to each of nodes that is not followed yet (a promoted
// replica, an added master, a server whose client go-redis replaced), using
// the subscription in opened when there is one, and unsubscribes from the
// servers that the last two reads of the masters left out. While a failover
// spreads through a cluster, a node may still answer with the old masters:
// keeping the old master's subscription a little longer (as a replica, it
// only repeats its master's events) keeps a stale answer from undoing the
// move. Each new subscription, once made, brings a full pass; keys that
// moved off a server dropped are on one that is followed. It reports
// whether it subscribed or unsubscribed.
func (w *eventWatcher) follow(ctx context.Context, nodes []*redis.Client, opened map[string]*redis.PubSub) (changed bool) {
	current := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		addr := n.Options().Addr
		current[addr] = true
		if s := w.subs[addr]; s != nil && s.client == n {
			s.missed = false
			continue
		}
		w.unfollow(addr)
		changed = true
		sctx, stop := context.WithCancel(ctx)
		s := &subscriber{node: addr, client: n, stop: stop}
		w.subs[addr] = s
		ps := opened[addr]
		w.wg.Go(func() { w.subscribe(sctx, s, ps) })
	}
	for addr, s := range w.subs {
		switch {
		case current[addr]:
		case s.missed:
			w.unfollow(addr)
			changed = true
		default:
			s.missed = true
		}
	}
	w.updateMode()
	return changed
}

// unfollow stops the subscriber of addr, if any, and forgets it.
func (w *eventWatcher) unfollow(addr string) {
	if s := w.subs[addr]; s != nil {
		s.stop()
		delete(w.subs, addr)
		delete(w.down, addr)
	}
}

// updateMode sets the feed's mode while reads succeed: events while every
// subscription is up; reconnecting, with why one is down, otherwise.
func (w *eventWatcher) updateMode() {
	w.mode, w.outage = "events", ""
	if len(w.down) > 0 {
		first := slices.Min(slices.Collect(maps.Keys(w.down)))
		w.mode, w.outage = "reconnecting", w.down[first]
	}
}

// subscription records a subscriber's news in the feed's state and reports
// whether a full pass is now due: a subscription was made.
func (w *eventWatcher) subscription(ctx context.Context, s subStatus) (due bool, err error) {
	if w.subs[s.sub.node] != s.sub {
		return false, nil // from a server no longer followed
	}
	if errors.Is(s.err, errNoEvents) {
		// Up, but without the notifications (restarted without a CONFIG
		// SET, a replica promoted): not a subscription to wait for.
		return false, s.err
	}
	if s.err == nil {
		delete(w.down, s.sub.node)
		w.updateMode()
		w.state.Mode, w.state.Connected = w.mode, true
		return true, nil // the full pass sends the new state
	}
	w.down[s.sub.node] = s.err.Error()
	// The server may have failed over, or left the cluster.
	if err := w.followMasters(ctx); err != nil || w.subs[s.sub.node] != s.sub {
		return false, err
	}
	w.failed(s.err)
	w.state.Mode = w.mode
	return false, w.emit(ctx, model.Batch{})
}

// readChanged re-reads the keys events named, after letting more gather
// for coalesceWindow unless a pipeline's worth is already waiting.
func (w *eventWatcher) readChanged(ctx context.Context) error {
	if w.changed.len() < w.o.BatchSize {
		t := time.NewTimer(coalesceWindow)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	_, err := w.fetch(ctx, w.changed.take(), true)
	return err
}

// subscribe keeps s's subscription until ctx is done, telling the reader
// each time it is made and each time it is lost. ps, when not nil, is one
// opened before the reader started. A subscription that was lost is made
// again at once; one that cannot be made is tried again with backoff.
func (w *eventWatcher) subscribe(ctx context.Context, s *subscriber, ps *redis.PubSub) {
	// One already open was made before the first full pass: the reader
	// needs no news of it.
	announce := ps == nil
	var backoff time.Duration
	for {
		var err error
		if ps == nil {
			ps, err = w.resubscribe(ctx, s.client)
		}
		if err == nil {
			backoff = 0
			err = w.receive(ctx, s, ps, announce)
			ps, announce = nil, true
		} else {
			backoff = nextBackoff(backoff)
		}
		if ctx.Err() != nil || !w.report(ctx, subStatus{sub: s, err: w.c.explainAt(err, s.node)}) { // in a cluster, the sentence that says it is a master
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
	}
}

// resubscribe checks that node sends the notifications needed, turning
// them on when allowed (a promoted replica or a restarted server may not
// have them), then subscribes. When node cannot send them, its error is
// noEvents.error(), which the reader tells apart by errNoEvents.
func (w *eventWatcher) resubscribe(ctx context.Context, node *redis.Client) (*redis.PubSub, error) {
	no, _, err := w.c.nodeNotifications(ctx, node, w.enable)
	switch {
	case err != nil:
		return nil, err
	case no != nil:
		return nil, no.error()
	}
	return w.open(ctx, node)
}

// open subscribes to the patterns' channels on node and waits until Redis
// has confirmed them all: from then on, every event is delivered.
func (w *eventWatcher) open(ctx context.Context, node *redis.Client) (*redis.PubSub, error) {
	ps := node.PSubscribe(ctx) // no channels: nothing is sent yet
	ctx, cancel := context.WithTimeout(ctx, subscribeTimeout)
	defer cancel()
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // Receive only heeds ctx's deadline
	defer stop()
	err := ps.PSubscribe(ctx, w.channels...)
	for err == nil {
		var msg any
		if msg, err = ps.Receive(ctx); err == nil && w.handle(msg) {
			return ps, nil
		}
	}
	ps.Close()
	return nil, err
}

// receive tells the reader that ps is subscribed (when announce is set),
// then passes it the keys that ps's events name until the connection fails
// or ctx is done. It closes ps.
func (w *eventWatcher) receive(ctx context.Context, s *subscriber, ps *redis.PubSub, announce bool) error {
	defer ps.Close()
	stop := context.AfterFunc(ctx, func() { ps.Close() }) // Receive does not heed ctx
	defer stop()
	var heard atomic.Uint64
	var silent atomic.Bool
	done := make(chan struct{})
	defer close(done)
	go w.watchdog(ps, &heard, &silent, done)

	if announce && !w.report(ctx, subStatus{sub: s}) {
		return ctx.Err()
	}
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			why := reason(err)
			if silent.Load() {
				why = fmt.Sprintf("no answer to a ping within %v", w.healthEvery)
			}
			return explained(fmt.Sprintf("the keyspace notifications subscription to %s was lost (%s) — subscribing again", s.node, why), err)
		}
		heard.Add(1)
		// Confirmations that come again mean go-redis lost the connection
		// and subscribed again by itself: what happened between is unknown.
		if w.handle(msg) && !w.report(ctx, subStatus{sub: s}) {
			return ctx.Err()
		}
	}
}

// handle adds the key an event names to the changed set, and reports
// whether msg confirms the last of the subscription's channels.
func (w *eventWatcher) handle(msg any) (subscribed bool) {
	switch m := msg.(type) {
	case *redis.Message:
		// Everything after the prefix is the key, whatever bytes it holds
		// (':' and newlines included).
		if key, ok := strings.CutPrefix(m.Channel, w.prefix); ok {
			w.changed.add(key)
		}
	case *redis.Subscription:
		return m.Kind == "psubscribe" && m.Count == len(w.channels)
	}
	return false
}

// report passes s to the reader; false when ctx ended first.
func (w *eventWatcher) report(ctx context.Context, s subStatus) bool {
	select {
	case w.status <- s:
		return true
	case <-ctx.Done():
		return false
	}
}

// watchdog pings ps when it has been silent for healthEvery, and closes it,
// setting silent, when the ping has gone unanswered for as long again: a
// connection that died without a word (a host gone, a network cut) would
// otherwise keep Receive waiting forever. heard counts what ps received. It
// returns when done is closed.
func (w *eventWatcher) watchdog(ps *redis.PubSub, heard *atomic.Uint64, silent *atomic.Bool, done <-chan struct{}) {
	tick := time.NewTicker(w.healthEvery)
	defer tick.Stop()
	last, pinged := heard.Load(), false
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		switch n := heard.Load(); {
		case n != last:
			last, pinged = n, false
		case pinged:
			silent.Store(true)
			ps.Close()
			return
		default:
			pinged = true
			ctx, cancel := context.WithTimeout(context.Background(), w.healthEvery)
			_ = ps.Ping(ctx) // a ping that cannot be sent is not answered either
			cancel()
		}
	}
}

// changeSet holds the keys that events said changed and that were not read
// again yet. Subscribers add to it without ever waiting for the reader, so
// a slow read or a busy dashboard cannot back events up into Redis's output
// buffer; a key that changes many times before the read is read once.
type changeSet struct {
	mu    sync.Mutex
	keys  map[string]struct{}
	ready chan struct{} // signalled when keys stops being empty
}

func newChangeSet() *changeSet {
	return &changeSet{keys: make(map[string]struct{}), ready: make(chan struct{}, 1)}
}

func (s *changeSet) add(key string) {
	s.mu.Lock()
	_, dup := s.keys[key]
	s.keys[key] = struct{}{}
	first := !dup && len(s.keys) == 1
	s.mu.Unlock()
	if first {
		select {
		case s.ready <- struct{}{}:
		default: // already signalled
		}
	}
}

func (s *changeSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// take empties the set and returns what it held.
func (s *changeSet) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys := slices.Collect(maps.Keys(s.keys))
	clear(s.keys)
	return keys
}
