package redisclient_test

import (
	"context"
	"errors"
	"fmt"
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

func TestScan(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	want := []string{"rl:a", "rl:b", "rl:new\nline", "rl:\xff\xfe", "views:1", "views:2"}
	for _, k := range want {
		s.Do(t, "SET", k, "1")
	}
	s.Do(t, "SET", "other:x", "1")
	s.Do(t, "HSET", "rl:hash", "f", "1")
	want = append(want, "rl:hash")
	c := connect(t, s)

	var got []string
	pages := 0
	// Overlapping patterns; COUNT 2 makes SCAN reply in several pages.
	err := c.Scan(context.Background(), []string{"rl:*", "rl:a", "views:*", "rl:?"}, 2, func(keys []string) error {
		pages++
		got = append(got, keys...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("Scan found %q\nwant exactly %q, each once", got, want)
	}
	if pages < 2 {
		t.Errorf("keys came in %d page(s); want them streamed page by page", pages)
	}

	stop := errors.New("stop")
	if err := c.Scan(context.Background(), []string{"*"}, 1, func([]string) error { return stop }); err != stop {
		t.Errorf("Scan returned %v, want the callback's error as is", err)
	}
}

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
// not a new connection's handshake (HELLO, CLIENT SETINFO), which is no
// read's cost. Read the counts once the reads are over: Fetch runs
// pipelines concurrently.
type pipelineCounter struct {
	mu                 sync.Mutex
	pipelines, singles int
}

func (h *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() != "hello" {
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
	s.Do(t, "HSET", keys[500], "f", "1") // another type costs a TYPE
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
	if h.pipelines > 4 || h.singles > 0 {
		t.Errorf("1000 keys took %d pipelines and %d single commands; want at most 4 pipelines", h.pipelines, h.singles)
	}
}

func TestSnapshot(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:1", "5", "EX", "60")
	s.Do(t, "SET", "rl:2", "7")
	s.Do(t, "SET", "other", "1")
	c := connect(t, s)
	obs := mustSnapshot(t, c, []string{"rl:*"}, 0)
	got := map[string]string{}
	for _, o := range obs {
		got[o.Key] = o.Raw
	}
	if len(got) != 2 || got["rl:1"] != "5" || got["rl:2"] != "7" {
		t.Errorf("Snapshot = %v, want rl:1=5 and rl:2=7", got)
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

// The caller's error ends the pass: fn is not called again, and the error
// is what Snapshot returns.
func TestSnapshotStopsAtTheCallersError(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	args := []any{"MSET"}
	for i := range 5000 {
		args = append(args, fmt.Sprintf("rl:%d", i), i)
	}
	s.Do(t, args...)
	c := connect(t, s)
	stop := errors.New("enough")
	calls := 0
	err := c.Snapshot(context.Background(), []string{"rl:*"}, 100, func([]model.Observation) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("Snapshot = %v after %d calls, want the caller's error after 1", err, calls)
	}
}

// Every key comes, and a key two patterns match is read once; a key may
// come twice only where the walk's stripes meet, or SCAN repeated it.
func TestSnapshotFindsEveryKey(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	const n = 3000
	msetNumbered(t, s, n, "rl:%d", "other:%d")
	c := connect(t, s)
	// COUNT 10: hundreds of SCAN calls, the walk in stripes that meet.
	obs := mustSnapshot(t, c, []string{"rl:*", "rl:1*"}, 10)
	seen := map[string]int{}
	for _, o := range obs {
		seen[o.Key]++
		if want := strings.TrimPrefix(o.Key, "rl:"); o.Raw != want {
			t.Errorf("%s = %q, want %q", o.Key, o.Raw, want)
		}
	}
	twice := 0
	for i := range n {
		switch k := fmt.Sprintf("rl:%d", i); seen[k] {
		case 1:
		case 2:
			twice++
		default:
			t.Errorf("%s read %d times, want once", k, seen[k])
		}
	}
	if twice > 20*(redisclient.SnapshotStripes-1) { // COUNT 10: a page or two where two stripes meet
		t.Errorf("%d keys read twice: the stripes overlap by more than a page, or patterns repeat keys", twice)
	}
}

// A keyspace smaller than SCAN's COUNT comes whole in the first reply:
// each key is read once, not again by each stripe from its start to the
// end.
func TestSnapshotReadsASmallKeyspaceOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	const n = 300
	msetNumbered(t, s, n, "rl:%d")
	c := connect(t, s)
	obs := mustSnapshot(t, c, []string{"rl:*"}, 0)
	seen := map[string]int{}
	for _, o := range obs {
		seen[o.Key]++
	}
	if len(obs) != n || len(seen) != n {
		t.Errorf("read %d keys, %d of them distinct, want each of the %d once", len(obs), len(seen), n)
	}
}
