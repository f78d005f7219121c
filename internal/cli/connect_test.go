package cli

import (
	"bytes"
	"context"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// connected returns a client of the Redis cfg names, closed when the test
// ends.
func connected(t *testing.T, cfg config.Config) *redisclient.Client {
	t.Helper()
	client, err := connect(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return client
}

// ctrl+c before Redis answers a snapshot, a check or a repair is one
// sentence, not "context canceled": while connecting, and while reading.
func TestReadInterrupted(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "k:1", "1")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	cfg := config.Config{Redis: config.Redis{URL: s.URL()}, Patterns: []string{"*"}}
	if _, err := connect(ctx, cfg, io.Discard); !errors.Is(err, errConnectInterrupted) {
		t.Errorf("connect after ctrl+c: %v, want %q", err, errConnectInterrupted)
	}
	if _, err := readSorted(ctx, connected(t, cfg), cfg, "test"); !errors.Is(err, errInterrupted) {
		t.Errorf("readSorted after ctrl+c: %v, want %q", err, errInterrupted)
	}
}

// A server that accepts and never answers holds a connect until its
// timeout: after half a second countertop says where it is connecting, and
// ctrl+c stops it with one sentence.
func TestConnectSlowThenInterrupted(t *testing.T) {
	t.Parallel()
	addr := redistest.Silent(t)
	url := "redis://" + addr + "/0"
	for _, tc := range []struct {
		name  string
		redis config.Redis
		says  string
	}{
		{"server", config.Redis{URL: url}, url},
		{"Sentinels", config.Redis{URL: "redis://127.0.0.1:1/0", SentinelMaster: "rl", Sentinels: []string{addr}},
			"master rl through the Sentinels at " + addr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(700*time.Millisecond, cancel)
			var errOut bytes.Buffer
			cfg := config.Config{Redis: tc.redis, Patterns: []string{"*"}}
			if _, err := connect(ctx, cfg, &errOut); !errors.Is(err, errConnectInterrupted) {
				t.Errorf("connect, ctrl+c while connecting to %s: %v, want %q", tc.says, err, errConnectInterrupted)
			}
			if want := "countertop: connecting to " + tc.says + "... (ctrl+c to stop)\n"; errOut.String() != want {
				t.Errorf("stderr %q, want %q", errOut.String(), want)
			}
		})
	}
}

// A pass reads on half the cores and gives them all back for what
// follows (see report.ReadOnHalfTheCores), also when passes overlap, as this
// package's tests do: the last to end restores what the first found.
// Not parallel, so that no other test's pass runs meanwhile.
func TestOverlappingPassesGiveTheCoresBack(t *testing.T) {
	s := redistest.Start(t)
	s.Do(t, "SET", "k:1", "1")
	cfg := config.Config{Redis: config.Redis{URL: s.URL()}, Patterns: []string{"k:*"}}
	before := runtime.GOMAXPROCS(0)

	// a starts, b starts, a ends, b ends.
	aIn, bIn, aDone, bDone := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	during := 0
	a, b := connected(t, cfg), connected(t, cfg)
	go func() {
		defer close(aDone)
		readAll(context.Background(), a, cfg, "a", func([]model.Observation) {
			during = runtime.GOMAXPROCS(0)
			close(aIn)
			<-bIn
		})
	}()
	<-aIn
	go func() {
		defer close(bDone)
		readAll(context.Background(), b, cfg, "b", func([]model.Observation) {
			close(bIn)
			<-aDone
		})
	}()
	<-bDone
	if want := max(1, before/2); during != want {
		t.Errorf("GOMAXPROCS during a pass: %d, want %d (half of %d)", during, want, before)
	}
	if after := runtime.GOMAXPROCS(0); after != before {
		t.Errorf("GOMAXPROCS %d before two overlapping passes, %d after", before, after)
	}
}
