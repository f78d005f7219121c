package redisclient_test

import (
	"context"
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

// snapshot runs c.Snapshot and returns every key it read.
func snapshot(ctx context.Context, c *redisclient.Client, patterns []string, count int64) ([]model.Observation, error) {
	var all []model.Observation
	err := c.Snapshot(ctx, patterns, count, func(obs []model.Observation) error {
		all = append(all, obs...)
		return nil
	})
	return all, err
}
