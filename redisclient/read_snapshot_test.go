package redisclient_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

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
