package redisclient

import (
	"context"
	"sync"
	"time"

	"github.com/countertop/countertop/model"
)

// healthTick bounds how often the feed's Health is measured: a silence is
// seen within a quarter interval of passing one, and at most four times a
// second (the dashboard's redraw).
const (
	minHealthTick = 50 * time.Millisecond
	maxHealthTick = 250 * time.Millisecond
)

// costEvery is how often the cost alone is sent again when nothing else
// changed.
const costEvery = time.Second

// heartbeat sends the feed's Health to out, apart from the reader (which
// may be the one waiting on a server that hangs), from when started is
// closed (the reader's first batch goes first) until ctx is done or stop
// is called; stop waits until it has returned, so that out can then be
// closed. A server counts as silent once a command to it has gone
// unanswered for an interval (or a read timeout, when shorter): every
// mode sends one at least every interval (a poll pass, events' check for
// flushes), so a hang shows within about two intervals, subscriptions
// included.
//
// It also sends how far behind Redis events or tracking are, as lag
// measures it, and how many keys Redis evicted in the last minute, as
// evictions counts them (reading the masters' INFO apart, every
// recheckIntervals intervals, while events are not followed).
func (c *Client) heartbeat(ctx context.Context, interval time.Duration, started <-chan struct{}, out chan<- model.Batch, lag *lagMeter, evictions *evictionMeter) (stop func()) {
	after := interval
	if rt := c.pipelineTimeout / 2; rt > 0 && rt < after {
		after = rt // named within two read timeouts (see failed) whatever the interval
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-started: // the watch knows by then whether it follows events
		}
		c.sampleEvictions(ctx, recheckIntervals*interval, evictions)
	})
	wg.Go(func() {
		select {
		case <-ctx.Done():
			return
		case <-started:
		}
		tick := time.NewTicker(min(maxHealthTick, max(minHealthTick, interval/4)))
		defer tick.Stop()
		var sent model.Health
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			h := c.health(time.Now(), after)
			h.Behind = lag.behind(h.At)
			h.Evicted, h.EvictedAll = evictions.count(h.At)
			if h.Silent == sent.Silent && h.Since.Equal(sent.Since) && sameLag(h.Behind, sent.Behind) &&
				h.Evicted == sent.Evicted && h.EvictedAll == sent.EvictedAll && h.At.Sub(sent.At) < costEvery {
				continue
			}
			select {
			case out <- model.Batch{Health: &h}:
				sent = h
			case <-ctx.Done():
				return
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}

// health measures the servers' Health at now: a server is silent when it
// left a command unanswered for longer than after.
func (c *Client) health(now time.Time, after time.Duration) model.Health {
	h := model.Health{At: now, Commands: c.budget.busiest(now)}
	addr, since := c.budget.silent(now, after)
	if !since.IsZero() {
		h.Silent, h.Since = addr, since
		if addr == "" {
			h.Silent = c.hostPort // the one server
		}
	}
	return h
}

// sameLag reports whether the header would say the same of lags a and b:
// both within bounds, or the same to a tenth of a second.
func sameLag(a, b time.Duration) bool {
	return a.Round(100*time.Millisecond) == b.Round(100*time.Millisecond)
}
