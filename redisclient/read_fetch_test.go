package redisclient_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

func TestFetch(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "int", "42")
	s.Do(t, "SET", "float", "3.5", "PX", "60000")
	s.Do(t, "SET", "text", "hello\x1b[31m")
	s.Do(t, "HSET", "hash", "f", "1")
	s.Do(t, "RPUSH", "list", "a")
	s.Do(t, "SET", "huge", strings.Repeat("x", 100_000))
	c := connect(t, s)

	before := time.Now()
	obs, err := c.Fetch(context.Background(), []string{"int", "float", "text", "hash", "missing", "list", "huge"})
	if err != nil {
		t.Fatal(err)
	}
	after := time.Now()
	if len(obs) != 7 {
		t.Fatalf("got %d observations, want 7", len(obs))
	}
	for _, o := range obs {
		if o.At.Before(before) || o.At.After(after) {
			t.Errorf("%s: At = %v, not the time the reply arrived", o.Key, o.At)
		}
	}
	type row struct {
		Key, Type, Raw string
		PTTL           int64
	}
	var got []row
	for _, o := range obs {
		r := row{o.Key, o.Type, o.Raw, o.PTTL}
		if o.Key == "float" && o.PTTL > 0 && o.PTTL <= 60000 {
			r.PTTL = 60000 // any positive TTL up to the one set
		}
		if o.Key == "huge" {
			r.Raw = fmt.Sprint(len(o.Raw))
		}
		got = append(got, r)
	}
	want := []row{
		{"int", "string", "42", model.PTTLNoExpiry},
		{"float", "string", "3.5", 60000},
		{"text", "string", "hello\x1b[31m", model.PTTLNoExpiry},
		{"hash", "hash", "", model.PTTLNoExpiry},
		{"missing", "none", "", model.PTTLMissing},
		{"list", "list", "", model.PTTLNoExpiry},
		{"huge", "string", "65536", model.PTTLNoExpiry},
	}
	if !slices.Equal(got, want) {
		t.Errorf("Fetch:\n got %#v\nwant %#v", got, want)
	}
}

// pipelineCounter counts round trips: pipelines and single commands, but
// not a new connection's handshake (HELLO, CLIENT SETINFO, CLIENT
// SETNAME), which is no read's cost. Read the counts once the reads are over: Fetch runs
// pipelines concurrently.
type pipelineCounter struct {
	mu                 sync.Mutex
	pipelines, singles int
}

func (h *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "hello" && cmd.Name() != "client" {
			h.count(&h.singles)
		}
		return next(ctx, cmd)
	}
}
func (h *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if cmds[0].Name() != "client" {
			h.count(&h.pipelines)
		}
		return next(ctx, cmds)
	}
}

func (h *pipelineCounter) count(n *int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*n++
}

func TestFetchIsPipelined(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	keys := make([]string, 1000)
	args := []any{"MSET"}
	for i := range keys {
		keys[i] = fmt.Sprintf("k:%04d", i)
		args = append(args, keys[i], i)
	}
	s.Do(t, args...)
	s.Do(t, "DEL", keys[500])
	s.Do(t, "HSET", keys[500], "f", "1") // another type costs a TYPE, then HLEN, then HGETALL
	c := connect(t, s)
	ctx := context.Background()
	var h pipelineCounter
	c.Universal().AddHook(&h)

	obs, err := c.Fetch(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(obs) != len(keys) || obs[999].Raw != "999" || obs[500].Type != "hash" {
		t.Fatalf("Fetch read %d keys, last %q, [500] a %s", len(obs), obs[999].Raw, obs[500].Type)
	}
	// A sixth reads the hashes' field TTLs (HPTTL): on every read where
	// the server has them, and once only where it does not know HPTTL.
	if h.pipelines > 6 || h.singles > 0 {
		t.Errorf("1000 keys took %d pipelines and %d single commands; want at most 6 pipelines", h.pipelines, h.singles)
	}
	want := 5
	if s.Kind(t).FieldTTL {
		want = 6
	}
	h.mu.Lock()
	h.pipelines, h.singles = 0, 0
	h.mu.Unlock()
	if _, err := c.Fetch(ctx, keys); err != nil {
		t.Fatal(err)
	}
	if h.pipelines > want || h.singles > 0 {
		t.Errorf("1000 keys read again took %d pipelines and %d single commands; want at most %d pipelines", h.pipelines, h.singles, want)
	}
}

func TestReadErrorsAreExplained(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.Stop()
	ctx := context.Background()
	want := "could not connect to " + s.Addr + ": connection refused"
	_, err := c.Fetch(ctx, []string{"k"})
	checkSentence(t, err, want, "")
	err = c.Scan(ctx, []string{"*"}, 0, func([]string) error { return nil })
	checkSentence(t, err, want, "")
	_, err = snapshot(ctx, c, []string{"*"}, 0)
	checkSentence(t, err, want, "")
}

// TestReadKeyTheUserMayNotRead watches every key as a user who may read
// only some: the read fails with a sentence that names the key (escaped)
// and the way out, rather than hiding the key or blaming no key at all.
func TestReadKeyTheUserMayNotRead(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "ACL", "SETUSER", "reader", "on", ">readerpw", "~ratelimit:*", "+@read", "+@connection")
	s.Do(t, "SET", "ratelimit:a", "1")
	s.Do(t, "SET", "other:\x1b[31m1", "1")
	c := connectURL(t, redisclient.Options{URL: "redis://reader:readerpw@" + s.Addr})
	ctx := context.Background()

	want := `the Redis user may not read other:\e[31m1 on ` + s.Addr + " (NOPERM …key…) — watch only keys it may read with --pattern, or grant it with ACL SETUSER"
	_, err := snapshot(ctx, c, []string{"*"}, 0)
	checkSentence(t, err, want, "readerpw")
	if err != nil && !saysExactly(err.Error(), want) {
		t.Errorf("Snapshot: %q\nwant exactly %q", err, want)
	}
	if !redis.IsPermissionError(err) {
		t.Errorf("the cause is lost: %v", err)
	}
	f := startPoll(t, c, redisclient.PollOptions{Patterns: []string{"*"}, Interval: 50 * time.Millisecond})
	f.waitFor("the poll to say why it cannot read", func() bool { return f.state.LastError != "" })
	if !saysExactly(f.state.LastError, want) {
		t.Errorf("the poll says %q\nwant %q", f.state.LastError, want)
	}
	if _, err := snapshot(ctx, c, []string{"ratelimit:*"}, 0); err != nil {
		t.Errorf("Snapshot of the keys the user may read: %v", err)
	}
}

// In a cluster each master's keys are read on their own: a master that is
// down holds up none of the others' keys, and the error, once they are
// read, names it. The caller's error ends the read at once and wins over
// any master's, and fn is not called again.
func TestFetchInAClusterReadsTheMastersThatAnswer(t *testing.T) {
	t.Parallel()
	rc := redistest.StartCluster(t, 3, 0, "--cluster-node-timeout", "60000")
	want := fillCluster(t, rc)
	keys := slices.Sorted(maps.Keys(want))
	c := connectURL(t, redisclient.Options{URL: rc.URL()})
	ctx := context.Background()
	dead := rc.Nodes[1]
	onDead := 0
	for _, k := range keys {
		if m, err := rc.Client(t).MasterForKey(ctx, k); err == nil && m.Options().Addr == dead.Addr {
			onDead++
		}
	}
	dead.Stop()

	read := map[string]bool{}
	err := c.FetchBatches(ctx, keys, 10, func(obs []model.Observation) error {
		for _, o := range obs {
			read[o.Key] = true
		}
		return nil
	})
	if err == nil || !strings.HasPrefix(err.Error(), dead.Addr+", a master of the cluster, refused the connection") {
		t.Errorf("with %s down: %v; want the error to name it", dead.Addr, err)
	}
	if len(read) != len(keys)-onDead {
		t.Errorf("with one master of three down, %d keys were read; want the other masters' %d", len(read), len(keys)-onDead)
	}

	stop := errors.New("enough")
	calls := 0
	err = c.FetchBatches(ctx, keys, 10, func([]model.Observation) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("FetchBatches = %v after %d calls; want the caller's error after 1", err, calls)
	}
}
