package seed

import (
	"context"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
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
