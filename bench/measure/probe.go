// Package measure holds what countertop's load benchmarks (bench/cmd)
// share: another client's PING latency, as other users of a production
// Redis feel it while countertop runs.
package measure

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeEvery paces the probe: often enough to catch any stall of a
// millisecond or more, rarely enough to cost Redis nothing measurable.
const probeEvery = time.Millisecond

// Probe is another client of the same Redis, timing a PING at a steady
// pace: what other users of a production Redis feel while countertop reads.
type Probe struct {
	stop chan struct{}
	done chan []time.Duration
	sent atomic.Int64
}

// StartProbe starts pinging on a connection of its own, opened before it
// returns.
func StartProbe(ctx context.Context, opt *redis.Options) (*Probe, error) {
	o := *opt
	o.PoolSize = 1
	rdb := redis.NewClient(&o)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	p := &Probe{stop: make(chan struct{}), done: make(chan []time.Duration, 1)}
	go func() {
		defer rdb.Close()
		var lat []time.Duration
		tick := time.NewTicker(probeEvery)
		defer tick.Stop()
		for {
			select {
			case <-p.stop:
				p.done <- lat
				return
			case <-tick.C:
			}
			start := time.Now()
			p.sent.Add(1)
			if rdb.Ping(ctx).Err() == nil {
				lat = append(lat, time.Since(start))
			}
		}
	}()
	return p, nil
}

// Sent is how many PINGs the probe has sent so far, its first one (before
// StartProbe returned) left out: what to take off a server's count of
// PINGs to leave those of others.
func (p *Probe) Sent() int64 { return p.sent.Load() }

// End stops the probe and summarises what it saw.
func (p *Probe) End() Latencies {
	close(p.stop)
	lat := <-p.done
	slices.Sort(lat)
	return Latencies(lat)
}

// Latencies are durations (PING round trips, command costs), sorted.
type Latencies []time.Duration

// At is the q-quantile (0.99: p99); 0 when there is none.
func (l Latencies) At(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

// Max is the longest; 0 when there is none.
func (l Latencies) Max() time.Duration { return l.At(1) }

func (l Latencies) String() string {
	if len(l) == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v (%d)", ms(l.At(0.5)), ms(l.At(0.99)), ms(l.Max()), len(l))
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
