package redisclient_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
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

// connectErr connects with o and returns the error, failing the test when
// there is none.
func connectErr(t *testing.T, o redisclient.Options) error {
	t.Helper()
	c, err := redisclient.Connect(context.Background(), o)
	if err == nil {
		c.Close()
		t.Fatalf("Connect(%+v) succeeded", o)
	}
	return err
}

// checkSentence checks that err is explained, says want, keeps a single
// line, and does not leak secret.
func checkSentence(t *testing.T, err error, want, secret string) {
	t.Helper()
	var e *redisclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("error is not explained: %T %v", err, err)
	}
	msg := err.Error()
	if !says(msg, want) {
		t.Errorf("error = %q\nwant it to say %q", msg, want)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if secret != "" && strings.Contains(msg, secret) {
		t.Errorf("error shows the password: %q", msg)
	}
}

// connectURL connects with o, failing the test on error.
func connectURL(t *testing.T, o redisclient.Options) *redisclient.Client {
	t.Helper()
	c, err := redisclient.Connect(context.Background(), o)
	if err != nil {
		t.Fatalf("Connect(%s): %v", o.URL, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// caseName names a table case after its input: the non-empty parts, with
// '/' replaced, since go test -run splits a name at '/'.
func caseName(parts ...string) string {
	return strings.ReplaceAll(strings.Join(slices.DeleteFunc(parts, func(p string) bool { return p == "" }), " "), "/", "_")
}
