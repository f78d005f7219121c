package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
)

// A go-redis Ring shards a redis_rate limiter's keys over three servers.
// One shard leaves the ring and comes back: while it is out, its keys are
// written on the others, and once back it holds its old copies again, so
// that each of those keys is counted twice. check flags those keys, and
// only those, naming both copies; a fourth server, another region with
// its own copies of some names, is never flagged. With one shard down,
// the others are still checked, and the check says which it could not.
func TestCheckFindsTheKeysARingWroteTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	a, b, c, region := redistest.Start(t), redistest.Start(t), redistest.Start(t), redistest.Start(t)
	shards := map[string]*redistest.Server{"a": a, "b": b, "c": c}
	addrs := func(names ...string) map[string]string {
		m := make(map[string]string)
		for _, n := range names {
			m[n] = shards[n].Addr
		}
		return m
	}
	ring := redis.NewRing(&redis.RingOptions{Addrs: addrs("a", "b", "c")})
	t.Cleanup(func() { ring.Close() })
	limiter := redis_rate.NewLimiter(ring)
	const users = 60
	hitAll := func() {
		t.Helper()
		for u := range users {
			if _, err := limiter.Allow(ctx, fmt.Sprintf("user%d", u), redis_rate.PerMinute(100)); err != nil {
				t.Fatal(err)
			}
		}
	}
	// holders returns, for each key of the limiter, the shards that hold it.
	holders := func() map[string][]string {
		t.Helper()
		held := make(map[string][]string)
		for _, name := range slices.Sorted(maps.Keys(shards)) {
			for _, key := range shards[name].Client(t).Keys(ctx, "rate:*").Val() {
				held[key] = append(held[key], name)
			}
		}
		return held
	}

	hitAll()
	before := holders()
	var onC []string // the keys c holds before it leaves: each on c alone
	for key, on := range before {
		if len(on) != 1 {
			t.Fatalf("%s is on %q before the ring changed", key, on)
		}
		if on[0] == "c" {
			onC = append(onC, key)
		}
	}
	if len(before) != users || len(onC) == 0 || len(onC) == users {
		t.Fatalf("%d keys, %d of them on c: the ring does not spread them", len(before), len(onC))
	}
	ring.SetAddrs(addrs("a", "b")) // c leaves the ring...
	hitAll()
	ring.SetAddrs(addrs("a", "b", "c")) // ...and comes back
	hitAll()

	// The servers themselves say which keys are on two shards: c's, each
	// written on a or b while c was out.
	var want []string
	for key, on := range holders() {
		if len(on) > 1 {
			want = append(want, key)
			if len(on) != 2 || on[1] != "c" && on[0] != "c" {
				t.Errorf("%s is on %q, want c and one other", key, on)
			}
		}
	}
	slices.Sort(want)
	if slices.Sort(onC); !slices.Equal(want, onC) {
		t.Fatalf("keys on two shards %q; want c's %q", want, onC)
	}

	// Another region holds some of the same names, through its own limiter.
	regional := redis_rate.NewLimiter(region.Client(t))
	for u := range 20 {
		if _, err := regional.Allow(ctx, fmt.Sprintf("user%d", u), redis_rate.PerMinute(100)); err != nil {
			t.Fatal(err)
		}
	}
	file := serversConfig(t, []*redistest.Server{a, b, c, region}, []string{"a", "b", "c", "us-east"},
		"\n[[shards]]\nname = \"limits\"\nservers = [\"a\", \"b\", \"c\"]\n")

	code, out, errOut := runIn("check", "--config", file, "--pattern", "rate:*", "--format", "json")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	var doc struct {
		KeysChecked int `json:"keys_checked"`
		Shared      []struct {
			Key    string `json:"key"`
			Group  string `json:"group"`
			Copies []struct {
				Server string `json:"server"`
				TTLMS  int64  `json:"ttl_ms"`
			} `json:"copies"`
		} `json:"shared"`
		Problems []json.RawMessage `json:"problems"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var flagged []string
	for _, s := range doc.Shared {
		flagged = append(flagged, s.Key)
		if len(s.Copies) != 2 || s.Copies[1].Server != "c" || s.Group != "limits" || s.Copies[0].TTLMS <= 0 || s.Copies[1].TTLMS <= 0 {
			t.Errorf("%s: %+v, want a copy on a or b and one on c, each with its TTL", s.Key, s)
		}
	}
	if slices.Sort(flagged); !slices.Equal(flagged, want) {
		t.Errorf("check flags %q; want exactly the keys on two shards, %q", flagged, want)
	}
	if doc.KeysChecked != users+len(want)+20 || len(doc.Problems) != 0 {
		t.Errorf("%d keys checked, %d problems; want %d and none", doc.KeysChecked, len(doc.Problems), users+len(want)+20)
	}

	// The text: a line a shared key, naming its copies.
	code, out, errOut = runIn("check", "--config", file, "--pattern", "rate:*")
	wantRun(t, code, out, errOut, exitProblems, "", "")
	var lines []string
	for _, line := range strings.Split(out, "\n") {
		if key, ok := strings.CutPrefix(line, "shared     "); ok {
			key, _, _ = strings.Cut(key, "  ")
			lines = append(lines, key)
			if !strings.Contains(line, ", c (value ") {
				t.Errorf("the line of %s names no copy on c: %s", key, line)
			}
		}
	}
	if slices.Sort(lines); !slices.Equal(lines, want) {
		t.Errorf("shared lines for %q, want %q:\n%s", lines, want, out)
	}
	t.Logf("%d of %d keys on two shards", len(want), users)

	// b is down: a and c are checked, c's keys written on a are still
	// flagged, and one line says b could not be.
	b.Stop()
	code, out, errOut = runIn("check", "--config", file, "--pattern", "rate:*")
	var onA int // c's keys written on a while c was out
	for _, key := range want {
		if strings.Contains(out, "shared     "+key+"  limits: a (") {
			onA++
		}
	}
	if code != exitProblems || errOut != "" || strings.Count(out, "\nunreached  b  could not be checked: ") != 1 || onA == 0 ||
		!strings.Contains(out, " on 3 of 4 servers;") {
		t.Errorf("with b down: exit %d, %d keys of a and c flagged, stderr %q:\n%s", code, onA, errOut, out)
	}
}
