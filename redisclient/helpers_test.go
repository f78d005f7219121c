package redisclient_test

import (
	"context"
	"net"
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

// silentListener accepts connections and never answers, like a firewall
// that swallows traffic or a service that is not Redis.
func silentListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns = append(conns, c)
		}
	}()
	return l.Addr().String()
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
