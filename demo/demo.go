// Package demo runs an embedded Redis (miniredis) filled with simulated
// rate-limit traffic, for `countertop demo`: the dashboard connects to it like
// to any Redis and finds every status it can show, live, within seconds.
package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/alicebob/miniredis/v2/server"
	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/model"
)

// DefaultTick is how often the demo moves its clock and sends traffic.
const DefaultTick = 100 * time.Millisecond

// Options configure Start.
type Options struct {
	// Seed drives the simulated traffic: the same seed gives the same keys
	// and the same writes for the same sequence of ticks.
	Seed int64
	// Tick is how often the clock moves and traffic is sent; 0 means
	// DefaultTick.
	Tick time.Duration
}

// Demo is a running embedded Redis with traffic. Close it when done.
type Demo struct {
	srv     *miniredis.Miniredis
	addr    string        // kept: miniredis panics when asked after Close
	rdb     *redis.Client // the simulated applications' connection
	rng     *rand.Rand    // used by the traffic goroutine only
	writers []*writer
	// limiters write keys of other layouts; clock is the time they
	// write, which moves with the server's (see advance).
	limiters []*limiter
	clock    time.Time

	stop      context.CancelFunc
	done      chan struct{} // closed when the traffic goroutine has returned
	closeOnce sync.Once
}

// Start starts the embedded Redis on a free port on 127.0.0.1, writes the
// keys the dashboard opens on, and moves the clock and sends traffic every
// tick until ctx is done or Close is called. After ctx is done the server
// still answers, with time stopped, until Close.
func Start(ctx context.Context, o Options) (*Demo, error) {
	tick := o.Tick
	if tick == 0 {
		tick = DefaultTick
	}
	if tick < 0 {
		return nil, fmt.Errorf("demo tick must be positive, got %v", o.Tick)
	}

	srv, err := miniredis.Run() // on a free port on 127.0.0.1
	if err != nil {
		return nil, fmt.Errorf("could not start the demo Redis: %w", err)
	}
	if err := srv.Server().Register("HPEXPIRE", hpexpire(srv.Server())); err != nil {
		srv.Close()
		return nil, fmt.Errorf("could not start the demo Redis: %w", err)
	}
	d := &Demo{
		srv:  srv,
		addr: srv.Addr(),
		rdb: redis.NewClient(&redis.Options{
			Addr: srv.Addr(),
			// miniredis does not know CLIENT SETINFO.
			DisableIdentity: true,
		}),
		rng:      rand.New(rand.NewPCG(uint64(o.Seed), 0)),
		writers:  writers(),
		limiters: limiters(),
		clock:    time.Now(),
		done:     make(chan struct{}),
	}
	if err := d.seed(ctx); err != nil {
		d.rdb.Close()
		srv.Close()
		return nil, fmt.Errorf("could not write the demo keys: %w", err)
	}

	ctx, d.stop = context.WithCancel(ctx)
	go d.run(ctx, tick)
	return d, nil
}

// hpexpire is HPEXPIRE key ms [NX|XX|GT|LT] FIELDS n field..., which
// miniredis (v2.40) lacks, though it has HEXPIRE, HPTTL and HPERSIST: run
// as HEXPIRE with the milliseconds rounded up to whole seconds (the demo's
// windows are whole seconds), dispatched on the same connection so that
// it runs inside a script, or a MULTI, as HPEXPIRE would. countertop's
// repair of a field, and its increments of one, send HPEXPIRE.
func hpexpire(srv *server.Server) server.Cmd {
	const maxExpireMS = int64(math.MaxInt64/time.Millisecond) - 1000
	return func(c *server.Peer, _ string, args []string) {
		if len(args) < 2 {
			c.WriteError("ERR wrong number of arguments for 'hpexpire' command")
			return
		}
		ms, err := strconv.ParseInt(args[1], 10, 64)
		if err != nil || ms < 0 {
			c.WriteError("ERR value is not an integer or out of range")
			return
		}
		if ms > maxExpireMS {
			// Rounded up, then made a time.Duration by HEXPIRE, it would
			// wrap to a short TTL: refused, as Redis refuses an expire
			// time past its clock's range.
			c.WriteError("ERR invalid expire time in 'hpexpire' command")
			return
		}
		secs := strconv.FormatInt((ms+999)/1000, 10)
		srv.Dispatch(c, append([]string{"HEXPIRE", args[0], secs}, args[2:]...))
	}
}

// Addr is the server's host:port.
func (d *Demo) Addr() string { return d.addr }

// URL is the address as countertop's --url takes it.
func (d *Demo) URL() string { return "redis://" + d.addr + "/0" }

// Rules are the rules the demo's keys are meant to be read with.
func (d *Demo) Rules() []model.Rule {
	return append(layoutRules(), []model.Rule{
		{Pattern: "ratelimit:login:*", Limit: loginLimit, Window: loginWindow, ExpectTTL: true},
		{Pattern: "ratelimit:api:*", Limit: apiLimit, Window: apiWindow, ExpectTTL: true},
		{Pattern: "billing:*", Limit: billingLimit, Window: billingWindow, ExpectTTL: true},
		{Pattern: "views:*", ExpectTTL: false},
	}...)
}

// Patterns are the globs that find every demo key.
func (d *Demo) Patterns() []string {
	return []string{"ratelimit:*", "views:*", "billing:*"}
}

// Close stops the traffic and shuts the server down; clients connected to it
// are disconnected. It is safe to call more than once.
func (d *Demo) Close() {
	d.closeOnce.Do(func() {
		d.stop()
		<-d.done
		d.rdb.Close()
		d.srv.Close()
	})
}

// run moves the server's clock and sends traffic on every tick. miniredis
// only expires keys when told time has passed, so each tick fast-forwards it
// by the time that really elapsed (not by the nominal tick, which a busy
// machine may deliver late or drop): TTLs the dashboard reads then count down
// with the wall clock.
func (d *Demo) run(ctx context.Context, tick time.Duration) {
	defer close(d.done)
	t := time.NewTicker(tick)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			now := time.Now()
			d.advance(ctx, now.Sub(last))
			last = now
		}
	}
}

// advance moves the server's clock by dt, expiring the keys whose TTL ran
// out, then sends the traffic of dt, or of a second at most: after a long
// pause (a suspended laptop) the clock catches up, the traffic does not.
func (d *Demo) advance(ctx context.Context, dt time.Duration) {
	d.srv.FastForward(dt)
	d.clock = d.clock.Add(dt)
	d.send(ctx, min(dt, time.Second))
}
