package redisclient_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// A hash field counter is incremented as the limiter that writes it does
// (HINCRBY), and the hash gets the window as its TTL in the same step when
// it has none; a TTL that runs is kept, never pushed back.
func TestIncrField(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "HSET", "with-ttl", "hits", "5", "other", "1")
	s.Do(t, "EXPIRE", "with-ttl", "100")
	s.Do(t, "HSET", "no-ttl", "hits", "5")
	s.Do(t, "HSET", "float", "hits", "2.5")

	for _, tc := range []struct {
		name, key, by string
		window        time.Duration
		value, ran    string
		ttl           time.Duration // 0: no TTL
		gave          bool
	}{
		{"the first hit creates the hash with the window", "new", "1", time.Minute, "1", "HINCRBY", time.Minute, false},
		{"a running TTL is kept", "with-ttl", "1", time.Minute, "6", "HINCRBY", 100 * time.Second, false},
		{"a hash without a TTL gets one, and says so", "no-ttl", "-2", time.Minute, "3", "HINCRBY", time.Minute, true},
		{"window 0 sets no TTL", "plain", "7", 0, "7", "HINCRBY", 0, false},
		{"a decimal field takes a whole amount as HINCRBYFLOAT", "float", "1", time.Minute, "3.5", "HINCRBYFLOAT", time.Minute, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := c.IncrField(ctx, tc.key, "hits", by(t, tc.by), tc.window)
			if err != nil {
				t.Fatal(err)
			}
			if r.Value() != tc.value || r.Command != tc.ran || r.GaveTTL != tc.gave || r.Field != "hits" {
				t.Errorf("IncrField: value %q, ran %q, gave TTL %v; want %q, %q, %v", r.Value(), r.Command, r.GaveTTL, tc.value, tc.ran, tc.gave)
			}
			if got := s.Do(t, "HGET", tc.key, "hits"); got != tc.value {
				t.Errorf("the server holds %v, want %q", got, tc.value)
			}
			// The observation is the hash as the dashboard reads it, so the
			// row shows the new count at once.
			if r.Type != "hash" || !hasField(r.Fields, "hits", tc.value) {
				t.Errorf("observation %+v does not hold hits = %s", r.Observation, tc.value)
			}
			if tc.ttl == 0 {
				if r.PTTL != -1 || pttl(t, s, tc.key) != -1 {
					t.Errorf("PTTL %d (server %d), want no expiry", r.PTTL, pttl(t, s, tc.key))
				}
				return
			}
			checkTTL(t, "returned", r.PTTL, tc.ttl)
			checkTTL(t, "on the server", pttl(t, s, tc.key), tc.ttl)
		})
	}
}

func hasField(fs []model.Field, name, value string) bool {
	for _, f := range fs {
		if f.Name == name {
			return f.Value == value
		}
	}
	return false
}

// The script checks what the key is when it runs: a key that is no hash
// any more is left exactly as it is, and the error says so in a sentence
// that counts as a refusal (nothing changed). An unknown window and a
// decimal that would turn an integer field decimal write nothing either.
func TestIncrFieldRefusesWithoutWriting(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "now-a-string", "5")
	s.Do(t, "RPUSH", "now-a-list", "1")
	s.Do(t, "HSET", "immortal", "hits", "5")
	s.Do(t, "HSET", "integer", "hits", "5")
	s.Do(t, "EXPIRE", "integer", "100")

	for _, tc := range []struct {
		key, by string
		window  time.Duration
		cause   error
		want    string
	}{
		{"now-a-string", "1", time.Minute, model.ErrNotHash, "HINCRBY now-a-string hits 1 was not sent: now-a-string holds a string, not a hash whose field hits counts, so nothing changed"},
		{"now-a-list", "1", time.Minute, model.ErrNotHash, "now-a-list holds a list, not a hash whose field hits counts"},
		{"immortal", "1", model.WindowUnknown, model.ErrNeedsWindow, "HINCRBY immortal hits 1 was not sent: immortal has no TTL and no window is known to give it one"},
		{"missing", "1", model.WindowUnknown, model.ErrNeedsWindow, "missing does not exist and no window is known"},
		{"integer", "0.5", time.Minute, model.ErrMakesDecimal, "HINCRBYFLOAT integer hits 0.5 was not sent: field hits of integer holds 5, an integer, and HINCRBYFLOAT would leave a decimal there"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			before, ttl := s.Do(t, "DUMP", tc.key), pttl(t, s, tc.key)
			_, err := c.IncrField(ctx, tc.key, "hits", by(t, tc.by), tc.window)
			if !errors.Is(err, tc.cause) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one wrapping %v that says %q", err, tc.cause, tc.want)
			}
			if tc.cause == model.ErrNotHash && !redisclient.Refused(err) {
				t.Errorf("Refused(%v) = false: nothing changed, and the user should be told so", err)
			}
			if s.Do(t, "DUMP", tc.key) != before || (ttl >= 0) != (pttl(t, s, tc.key) >= 0) {
				t.Errorf("the key changed")
			}
		})
	}

	// With consent, the decimal goes.
	a := by(t, "0.5")
	a.AllowFloat = true
	r, err := c.IncrField(ctx, "integer", "hits", a, time.Minute)
	if err != nil || r.Value() != "5.5" || r.Command != "HINCRBYFLOAT" {
		t.Fatalf("with consent: %+v, %v; want 5.5 by HINCRBYFLOAT", r, err)
	}
}

// --read-only refuses a field increment before it is sent.
func TestIncrFieldReadOnly(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.IncrField(context.Background(), "h", "hits", by(t, "1"), time.Minute)
	if !errors.Is(err, redisclient.ErrReadOnly) || !strings.Contains(err.Error(), "HINCRBY h hits 1 was not sent") {
		t.Fatalf("error %v, want the read-only refusal naming HINCRBY h hits 1", err)
	}
	if s.Do(t, "EXISTS", "h") != int64(0) {
		t.Error("a read-only client wrote")
	}
}
