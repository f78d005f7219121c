// Command seed fills a Redis with a benchmark keyspace (see package
// bench/seed): N keys, M of them counters matching "ratelimit:*" (with
// -mixed, keys of every layout).
//
//	go run ./bench/cmd/seed -url redis://127.0.0.1:PORT/0 -keys 1000000 -matching 100000
//
// With -url given more than once, the keyspace is split over the servers
// as a cluster of that many masters splits it (seed.SeedShards): give the
// masters of such a cluster in the order of their slots, or standalone
// servers that are to hold what they would.
//
// Point it at a Redis of your own: it writes over what is there.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/bench/seed"
)

func main() {
	var urls []string
	flag.Func("url", "the Redis to fill, as redis://HOST:PORT/DB (required; again for each shard)", func(u string) error {
		urls = append(urls, u)
		return nil
	})
	spec := seed.Spec{}
	flag.IntVar(&spec.Keys, "keys", 1_000_000, "keys in all")
	flag.IntVar(&spec.Matching, "matching", 100_000, "keys that match "+seed.Pattern)
	flag.IntVar(&spec.NoTTLEvery, "no-ttl-every", 50, "every Nth counter has no expiry (0: none)")
	flag.IntVar(&spec.HashEvery, "hash-every", 1000, "every Nth matching key is a hash (0: none)")
	flag.DurationVar(&spec.TTL, "ttl", 2*time.Hour, "expiry of the keys that have one, plus up to an hour")
	flag.BoolVar(&spec.Mixed, "mixed", false, "write the matching keys in every layout (counters, windows, GCRA, buckets, logs of 10 to 100,000 entries)")
	flag.Parse()
	if len(urls) == 0 {
		fmt.Fprintln(os.Stderr, "seed: -url is required: name the Redis to fill (never a shared one)")
		os.Exit(2)
	}
	start := time.Now()
	if err := run(urls, spec); err != nil {
		fmt.Fprintf(os.Stderr, "seed: %v\n", err)
		os.Exit(1)
	}
	over := ""
	if len(urls) > 1 {
		over = fmt.Sprintf(" over %d shards", len(urls))
	}
	fmt.Printf("seeded %d keys (%d matching %s)%s in %v\n", spec.Keys, spec.Matching, seed.Pattern, over, time.Since(start).Round(time.Millisecond))
}

func run(urls []string, spec seed.Spec) error {
	var shards []redis.UniversalClient
	for _, url := range urls {
		opt, err := redis.ParseURL(url)
		if err != nil {
			return err
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		shards = append(shards, rdb)
	}
	return seed.SeedShards(context.Background(), shards, spec)
}
