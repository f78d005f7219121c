package redisclient_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
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
