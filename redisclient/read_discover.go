package redisclient

import (
	"cmp"
	"context"
	"math/bits"
	"slices"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// discovery is one discovery pass: SCAN MATCH over each pattern in turn, on
// each master in turn, that can stop between two SCANs and resume later
// from where it was. Polling spreads a pass over many cycles this way, so
// that at millions of keys the refresh of the keys already known does not
// wait for the pass to end.
type discovery struct {
	reread  bool                // read the keys found that are known already, not just the new ones
	parts   []discoveryPart     // one per master; a single server is one
	at      int                 // index in parts of the one being walked
	found   map[string]struct{} // distinct keys SCAN returned so far
	pending []string            // keys found that are still to be read
	// failed is why a master of a cluster was left out of the pass (it did
	// not answer): the others are walked, and the pass ends with this
	// error, without taking known keys it did not find for deleted.
	failed error
}

// discoveryPart is a pass over one server.
type discoveryPart struct {
	node    redis.Cmdable
	size    int64  // DBSIZE when the pass began; 0 when the server would not say
	pattern int    // index of the pattern being walked; the number of patterns once done
	cursor  uint64 // where that pattern's walk goes on
}

// startDiscovery begins a pass, saying so in the feed's state. reread says
// whether the pass reads the keys it finds that are known already (a full
// pass) or only the new ones (when they are read apart from it). It reads
// the size of the keyspace, for the progress in the header, and the
// topology again (a failover, a master added, a node down) for the header.
func (r *reader) startDiscovery(ctx context.Context, reread bool) (*discovery, error) {
	r.state.Scanning, r.state.Seen, r.state.Matched = true, 0, 0
	if err := r.emit(ctx, model.Batch{}); err != nil {
		return nil, err
	}
	nodes, err := r.c.discoveryNodes(ctx)
	if err != nil {
		return nil, err
	}
	d := &discovery{reread: reread, found: make(map[string]struct{})}
	for _, n := range nodes {
		// The size only feeds an estimate: a user not allowed DBSIZE still
		// gets the pass, with progress counted in matches.
		size, err := r.c.dbSize(ctx, n)
		if err != nil && !isReply(err) {
			if err := r.leaveOut(ctx, d, n, err); err != nil {
				return nil, err
			}
			continue // the other masters' keys are worth finding meanwhile
		}
		d.parts = append(d.parts, discoveryPart{node: n, size: size})
	}
	if r.topology == nil {
		r.topology, r.topologyFrom = r.readTopology(ctx), time.Now()
	}
	return d, nil
}

// leaveOut explains err, which node gave, and returns it; in a cluster it
// notes it in d instead and returns nil, so that the pass leaves node out
// and walks the other masters (see discovery.failed).
func (r *reader) leaveOut(ctx context.Context, d *discovery, node redis.Cmdable, err error) error {
	err = r.c.explainAt(err, r.c.nodeAddr(node))
	if r.c.kind != cluster || ctx.Err() != nil {
		return err
	}
	d.failed = cmp.Or(d.failed, err)
	return nil
}

// discoveryNodes are the servers a pass walks: each master of a cluster
// (SCAN on the cluster client would walk one node), or the one server.
func (c *Client) discoveryNodes(ctx context.Context) ([]redis.Cmdable, error) {
	if c.kind != cluster {
		return []redis.Cmdable{c.rdb}, nil
	}
	masters, err := c.masters(ctx)
	if err != nil {
		return nil, err
	}
	nodes := make([]redis.Cmdable, len(masters))
	for i, m := range masters {
		nodes[i] = m
	}
	return nodes, nil
}

// advance takes d on, one SCAN at a time, reading the keys each finds (see
// startDiscovery), until d ends or, when budget is not 0, once budget has
// passed; it reports whether d ended. Without a budget the feed's state
// goes along after every SCAN, so that the header's progress moves while
// a first pass fills the dashboard; with one, when it stops.
//
// When d ends, advance reads the known keys d did not find, so that
// deleted keys are sent as Removed: SCAN returns every key that existed for
// the whole pass, so a known key it missed was deleted, or replaced during
// the pass, and reading it tells.
func (r *reader) advance(ctx context.Context, d *discovery, budget time.Duration) (bool, error) {
	start := time.Now()
	for d.at < len(d.parts) || len(d.pending) > 0 {
		if len(d.pending) > 0 {
			// Under a budget the keys a SCAN found are read a few pipelines
			// at a time (fetch keeps fetchAhead in flight), so that the
			// budget ends between two of them, not after all.
			n := len(d.pending)
			if budget != 0 {
				n = min(n, fetchAhead*r.o.BatchSize)
			}
			if _, err := r.fetch(ctx, d.pending[:n], false); err != nil {
				return false, err
			}
			d.pending = d.pending[n:]
			if budget == 0 {
				if err := r.emit(ctx, model.Batch{}); err != nil {
					return false, err
				}
			} else if time.Since(start) >= budget && (d.at < len(d.parts) || len(d.pending) > 0) {
				return false, r.sliceOver(ctx, d)
			}
			continue
		}
		p := &d.parts[d.at]
		keys, next, err := r.c.scanOnce(ctx, p.node, p.cursor, r.o.Patterns[p.pattern], r.o.ScanCount)
		if err != nil {
			if err := r.leaveOut(ctx, d, p.node, err); err != nil {
				return false, err
			}
			d.at++ // walk the others
			continue
		}
		if p.cursor = next; next == 0 {
			if p.pattern++; p.pattern == len(r.o.Patterns) {
				d.at++
			}
		}
		read := addNew(d.found, keys)
		if !d.reread {
			read = slices.DeleteFunc(read, r.isKnown)
		}
		r.state.Seen, r.state.Matched = d.seen(len(r.o.Patterns)), int64(len(d.found))
		d.pending = read
		switch {
		case len(read) > 0: // read next, with the time checked after
		case budget == 0:
			if err := r.emit(ctx, model.Batch{}); err != nil {
				return false, err
			}
		case d.at < len(d.parts) && time.Since(start) >= budget:
			return false, r.sliceOver(ctx, d)
		}
	}

	r.state.Scanning = false
	t, ready := "", true
	if r.c.anyStalled() {
		// A master hangs (see Client.onMaster), and the read may wait on
		// it: the end of a later pass takes it, and this one does not wait.
		select {
		case t = <-r.topology:
		default:
			ready = false
		}
	} else {
		t = <-r.topology
	}
	if ready {
		r.setTopology(t, r.topologyFrom)
		r.topology = nil
	}
	if d.failed != nil {
		return true, d.failed
	}
	r.healthy()
	var missed []string
	for k := range r.known {
		if _, ok := d.found[k]; !ok {
			missed = append(missed, k)
		}
	}
	if _, err := r.fetch(ctx, missed, false); err != nil {
		return false, err
	}
	return true, r.emit(ctx, model.Batch{})
}

// sliceOver ends a slice of d that its budget of time ran out in: the
// feed's state goes along, healthy unless d has left a master out.
func (r *reader) sliceOver(ctx context.Context, d *discovery) error {
	if d.failed == nil {
		r.healthy()
	} else {
		r.failed(d.failed) // said now, though the pass goes on
	}
	return r.emit(ctx, model.Batch{})
}

// isKnown reports whether key existed when last read.
func (r *reader) isKnown(key string) bool {
	_, ok := r.known[key]
	return ok
}

// seen estimates how many keys d has looked at: how far its walk has got
// through each server's keyspace, times that keyspace's size when d began.
// SCAN visits the buckets of a server's hash table in reverse-binary order,
// so a cursor's bits reversed, over 2^64, are the share of the table
// walked before it, whatever the table's size. With several patterns, each
// walks the whole keyspace and counts for its share of d. It is an
// estimate: buckets hold unequal numbers of keys, and keys come and go
// during the pass. (A cluster node that keeps a table per slot, as Redis
// 7.4 and Valkey 8 do, puts the slot in the cursor's low bits: there the
// estimate is rough.) It is never less than the keys found.
func (d *discovery) seen(patterns int) int64 {
	var keys float64
	for _, p := range d.parts {
		walked := float64(p.pattern)
		if p.pattern < patterns {
			walked += float64(bits.Reverse64(p.cursor)) / 0x1p64
		}
		keys += float64(p.size) * walked / float64(patterns)
	}
	return max(int64(keys), int64(len(d.found)))
}
