package redisclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

const (
	// defaultHealthEvery is how long a subscription may stay silent before
	// it is pinged, and how long the ping may then go unanswered before the
	// connection is taken for dead.
	defaultHealthEvery = 5 * time.Second
	// subscribeTimeout bounds the subscription's handshake (AUTH, CLIENT
	// ID, the SUBSCRIBE's confirmations) and each write of a ping.
	subscribeTimeout = 10 * time.Second
)

// subscriber keeps a subscription to one master.
type subscriber struct {
	node   string // its address
	client *redis.Client
	stop   context.CancelFunc
	missed bool // the last read of the masters left it out
}

// subscription is the open feed of one master's changes: a connection of
// its own (see subConn) and, in tracking mode, what has Redis send it
// invalidations.
type subscription struct {
	conn *subConn
	// In tracking mode: the connection whose CLIENT TRACKING redirects to
	// conn (see openTracking); nil in events mode.
	tracker *redis.Conn
	// overflows is the server's client_output_buffer_limit_disconnections
	// when the subscription was made; -1 when it does not say (before
	// Redis 7.4, or a user who may not run INFO).
	overflows int64
}

// close closes everything s holds. Closing the tracking connection ends
// its tracking on the server.
func (s *subscription) close() {
	s.conn.close()
	if s.tracker != nil {
		s.tracker.Close()
	}
}

// subStatus is news from a subscriber: its subscription was made
// (err == nil) or lost.
type subStatus struct {
	sub *subscriber
	err error
}

// openAll subscribes on each of nodes, and returns the subscriptions made
// by address. Its error is the first refusal (NOPERM on the channels, a
// command the server does not know), which subscribing again would meet
// too; it then closes what it opened. A node that could not be reached, or
// that answered with an error that passes (LOADING, BUSY), is left to its
// subscriber, which retries.
func (w *pushWatcher) openAll(ctx context.Context, nodes []*redis.Client) (map[string]*subscription, error) {
	opened := make(map[string]*subscription, len(nodes))
	for _, n := range nodes {
		sub, err := w.push.open(ctx, n)
		if refused(err) || ctx.Err() != nil {
			for _, sub := range opened {
				sub.close()
			}
			return nil, cmp.Or(ctx.Err(), err)
		}
		if err == nil {
			opened[n.Options().Addr] = sub
		}
	}
	return opened, nil
}

// refused reports whether err is an error reply that trying again would
// meet too.
func refused(err error) bool {
	return isReply(err) && !passing(err)
}

// followMasters asks which servers are masters now and follows them (see
// follow). Once the masters changed, it reads the topology for the header
// at this call and the next two: the pass the change brings may have read
// it in the middle of the failover (the old master and the new both
// masters), and the next pass is a resync away.
func (w *pushWatcher) followMasters(ctx context.Context) error {
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
func (w *pushWatcher) follow(ctx context.Context, nodes []*redis.Client, opened map[string]*subscription) (changed bool) {
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
		sub := opened[addr]
		w.wg.Go(func() { w.subscribe(sctx, s, sub) })
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
func (w *pushWatcher) unfollow(addr string) {
	if s := w.subs[addr]; s != nil {
		s.stop()
		delete(w.subs, addr)
		delete(w.down, addr)
	}
}

// updateMode sets the feed's mode while reads succeed: the watcher's,
// watching while every subscription is up; reconnecting, with why one is
// down, otherwise.
func (w *pushWatcher) updateMode() {
	w.mode, w.phase, w.outage = w.kind.mode, model.FeedWatching, ""
	if len(w.down) > 0 {
		first := slices.Min(slices.Collect(maps.Keys(w.down)))
		w.phase, w.outage = model.FeedReconnecting, w.down[first]
	}
}

// subscription records a subscriber's news in the feed's state and reports
// whether a full pass is now due: a subscription was made.
func (w *pushWatcher) subscription(ctx context.Context, s subStatus) (due bool, err error) {
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
		w.showMode()
		w.state.Connected = true
		return true, nil // the full pass sends the new state
	}
	if errors.Is(s.err, errOverflow) {
		// Said until the watch ends: the setting stays as it is, and the
		// next flood meets it again.
		w.overflow = s.err.Error() + " (last at " + time.Now().Format("15:04:05") + ")"
		w.state.Note = joinNotes(w.overflow, w.note)
	}
	w.down[s.sub.node] = s.err.Error()
	// The server may have failed over, or left the cluster.
	if err := w.followMasters(ctx); err != nil || w.subs[s.sub.node] != s.sub {
		return false, err
	}
	w.failed(s.err)
	w.showMode()
	return false, w.emit(ctx, model.Batch{})
}

// subscribe keeps s's subscription until ctx is done, telling the reader
// each time it is made and each time it is lost. sub, when not nil, is one
// opened before the reader started. A subscription that was lost is made
// again at once; one that cannot be made is tried again with backoff.
func (w *pushWatcher) subscribe(ctx context.Context, s *subscriber, sub *subscription) {
	// One already open was made before the first full pass: the reader
	// needs no news of it.
	announce := sub == nil
	var backoff time.Duration
	for {
		var err error
		if sub == nil {
			sub, err = w.push.reopen(ctx, s.client)
		}
		if err == nil {
			backoff = 0
			err = w.receive(ctx, s, sub, announce)
			sub, announce = nil, true
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

// receive tells the reader that sub is subscribed (when announce is set),
// then passes it the keys that sub's messages name until the connection
// fails or ctx is done. It closes sub.
func (w *pushWatcher) receive(ctx context.Context, s *subscriber, sub *subscription, announce bool) error {
	defer sub.close()
	conn := sub.conn
	stop := context.AfterFunc(ctx, conn.close) // ends the drain's read
	defer stop()
	var heard atomic.Uint64
	var lost atomic.Pointer[string] // why the watchdog closed the subscription
	done := make(chan struct{})
	defer close(done)
	tracker := sub.tracker
	sub.tracker = nil // the watchdog's, which may be pinging it: it closes it when done
	go w.watchdog(conn, tracker, &heard, &lost, done)
	w.lag.watch(conn)
	defer w.lag.unwatch(conn)

	if announce && !w.report(ctx, subStatus{sub: s}) {
		return ctx.Err()
	}
	err := conn.drain(w, &heard)
	behind, busy := conn.behind(time.Now()), conn.busy()
	conn.endProbes()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	why := reason(err)
	if p := lost.Load(); p != nil {
		why = *p
	} else if sentence := w.overflowed(ctx, s, sub, err, behind, busy); sentence != "" {
		return explained(sentence, errOverflow)
	}
	return explained(fmt.Sprintf("the %s subscription to %s was lost (%s) — subscribing again", w.kind.follows, s.node, why), err)
}

// report passes s to the reader; false when ctx ended first.
func (w *pushWatcher) report(ctx context.Context, s subStatus) bool {
	select {
	case w.status <- s:
		return true
	case <-ctx.Done():
		return false
	}
}

// watchdog pings conn every interval (or every healthEvery, when shorter),
// the probe that says how far behind the subscription is (see
// subConn.behind), and closes it, saying why in lost, when a ping has gone
// unanswered, with nothing else heard, for healthEvery (and a tick, so
// that a ping is never given up at its first look): a connection that
// died without a word (a host gone, a network cut) would otherwise keep
// the drain waiting forever. In tracking mode it also pings tracker, the
// tracking connection, every healthEvery, and closes conn when that fails:
// Redis sends nothing once that connection is gone, and the ping keeps a
// server's idle timeout from closing it. heard counts what conn received.
// When done is closed, it closes tracker and returns.
func (w *pushWatcher) watchdog(conn *subConn, tracker *redis.Conn, heard *atomic.Uint64, lost *atomic.Pointer[string], done <-chan struct{}) {
	var once sync.Once
	giveUp := func(why string) {
		once.Do(func() {
			lost.Store(&why)
			conn.close()
		})
	}
	if tracker != nil {
		go func() {
			defer tracker.Close()
			tick := time.NewTicker(w.healthEvery)
			defer tick.Stop()
			for {
				select {
				case <-done:
					return
				case <-tick.C:
				}
				// At least a second: a slow answer is not a lost connection.
				ctx, cancel := context.WithTimeout(context.Background(), max(w.healthEvery, time.Second))
				err := trackingOn(ctx, tracker)
				cancel()
				if err != nil {
					giveUp("its tracking connection failed: " + reason(err))
					return
				}
			}
		}()
	}
	every := min(w.o.Interval, w.healthEvery)
	tick := time.NewTicker(every)
	defer tick.Stop()
	last, lastHeard := heard.Load(), time.Now()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		now := time.Now()
		if n := heard.Load(); n != last {
			last, lastHeard = n, now
		}
		if sent := conn.unanswered(); !sent.IsZero() && now.Sub(sent) >= w.healthEvery+every && now.Sub(lastHeard) >= w.healthEvery {
			giveUp(fmt.Sprintf("no answer to a ping within %v", w.healthEvery))
			return
		}
		if _, err := conn.ping(now); err != nil {
			giveUp("a ping could not be sent: " + reason(err))
			return
		}
	}
}

// trackingOn checks that tracker still tracks: go-redis replaces a
// connection that was closed under it (a CLIENT KILL) by a new one, which
// answers a PING but tracks nothing. CLIENT TRACKINGINFO (Redis 6.2 and
// later) tells; an older server is PINGed.
func trackingOn(ctx context.Context, tracker *redis.Conn) error {
	info, err := tracker.Do(ctx, "CLIENT", "TRACKINGINFO").Result()
	switch {
	case err != nil && unknownCommand(err):
		return tracker.Ping(ctx).Err()
	case err != nil:
		return err
	}
	flags, _ := helloField(info, "flags").([]any)
	for _, f := range flags {
		if f == "off" {
			return errors.New("its connection was replaced, without tracking")
		}
	}
	return nil
}
