package demo

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// The demo's limits. The API window is short so that windows visibly end and
// restart while you watch.
const (
	apiLimit      = 100
	apiWindow     = 10 * time.Second
	loginLimit    = 5
	loginWindow   = 30 * time.Second
	billingLimit  = 1000
	billingWindow = time.Hour
)

// A writer is one simulated application writing one counter.
type writer struct {
	key  string
	rate float64 // writes per second
	// calm is the counter value from which the writer slows to calmRate, as
	// a client does once it is refused for being near or over its limit
	// (0: it never slows down). It keeps writing now and then, so a new
	// window starts soon after the old one expires.
	calm     float64
	calmRate float64
	by       float64 // INCRBYFLOAT amount per write; 0 for a plain INCR
	// window is the TTL that each write sets with EXPIRE NX in the same
	// MULTI/EXEC (the fixed pattern); 0 for a counter written with INCR alone,
	// either meant to live forever or legacy code that lost its TTL.
	window time.Duration
	// pushes sets the window again at every write (EXPIRE without NX), the
	// second bug: the window never closes while the client keeps trying.
	pushes bool
	value  float64 // the counter as the last write left it
}

// writers is the simulated traffic: which counters are written, how fast,
// and what state the dashboard opens on.
func writers() []*writer {
	api := func(client string, rate, calm, calmRate float64) *writer {
		return &writer{key: "ratelimit:api:" + client, rate: rate, calm: calm, calmRate: calmRate, window: apiWindow}
	}
	login := func(ip string, rate, calm, calmRate float64) *writer {
		return &writer{key: "ratelimit:login:" + ip, rate: rate, calm: calm, calmRate: calmRate, window: loginWindow}
	}
	return []*writer{
		// API clients, 100 requests per 10s window.
		// api(client, writes/s, calm at, writes/s once calm)
		api("acme-web", 4, 0, 0),
		api("acme-mobile", 2.5, 0, 0),
		api("globex", 6, 0, 0),
		api("initech", 1, 0, 0),
		api("umbrella", 7, 0, 0),
		api("wayne", 3, 0, 0),
		api("soylent", 5, 0, 0),
		api("cyberdyne", 0.3, 0, 0),     // calls rarely: its key is often absent
		api("hooli", 40, 88, 0.5),       // bursts, then stays near the limit (warn)
		api("stark-etl", 25, 85, 0.5),   // warn
		api("partner-feed", 30, 115, 1), // over
		api("scraper-7f3a", 20, 150, 2), // over

		// Logins, 5 attempts per 30s window.
		login("198.51.100.7", 0.1, 0, 0),
		login("198.51.100.42", 0.05, 0, 0),
		login("192.0.2.10", 1, 7, 0.2), // guessing passwords: over

		// Legacy code that lost the TTL (a crash between INCR and EXPIRE):
		// these counters never reset.
		{key: "ratelimit:api:legacy-batch", value: 250, rate: 1}, // stuck, and still growing
		{key: "ratelimit:api:cron-sync", value: 40},              // no expiry, under the limit
		{key: "ratelimit:login:203.0.113.5", value: 3},           // no expiry, under the limit
		{key: "ratelimit:login:203.0.113.77", value: 6},          // stuck

		// A client whose limiter sets EXPIRE without NX on every request:
		// its window never closes while it keeps retrying (extending).
		{key: "ratelimit:api:retry-loop", rate: 1.5, window: apiWindow, pushes: true},

		// Page views, meant to live forever.
		{key: "views:page:home", value: 48213, rate: 8},
		{key: "views:page:docs", value: 20577, rate: 4},
		{key: "views:page:pricing", value: 9120, rate: 2},
		{key: "views:page:blog", value: 3302, rate: 0.7},
		// Named after a request path someone crafted: the dashboard must
		// show the escape sequence and the newline escaped.
		{key: "views:page:\x1b[31mevil\n", value: 13, rate: 0.2},

		// Credits used per hour: float counters, starting the hour at a
		// quarter and counting in halves, so never a whole number (and
		// exact in binary). The value is where the hour started.
		{key: "billing:credits:acme", value: 300.25, rate: 0.25, by: 0.5, window: billingWindow},   // ok
		{key: "billing:credits:globex", value: 820.75, rate: 0.08, by: 0.5, window: billingWindow}, // warn
	}
}

// amount is how much one write adds.
func (w *writer) amount() float64 {
	if w.by != 0 {
		return w.by
	}
	return 1
}

// writes is how many writes w makes in dt: rate·dt on average (calmRate·dt
// once the counter has reached calm), rounded up or down at random so that a
// slow writer still writes now and then.
func (w *writer) writes(dt time.Duration, rng *rand.Rand) int {
	rate := w.rate
	if w.calm > 0 && w.value >= w.calm {
		rate = w.calmRate
	}
	return int(rate*dt.Seconds() + rng.Float64())
}

// warmUp plays a random part of w's window without writing anything and
// returns how long it played; w.value is then what the counter would hold.
func (w *writer) warmUp(rng *rand.Rand) time.Duration {
	const steps = 100
	step := w.window / steps
	played := rng.IntN(steps)
	for range played {
		w.value += float64(w.writes(step, rng)) * w.amount()
	}
	return time.Duration(played) * step
}

// write queues one write of w's counter and returns how to read the value
// it leaves.
func (w *writer) write(ctx context.Context, pipe redis.Pipeliner) func() (float64, error) {
	var value func() (float64, error)
	if w.by == 0 {
		incr := pipe.Incr(ctx, w.key)
		value = func() (float64, error) {
			n, err := incr.Result()
			return float64(n), err
		}
	} else {
		value = pipe.IncrByFloat(ctx, w.key, w.by).Result
	}
	switch {
	case w.window > 0 && w.pushes:
		pipe.Expire(ctx, w.key, w.window)
	case w.window > 0:
		pipe.ExpireNX(ctx, w.key, w.window)
	}
	return value
}

// seed writes the state the dashboard opens on. Windowed counters open
// part-way through their window, as if the applications had been running a
// while, so that windows end at different times.
func (d *Demo) seed(ctx context.Context) error {
	_, err := d.rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, w := range d.writers {
			var ttl time.Duration // none
			if w.window > 0 {
				ttl = w.window - w.warmUp(d.rng)
			}
			if w.value != 0 { // a window with no request yet has no key
				pipe.Set(ctx, w.key, strconv.FormatFloat(w.value, 'f', -1, 64), ttl)
			}
		}
		// Keys the patterns match that are not counters.
		pipe.HSet(ctx, "ratelimit:config",
			"api_limit", apiLimit, "api_window", apiWindow.String(),
			"login_limit", loginLimit, "login_window", loginWindow.String())
		pipe.Set(ctx, "ratelimit:api:note", "limits raised for acme until Friday", 0)
		seedLayouts(ctx, pipe, d.clock)
		for _, l := range d.limiters {
			l.hit(ctx, pipe, l, d.clock) // a first request, so the key is there from the start
		}
		return nil
	})
	return err
}

// send makes the writes of dt, all in one MULTI/EXEC. A write fails when
// someone else (the dashboard, redis-cli) has turned its key into another
// type or a non-number; it is skipped, and the writer carries on.
func (d *Demo) send(ctx context.Context, dt time.Duration) {
	type sent struct {
		w     *writer
		value func() (float64, error)
	}
	var last []sent // the last write of each writer that wrote
	_, _ = d.rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		for _, w := range d.writers {
			n := w.writes(dt, d.rng)
			if n == 0 {
				continue
			}
			for range n - 1 {
				w.write(ctx, pipe)
			}
			last = append(last, sent{w, w.write(ctx, pipe)})
		}
		for _, l := range d.limiters {
			// Requests spread over dt, so that the times they write differ.
			n := int(l.rate*dt.Seconds() + d.rng.Float64())
			for i := range n {
				l.hit(ctx, pipe, l, d.clock.Add(-dt+dt*time.Duration(i+1)/time.Duration(n)))
			}
		}
		return nil
	})
	for _, s := range last {
		if v, err := s.value(); err == nil {
			s.w.value = v
		}
	}
}
