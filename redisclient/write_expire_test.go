package redisclient_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// repairOf is the repair of key with window, as a counter.
func repairOf(key string, window time.Duration) model.Expiry {
	return model.Expiry{Key: key, Window: window, Shape: model.ShapeCounter}
}

func TestExpire(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "stuck", "150")
	s.Do(t, "SET", "long", "1", "EX", "100")
	s.Do(t, "SET", "short", "1", "EX", "10")
	s.Do(t, "HSET", "hash", "f", "1")
	s.Do(t, "SET", "text", "hello")

	for _, tc := range []struct {
		key     string
		outcome model.ExpiryOutcome
		typ     string
		ttl     time.Duration // 0: none
	}{
		{"stuck", model.ExpirySet, "string", time.Minute},
		{"long", model.ExpiryHadTTL, "string", 100 * time.Second}, // never shortened
		{"short", model.ExpiryHadTTL, "string", 10 * time.Second}, // never replaced
		{"hash", model.ExpiryChanged, "hash", 0},                  // no counter: it would vanish, unasked
		{"text", model.ExpiryChanged, "string", 0},
	} {
		t.Run(tc.key, func(t *testing.T) {
			got, obs, err := c.Expire(ctx, repairOf(tc.key, time.Minute))
			if err != nil {
				t.Fatalf("Expire(%s): %v", tc.key, err)
			}
			if got != tc.outcome || obs.Key != tc.key || obs.Type != tc.typ {
				t.Errorf("Expire(%s) = %v, %+v; want outcome %v, type %s", tc.key, got, obs, tc.outcome, tc.typ)
			}
			if tc.ttl == 0 {
				if obs.PTTL != model.PTTLNoExpiry || pttl(t, s, tc.key) != model.PTTLNoExpiry {
					t.Errorf("%s: PTTL %d returned, %d on the server; want no TTL", tc.key, obs.PTTL, pttl(t, s, tc.key))
				}
				return
			}
			checkTTL(t, tc.key+" returned", obs.PTTL, tc.ttl)
			checkTTL(t, tc.key+" on the server", pttl(t, s, tc.key), tc.ttl)
		})
	}
	// Other layouts are checked by type: a log keeps being a sorted set, a
	// bucket a hash, and the key comes back as the reader reads it.
	s.Do(t, "ZADD", "log", "1", "a")
	s.Do(t, "HSET", "bucket", "tokens", "3")
	s.Do(t, "SET", "was-a-log", "1")
	for _, tc := range []struct {
		key     string
		shape   model.Shape
		outcome model.ExpiryOutcome
		typ     string
	}{
		{"log", model.Shape{Layout: model.LayoutLog, Type: "zset"}, model.ExpirySet, "zset"},
		{"bucket", model.Shape{Layout: model.LayoutBucket, Type: "hash"}, model.ExpirySet, "hash"},
		{"was-a-log", model.Shape{Layout: model.LayoutLog, Type: "zset"}, model.ExpiryChanged, "string"},
		{"hash", model.Shape{Layout: model.LayoutBucket, Type: "hash"}, model.ExpirySet, "hash"},
	} {
		t.Run(tc.key+" as "+tc.shape.Layout.String(), func(t *testing.T) {
			got, obs, err := c.Expire(ctx, model.Expiry{Key: tc.key, Window: time.Minute, Shape: tc.shape})
			if err != nil || got != tc.outcome || obs.Type != tc.typ {
				t.Errorf("Expire(%s as %+v) = %v, %+v, %v; want %v, type %s", tc.key, tc.shape, got, obs, err, tc.outcome, tc.typ)
			}
			if tc.outcome == model.ExpirySet {
				checkTTL(t, tc.key+" returned", obs.PTTL, time.Minute)
			} else if p := pttl(t, s, tc.key); p != model.PTTLNoExpiry {
				t.Errorf("%s, changed, got PTTL %d", tc.key, p)
			}
		})
	}

	if _, obs, _ := c.Expire(ctx, repairOf("stuck", time.Hour)); obs.Raw != "150" {
		t.Errorf("the value came back as %q, want 150", obs.Raw)
	}

	got, obs, err := c.Expire(ctx, repairOf("gone", time.Minute))
	if err != nil || got != model.ExpiryGone || obs.Type != "none" || obs.PTTL != model.PTTLMissing {
		t.Errorf("Expire(gone) = %v, %+v, %v; want it gone, and no error", got, obs, err)
	}
	if s.Do(t, "EXISTS", "gone") != int64(0) {
		t.Error("a repair created a key")
	}
	_, _, err = c.Expire(ctx, repairOf("stuck", 0))
	checkSentence(t, err, "the window 0s is not a TTL: give at least 1ms", "")
}

// TestExpireLeavesWhatChangedSinceTheRead is the race of a repair: keys
// are read as stuck counters, another client changes some of them, and
// only then does the repair arrive. A key that is no longer a counter
// without a TTL is left exactly as the other client made it, and each
// key's outcome says what happened to it.
func TestExpireLeavesWhatChangedSinceTheRead(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	const n = 200
	for i := range n {
		s.Do(t, "SET", fmt.Sprintf("ratelimit:%03d", i), "150")
	}
	read := mustSnapshot(t, c, []string{"ratelimit:*"}, 100)
	slices.SortFunc(read, func(a, b model.Observation) int { return strings.Compare(a.Key, b.Key) })
	read = slices.CompactFunc(read, func(a, b model.Observation) bool { return a.Key == b.Key }) // SCAN may return a key twice
	if len(read) != n {
		t.Fatalf("read %d keys, want %d", len(read), n)
	}

	// Between the read and the repair, by key number modulo 6.
	changes := []struct {
		do      func(key string)
		outcome model.ExpiryOutcome
	}{
		{func(string) {}, model.ExpirySet},
		{func(k string) { s.Do(t, "DEL", k); s.Do(t, "HSET", k, "f", "1") }, model.ExpiryChanged},
		{func(k string) { s.Do(t, "DEL", k) }, model.ExpiryGone},
		{func(k string) { s.Do(t, "SET", k, "blocked") }, model.ExpiryChanged},
		{func(k string) { s.Do(t, "EXPIRE", k, "500") }, model.ExpiryHadTTL},
		{func(k string) { s.Do(t, "INCRBYFLOAT", k, "0.5") }, model.ExpirySet}, // a counter still
	}
	want := map[string]model.ExpiryOutcome{}
	for i, o := range read {
		ch := changes[i%len(changes)]
		ch.do(o.Key)
		want[o.Key] = ch.outcome
	}

	var tally model.RepairTally
	for _, o := range read {
		counter := model.NewCounter(&o, &model.Rules{})
		shape, ok := model.ShapeOf(&counter)
		if !ok {
			t.Fatalf("%s was read as no counter: %+v", o.Key, o)
		}
		got, after, err := c.Expire(ctx, model.Expiry{Key: o.Key, Window: time.Minute, Shape: shape})
		if err != nil {
			t.Fatalf("Expire(%s): %v", o.Key, err)
		}
		tally.Add(got)
		if got != want[o.Key] {
			t.Errorf("%s: outcome %v, want %v (it holds %s now)", o.Key, got, want[o.Key], model.Holding(after))
		}
	}
	for key, outcome := range want {
		ttl := pttl(t, s, key)
		switch outcome {
		case model.ExpirySet:
			checkTTL(t, key, ttl, time.Minute)
		case model.ExpiryChanged:
			if ttl != model.PTTLNoExpiry {
				t.Errorf("%s, no longer a counter, got a TTL: %dms", key, ttl)
			}
		case model.ExpiryGone:
			if ttl != model.PTTLMissing {
				t.Errorf("%s, deleted, exists again: PTTL %d", key, ttl)
			}
		case model.ExpiryHadTTL:
			checkTTL(t, key, ttl, 500*time.Second) // neither shortened nor replaced
		case model.ExpiryFailed, model.ExpiryFieldTTLs: // no key's outcome here: the tally below counts none
		}
	}
	if tally.Total() != n || tally.Count(model.ExpiryGone) != n/6 || tally.Count(model.ExpiryFailed) != 0 {
		t.Errorf("tally %s: want all %d keys counted, %d of them gone", tally, n, n/6)
	}
}

// TestExpireAgreesWithModelOnCounters: the script's idea of a counter is
// model's, so a key the dashboard shows as a counter is repaired and any
// other string is left alone.
func TestExpireAgreesWithModelOnCounters(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	for _, v := range []string{
		"0", "-0", "7", "-7", "007", "+5", "1.5", ".5", "5.", "-.5", "1e3", "1E+3", "2.5e-3",
		"1e-400", "9223372036854775808", "99999999999999999999",
		"0x10", "0X1a", "-0x10", "0x1.8p3", "0x.8",
		"", "inf", "-inf", "Infinity", "nan", "1e400", "-1e400", " 7", "7 ", "7\n", "\t7",
		"0x", "0x.", "0x1p", "1e", "e5", ".", "+", "-", "1.2.3", "--1", "+-1", "1_000", "0b101", "1,5", "abc",
		strings.Repeat("1", 300), strings.Repeat("1", 5119), "0." + strings.Repeat("1", 5120),
	} {
		s.Do(t, "SET", "k", v)
		got, _, err := c.Expire(ctx, repairOf("k", time.Minute))
		if err != nil {
			t.Fatalf("%q: %v", v, err)
		}
		want := model.ExpiryChanged
		if model.ParseValue(v).Kind != model.KindNone {
			want = model.ExpirySet
		}
		if got != want {
			t.Errorf("%.20q: outcome %v; model reads it as kind %v, so want %v", v, got, model.ParseValue(v).Kind, want)
		}
	}
}

// TestExpireSendsWhatItShows: the command the server runs is
// model.Expiry's Command, and the text shown for it is that command.
func TestExpireSendsWhatItShows(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	for _, e := range []model.Expiry{repairOf("ratelimit:a", time.Minute), repairOf("ratelimit:b b", 1500*time.Millisecond)} {
		t.Run(e.Key, func(t *testing.T) {
			s.Do(t, "SET", e.Key, "3")
			m := s.Monitor(t)
			if got, _, err := c.Expire(ctx, e); err != nil || got != model.ExpirySet {
				t.Fatalf("Expire(%s) = %v, %v", e.Key, got, err)
			}
			ranAsShown(t, m, e)
		})
	}
}

// ranAsShown checks that the next expiry command the server ran (as m
// saw it) is e's Command, run by the repair script, and that the text
// shown for e is that command.
func ranAsShown(t *testing.T, m *redistest.Monitor, e model.Expiry) {
	t.Helper()
	sent, byScript := m.Next(t, e.Command()[0])
	if !slices.Equal(sent, e.Command()) || !byScript {
		t.Errorf("the server ran %q (by a script: %v); want %q, by the repair script", sent, byScript, e.Command())
	}
	if shown := e.String(); !strings.HasPrefix(shown, strings.Join(sent, " ")+" (") {
		t.Errorf("shown %q, sent %q", shown, sent)
	}
}

// TestExpireAfterScriptFlush: the repair survives a server that lost its
// script cache, through EVAL.
func TestExpireAfterScriptFlush(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "a", "1")
	s.Do(t, "SET", "b", "1")
	if _, _, err := c.Expire(ctx, repairOf("a", time.Minute)); err != nil {
		t.Fatal(err)
	}
	s.Do(t, "SCRIPT", "FLUSH")
	evals := s.CommandCalls(t)["eval"]
	if got, _, err := c.Expire(ctx, repairOf("b", time.Minute)); err != nil || got != model.ExpirySet {
		t.Fatalf("repair after SCRIPT FLUSH: %v, %v", got, err)
	}
	if s.CommandCalls(t)["eval"] != evals+1 {
		t.Error("the script did not go through EVAL after NOSCRIPT")
	}
}

// A Redis refusal (here a replica's READONLY) is an error that names the
// repair as it is shown, and counts as refused.
func TestExpireRefusedByAReplica(t *testing.T) {
	t.Parallel()
	primary, _ := startConnected(t)
	primary.Do(t, "SET", "k", "1")
	replica, c := startConnected(t, "--replicaof", "127.0.0.1", fmt.Sprint(primary.Port))
	// The repair reaches its write only for a counter: wait for the copy.
	deadline := time.Now().Add(10 * time.Second)
	for replica.Do(t, "EXISTS", "k") != int64(1) {
		if time.Now().After(deadline) {
			t.Fatal("the replica never got k")
		}
		time.Sleep(10 * time.Millisecond)
	}
	got, _, err := c.Expire(context.Background(), repairOf("k", time.Minute))
	if got != model.ExpiryFailed || !redisclient.Refused(err) {
		t.Fatalf("Expire on a replica = %v, %v; want it refused", got, err)
	}
	checkSentence(t, err, "PEXPIRE k 60000 NX (if still a counter without a TTL) failed: "+replica.Addr+" is a read-only replica", "")
}
