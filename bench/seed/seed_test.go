package seed

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

func TestSeed(t *testing.T) {
	s := redistest.Start(t)
	rdb := s.Client(t)
	ctx := context.Background()
	spec := Spec{Keys: 2500, Matching: 300, NoTTLEvery: 10, HashEvery: 100, TTL: time.Hour}
	if err := Seed(ctx, rdb, spec); err != nil {
		t.Fatal(err)
	}
	if n := rdb.DBSize(ctx).Val(); n != 2500 {
		t.Errorf("DBSIZE = %d, want 2500", n)
	}
	var matched, immortal, hashes int
	iter := rdb.Scan(ctx, 0, Pattern, 1000).Iterator()
	for iter.Next(ctx) {
		key := iter.Val()
		matched++
		if rdb.Type(ctx, key).Val() == "hash" {
			hashes++
		}
		if rdb.PTTL(ctx, key).Val() < 0 {
			immortal++
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	// Of 300 counters, 3 are hashes; of the rest, every tenth has no TTL.
	if matched != 300 || hashes != 3 || immortal != 27 {
		t.Errorf("%d keys match %s, %d hashes, %d without TTL; want 300, 3, 27", matched, Pattern, hashes, immortal)
	}
	if ttl := rdb.TTL(ctx, OtherKey(0)).Val(); ttl < time.Hour || ttl > 2*time.Hour {
		t.Errorf("TTL of %s = %v, want between the TTL and an hour more", OtherKey(0), ttl)
	}
	if err := Seed(ctx, rdb, Spec{Keys: 1, Matching: 2}); err == nil {
		t.Error("Seed wrote 2 matching keys among 1")
	}
}

// A mixed keyspace holds each layout as countertop reads it: the
// benchmark of a mixed snapshot measures the reads it says it does.
func TestSeedMixed(t *testing.T) {
	s := redistest.Start(t)
	ctx := context.Background()
	spec := Spec{Keys: 1600, Matching: 1400, NoTTLEvery: 7, TTL: time.Hour, Mixed: true}
	if err := Seed(ctx, s.Client(t), spec); err != nil {
		t.Fatal(err)
	}
	rules := model.Rules{Fallback: model.Rule{Limit: 100, Window: time.Minute, ExpectTTL: true}}
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: s.URL(), Rules: &rules})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	layouts := map[string]int{}
	seen := map[string]*model.Counter{} // a snapshot may read a key twice
	var counters []*model.Counter
	err = c.Snapshot(ctx, []string{Pattern}, 0, func(obs []model.Observation) error {
		for i := range obs {
			if seen[obs[i].Key] == nil {
				counter := model.NewCounter(&obs[i], &rules)
				seen[obs[i].Key] = &counter
				counters = append(counters, &counter)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// As check reads them: in key order, a bucket's two strings paired.
	slices.SortFunc(counters, func(a, b *model.Counter) int { return model.CompareKeys(a.Key, b.Key) })
	model.PairBuckets(counters, &rules)
	for _, counter := range counters {
		want := strings.Split(counter.Key, ":")[1]
		switch {
		case want == "zlog", want == "llog":
			want = "log"
		case want == "tokens", want == "pair" && strings.HasSuffix(counter.Key, ":available"):
			want = "bucket"
		case want == "pair":
			want = "timestamp"
		case want == "nswindow":
			want = "window"
		case want == "json", want == "msgpack":
			want = "counter"
		}
		if got := counter.Layout.String(); got != want {
			t.Errorf("%s read as %s (%s)", counter.Key, got, counter.Clue)
		}
		layouts[want]++
	}
	want := map[string]int{"counter": 500, "window": 200, "gcra": 100, "bucket": 250, "timestamp": 50, "log": 200, "block": 100}
	if !maps.Equal(layouts, want) {
		t.Errorf("layouts %v; want %v", layouts, want)
	}
	if n := s.Client(t).ZCard(ctx, MixedKey(8+99*mixes, 0)).Val(); n != 1000 { // the 100th sorted-set log
		t.Errorf("the 100th log holds %d entries, want %d", n, LogSize(99))
	}
}

func TestLogSize(t *testing.T) {
	for j, want := range map[int]int{0: 10, 8: 10, 9: 100, 99: 1000, 999: 10_000, 9999: 100_000, 99_999: 100_000, 19: 100} {
		t.Run(strconv.Itoa(j), func(t *testing.T) {
			if got := LogSize(j); got != want {
				t.Errorf("LogSize(%d) = %d, want %d", j, got, want)
			}
		})
	}
}

// Standalone servers seeded as shards hold what the masters of a cluster
// hold: each master of a real cluster, seeded directly, accepts every key
// it is given (a key of another master's slot would be refused with
// MOVED), the hash-tagged keys of a mixed keyspace among them.
func TestSeedShardsAsClusterMasters(t *testing.T) {
	c := redistest.StartCluster(t, 3, 0)
	ctx := context.Background()
	var shards []redis.UniversalClient
	for _, n := range c.Nodes { // in the order of their slots
		shards = append(shards, n.Client(t))
	}
	for _, spec := range []Spec{
		{Keys: 3000, Matching: 600, NoTTLEvery: 10, HashEvery: 100, TTL: time.Hour},
		{Keys: 1600, Matching: 1400, TTL: time.Hour, Mixed: true},
	} {
		for _, s := range shards {
			if err := s.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := SeedShards(ctx, shards, spec); err != nil {
			t.Fatalf("mixed %t: %v", spec.Mixed, err)
		}
		var sizes []int64
		var sum int64
		for _, s := range shards {
			n := s.DBSize(ctx).Val()
			sizes = append(sizes, n)
			sum += n
		}
		if sum != int64(spec.Keys) || slices.Contains(sizes, 0) {
			t.Errorf("mixed %t: the masters hold %v keys, want %d in all, some on each", spec.Mixed, sizes, spec.Keys)
		}
	}
}
