package redisclient_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// connect connects to s, failing the test on error.
func connect(t *testing.T, s *redistest.Server) *redisclient.Client {
	t.Helper()
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), Password: s.Password})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// startConnected starts a Redis server with args for the test and
// connects to it.
func startConnected(t *testing.T, args ...string) (*redistest.Server, *redisclient.Client) {
	t.Helper()
	s := redistest.Start(t, args...)
	return s, connect(t, s)
}

// msetNumbered sets n keys for each of the formats, key i (a format of
// one %d) to i, in one MSET.
func msetNumbered(t *testing.T, s *redistest.Server, n int, formats ...string) {
	t.Helper()
	args := []any{"MSET"}
	for i := range n {
		for _, f := range formats {
			args = append(args, fmt.Sprintf(f, i), i)
		}
	}
	s.Do(t, args...)
}

// mustSnapshot is snapshot, failing the test at once on an error.
func mustSnapshot(t *testing.T, c *redisclient.Client, patterns []string, count int64) []model.Observation {
	t.Helper()
	obs, err := snapshot(context.Background(), c, patterns, count)
	if err != nil {
		t.Fatal(err)
	}
	return obs
}

// snapshot runs c.Snapshot and returns every key it read.
func snapshot(ctx context.Context, c *redisclient.Client, patterns []string, count int64) ([]model.Observation, error) {
	var all []model.Observation
	err := c.Snapshot(ctx, patterns, count, func(obs []model.Observation) error {
		all = append(all, obs...)
		return nil
	})
	return all, err
}
