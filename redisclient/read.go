package redisclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/countertop/countertop/model"
)

// reader reads keys for a watcher and sends what it read as Batches, along
// with the feed's state whenever that changed. It remembers which keys
// exist, so that a full pass can tell which are gone. Only one goroutine
// may use it.
type reader struct {
	c     *Client
	o     PollOptions
	out   chan<- model.Batch
	known map[string]uint32 // keys that existed when last read, with the number of their entry in turns
	turns turns             // the known keys, least recently read in turn first (see poll)
	shown []string          // the keys on screen, as o.Shown last said
	// mode and phase are the state's Mode and Phase while reads succeed;
	// outage is its LastError meanwhile: why the feed is not healthy
	// although Redis answers reads (in a push mode, a subscription that
	// is down, and the phase reconnecting).
	mode   model.WatchMode
	phase  model.FeedPhase
	outage string
	state  model.FeedState // as it is now
	sent   model.FeedState // as the dashboard last received it
	// recheck, when set, tells poll to stop (it returns true) so that the
	// watch can go live: see Watch. poll calls it every recheckIntervals.
	recheck func(ctx context.Context) bool
	// topology is the header's topology being read in the background (see
	// readTopology), nil when none is; a pass starts one and takes it at
	// its end. topologyFrom is when it began, topologyAt when the one shown
	// began: an older read does not replace a newer.
	topology                 <-chan string
	topologyFrom, topologyAt time.Time
	// started is closed once the first batch was sent (see heartbeat); nil
	// from then on.
	started chan struct{}
	lag     *lagMeter // how far behind events or tracking are (see heartbeat)
	// rereads, while events or tracking are followed, schedules the keys
	// they would not report in time, as each is read; nil while polling.
	rereads *rereads
	// evictions counts the keys Redis evicted lately (see heartbeat).
	evictions evictionMeter
}

// newReader returns a reader of c that sends to out.
func (c *Client) newReader(o PollOptions, out chan<- model.Batch) *reader {
	if n := c.budget.maxBatch(); n > 0 {
		o.BatchSize = min(o.BatchSize, n) // a pipeline fits in the bucket: it waits for no more than that
	}
	return &reader{
		c:       c,
		o:       o,
		out:     out,
		known:   make(map[string]uint32),
		started: make(chan struct{}),
		lag:     &lagMeter{},
		state:   model.FeedState{Addr: c.addr, Topology: c.topology},
	}
}

// readTopology reads the topology in the background and sends it, for
// people, on the channel it returns: "" when it could not be read (a user
// not allowed to ask). A single server's changes when a replica is
// promoted, or made a replica of another, which only its INFO tells.
func (r *reader) readTopology(ctx context.Context) <-chan string {
	done := make(chan string, 1)
	if r.c.kind == standalone && r.c.noReplicationInfo.Load() {
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
	if r.rereads != nil {
		ctx = withFalls(ctx)
	}
	err = r.c.fetch(ctx, keys, r.o.BatchSize, func(obs []model.Observation) error {
		read = true
		b := model.Batch{Observed: obs[:0]} // obs is ours: partition it in place
		for i := range obs {
			o := &obs[i]
			if r.rereads != nil {
				r.rereads.observed(o)
			}
			if o.PTTL == model.PTTLMissing {
				b.Removed = append(b.Removed, o.Key)
				delete(r.known, o.Key)
			} else {
				b.Observed = append(b.Observed, *o)
				if !r.isKnown(o.Key) {
					r.known[o.Key] = r.turns.push(o.Key)
					if r.turns.len() > 2*len(r.known)+staleTurns {
						r.turns.rebuild(r.known)
					}
				}
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
	r.showMode()
	r.state.Connected = true
	r.state.LastError = r.outage
	r.state.UpdatedAt = time.Now()
}

// showMode puts the mode and phase of reads that succeed in the state.
func (r *reader) showMode() { r.state.Mode, r.state.Phase = r.mode, r.phase }

// failed records err, already explained. An error reply means Redis is
// there but refused (NOPERM, LOADING, ...); anything else means it could
// not be reached.
func (r *reader) failed(err error) {
	r.state.Connected = isReply(err)
	if !r.state.Connected {
		r.state.Phase = model.FeedReconnecting
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
		if r.started != nil {
			close(r.started) // the heartbeat may send from now on
			r.started = nil
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// onScreen returns the keys on screen, as the dashboard last said (see
// PollOptions.Shown).
func (r *reader) onScreen() []string {
	if r.o.Shown != nil {
		select {
		case keys := <-r.o.Shown:
			r.shown = keys
		default:
		}
	}
	return r.shown
}

// turns is a queue of the known keys, the least recently read in turn
// first: a poll cycle that cannot read every key under the budget reads
// the keys at its front and puts them at the back. A key that left the
// known keys, or came back since, leaves a stale entry, which pop skips:
// known holds the number of each key's live entry.
type turns struct {
	entries []turn
	head    int    // entries[head:] is the queue
	last    uint32 // the number of the last entry pushed
}

// staleTurns is how many stale entries turns may hold beyond as many as
// the keys known before it is rebuilt: counters that expire and come back
// leave one each time.
const staleTurns = 1024

// rebuild makes the queue anew from known, in no particular order.
func (q *turns) rebuild(known map[string]uint32) {
	*q = turns{entries: make([]turn, 0, len(known))}
	for k := range known {
		known[k] = q.push(k)
	}
}

// turn is an entry of turns.
type turn struct {
	key string
	n   uint32
}

// len returns how many entries the queue holds, stale ones included.
func (q *turns) len() int { return len(q.entries) - q.head }

// push puts key at the back, as just read, and returns the number its
// entry goes by.
func (q *turns) push(key string) uint32 {
	if q.head > 0 && q.head >= q.len() { // the front half is spent: move the rest down
		n := copy(q.entries, q.entries[q.head:])
		clear(q.entries[n:])
		q.entries, q.head = q.entries[:n], 0
	}
	q.last++
	q.entries = append(q.entries, turn{key, q.last})
	return q.last
}

// pop takes the key at the front that known still holds under that
// entry's number, and says how many entries it took, stale ones included;
// false when there is none.
func (q *turns) pop(known map[string]uint32) (key string, took int, ok bool) {
	for q.len() > 0 {
		e := q.entries[q.head]
		q.entries[q.head] = turn{}
		q.head++
		took++
		if n, ok := known[e.key]; ok && n == e.n {
			return e.key, took, true
		}
	}
	return "", took, false
}
