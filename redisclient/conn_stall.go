package redisclient

import (
	"context"
	"sync"
	"time"
)

// A master of a cluster that hangs (a frozen VM) costs each read sent to it
// the whole pipeline timeout, and every poll cycle reads every master. So
// the first read of it that times out marks it stalled: reads that would go
// to it fail at once with that first error (which names it), while a probe
// PINGs it in the background until it answers or is no longer a master.

// stalls are the masters whose reads timed out, by address, with the
// error each gave.
type stalls struct {
	mu sync.Mutex
	by map[string]error
}

// stalled returns the error the reads of the master at addr timed out with,
// while it has not answered since; nil when it is not stalled.
func (c *Client) stalled(addr string) error {
	c.stalls.mu.Lock()
	defer c.stalls.mu.Unlock()
	return c.stalls.by[addr]
}

// anyStalled reports whether a master is stalled.
func (c *Client) anyStalled() bool {
	c.stalls.mu.Lock()
	defer c.stalls.mu.Unlock()
	return len(c.stalls.by) > 0
}

// onMaster runs read, which goes to the master of the cluster at addr,
// unless that master is stalled: then it returns the error it stalled
// with, at once. A read that times out, before ctx (the caller's, not the
// read's own deadline) is done, stalls it. Elsewhere (a single server,
// Sentinel), it runs read.
func (c *Client) onMaster(ctx context.Context, addr string, read func() error) error {
	if c.kind != cluster {
		return read()
	}
	if err := c.stalled(addr); err != nil {
		return err
	}
	err := read()
	if isTimeout(err) && ctx.Err() == nil && !c.isClosed() {
		c.stall(addr, c.explainAt(err, addr)) // the sentence that names it, whoever reads next
	}
	return err
}

// isClosed reports whether the client has been closed.
func (c *Client) isClosed() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stall marks the master at addr stalled with err, and starts its probe,
// unless it is stalled already.
func (c *Client) stall(addr string, err error) {
	c.stalls.mu.Lock()
	defer c.stalls.mu.Unlock()
	if c.stalls.by == nil {
		c.stalls.by = map[string]error{}
	}
	if _, ok := c.stalls.by[addr]; ok {
		return
	}
	c.stalls.by[addr] = err
	go c.probe(addr)
}

// probe PINGs the stalled master at addr, backing off as polling does (see
// nextBackoff), until it answers or is no longer a master, then ends the
// stall; or until the client is closed.
func (c *Client) probe(addr string) {
	var wait time.Duration
	for {
		wait = nextBackoff(wait)
		select {
		case <-c.done:
			return
		case <-time.After(wait):
		}
		if answers, gone := c.pingMaster(addr); answers || gone {
			c.stalls.mu.Lock()
			delete(c.stalls.by, addr)
			c.stalls.mu.Unlock()
			return
		}
	}
}

// pingMaster PINGs the master at addr, within the pipeline timeout, and
// reports whether it answered, or whether the slot map no longer has a
// master there.
func (c *Client) pingMaster(addr string) (answers, gone bool) {
	ctx, cancel := c.withPipelineTimeout(context.Background())
	defer cancel()
	masters, err := c.masters(ctx)
	if err != nil {
		return false, false
	}
	for _, m := range masters {
		if m.Options().Addr == addr {
			return m.Ping(ctx).Err() == nil, false
		}
	}
	return false, true
}
