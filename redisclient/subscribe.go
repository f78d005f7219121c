package redisclient

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
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
	// subscribeTimeout bounds the wait for PSUBSCRIBE's confirmations.
	subscribeTimeout = 10 * time.Second
)

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

// noChannels returns why events cannot be used when subscribing was refused
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
