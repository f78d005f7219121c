package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// probeEvery paces the probe: often enough to catch any stall of a
// millisecond or more, rarely enough to cost Redis nothing measurable.
const probeEvery = time.Millisecond

// probe is another client of the same Redis, timing a PING at a steady
// pace: what other users of a production Redis feel while countertop reads.
type probe struct {
	stop chan struct{}
	done chan []time.Duration
}

// startProbe starts pinging on a connection of its own, opened before it
// returns.
func startProbe(ctx context.Context, opt *redis.Options) (*probe, error) {
	o := *opt
	o.PoolSize = 1
	rdb := redis.NewClient(&o)
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, err
	}
	p := &probe{stop: make(chan struct{}), done: make(chan []time.Duration, 1)}
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
			if rdb.Ping(ctx).Err() == nil {
				lat = append(lat, time.Since(start))
			}
		}
	}()
	return p, nil
}

// end stops the probe and summarises what it saw.
func (p *probe) end() latencies {
	close(p.stop)
	lat := <-p.done
	slices.Sort(lat)
	return latencies(lat)
}

// latencies are durations (PING round trips, command costs), sorted.
type latencies []time.Duration

func (l latencies) at(q float64) time.Duration {
	if len(l) == 0 {
		return 0
	}
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

func (l latencies) String() string {
	if len(l) == 0 {
		return "none"
	}
	return fmt.Sprintf("p50 %v, p99 %v, max %v (%d)", ms(l.at(0.5)), ms(l.at(0.99)), ms(l[len(l)-1]), len(l))
}
