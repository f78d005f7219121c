package redistest_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/redis/go-redis/v9"
)

func TestClusterServesEverySlotAndFailsOver(t *testing.T) {
	t.Parallel()
	c := redistest.StartCluster(t, 3, 1)
	ctx := context.Background()
	rdb := c.Client(t)

	shards, err := rdb.ClusterShards(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	covered, ranges := 0, 0
	for _, s := range shards {
		online := 0
		for _, n := range s.Nodes {
			if n.Health == "online" {
				online++
			}
		}
		for _, r := range s.Slots {
			covered += int(r.End - r.Start + 1)
			ranges++
		}
		if online != 2 {
			t.Errorf("slots %v are served by %d nodes online, want a master and a replica", s.Slots, online)
		}
	}
	if covered != 16384 || ranges != 3 || len(shards) != 3 {
		t.Fatalf("%d slots in %d ranges of %d shards are served, want 16384 in 3 of 3", covered, ranges, len(shards))
	}
	if got := len(c.Masters(t)); got != 3 {
		t.Fatalf("%d masters, want 3", got)
	}

	for i := range 30 {
		if err := rdb.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	old := c.Masters(t)[0]
	promoted := c.Failover(t, old)
	masters := c.Masters(t)
	if promoted == old || !slices.Contains(masters, promoted) || slices.Contains(masters, old) {
		t.Fatalf("after Failover(%s) the masters are %v; want %s among them instead", old.Addr, addrs(masters), promoted.Addr)
	}
	if got := old.Do(t, "ROLE").([]any)[0]; got != "slave" {
		t.Errorf("the old master's role is %v, want slave", got)
	}
	for i := range 30 {
		if v, err := rdb.Get(ctx, fmt.Sprint("k", i)).Int(); err != nil || v != i {
			t.Fatalf("after the failover k%d = %d, %v; want %d", i, v, err, i)
		}
	}
}

func TestSentinelFollowsFailover(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--requirepass", "pw")
	replica := redistest.Start(t, "--requirepass", "pw")
	s := redistest.StartSentinel(t, master, replica)
	if got := s.Master(t); got != master {
		t.Fatalf("the Sentinel names %s as the master, want %s", got.Addr, master.Addr)
	}
	if !strings.HasPrefix(s.URL(), "redis+sentinel://"+s.Addr+"/0?master_name=") {
		t.Errorf("URL() = %s", s.URL())
	}
	master.Do(t, "SET", "k", "1")

	if got := s.Failover(t); got != replica {
		t.Fatalf("Failover promoted %s, want %s", got.Addr, replica.Addr)
	}
	if got := replica.Do(t, "GET", "k"); got != "1" {
		t.Errorf("the new master lost k: GET = %v", got)
	}
	replica.Do(t, "SET", "k", "2")
	// The old master replicates the new one: a write there reaches it.
	waitGet(t, master, "k", "2")
}

// waitGet waits until key reads want on s.
func waitGet(t *testing.T, s *redistest.Server, key, want string) {
	t.Helper()
	for range 500 {
		if s.Do(t, "GET", key) == want {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never read %q on %s", key, want, s.Addr)
}

func TestStartTLS(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, mutual := range []bool{false, true} {
		t.Run(fmt.Sprint("requireClientCert=", mutual), func(t *testing.T) {
			t.Parallel()
			s := redistest.StartTLS(t, mutual)
			if !strings.HasPrefix(s.URL(), "rediss://") {
				t.Errorf("URL() = %s, want rediss://", s.URL())
			}
			if got := s.Do(t, "PING"); got != "PONG" {
				t.Fatalf("Do(PING) over TLS = %v", got)
			}
			plain := redis.NewClient(&redis.Options{Addr: s.Addr, DialerRetries: 1})
			defer plain.Close()
			if plain.Ping(ctx).Err() == nil {
				t.Error("the server answers without TLS")
			}
			noCert := redis.NewClient(&redis.Options{Addr: s.Addr, DialerRetries: 1, TLSConfig: &tls.Config{InsecureSkipVerify: true}})
			defer noCert.Close()
			if err := noCert.Ping(ctx).Err(); (err == nil) == mutual {
				t.Errorf("a client without a certificate: PING = %v", err)
			}
		})
	}
}

func addrs(servers []*redistest.Server) []string {
	var a []string
	for _, s := range servers {
		a = append(a, s.Addr)
	}
	return a
}
