package redisclient_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// checkBurst checks that a burst sent sent increments and that the counter
// moved by want, as expected.
func checkBurst(t *testing.T, r redisclient.BurstResult, sent int, want string) {
	t.Helper()
	w, _ := new(big.Rat).SetString(want)
	if r.Sent != sent || r.Expected.Cmp(w) != 0 || r.Observed == nil || r.Observed.Cmp(w) != 0 || !r.Agree() || r.Expired {
		t.Errorf("burst: sent %d, expected %v, observed %v, agree %v, expired %v; want %d sent, +%s both ways",
			r.Sent, r.Expected, r.Observed, r.Agree(), r.Expired, sent, want)
	}
}

// TestBurstRace is the race of the counters lesson: 20 connections fire
// 10000 increments in all at one key, and not one is lost.
func TestBurstRace(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.Do(t, "SET", "hits", "5")
	conns := func() int64 {
		info := s.Do(t, "INFO", "stats").(string)
		_, rest, _ := strings.Cut(info, "total_connections_received:")
		n, _ := strconv.ParseInt(strings.TrimSpace(strings.SplitN(rest, "\n", 2)[0]), 10, 64)
		return n
	}
	before := conns()

	r, err := c.Burst(context.Background(), "hits", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 10000, Clients: 20})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 10000, "10000")
	if r.Before.Raw != "5" || r.After.Raw != "10005" || s.Do(t, "GET", "hits") != "10005" {
		t.Errorf("hits went from %q to %q, want 5 to 10005", r.Before.Raw, r.After.Raw)
	}
	checkTTL(t, "hits", r.After.PTTL, time.Minute)
	if n := conns() - before; n < 20 {
		t.Errorf("the burst opened %d connections, want one for each of 20 clients", n)
	}
}

// TestBurstHashField races increments of one field of a hash, as a
// per-field limiter counts: every one lands on that field, the others stay
// as they were, and the hash (too large to be read whole) is compared on
// the field by name.
func TestBurstHashField(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	args := []any{"HSET", "rl:42", "login", "3"}
	for i := range model.MaxHashFields + 4 {
		args = append(args, "other"+strconv.Itoa(i), "7")
	}
	s.Do(t, args...)

	r, err := c.Burst(context.Background(), "rl:42", by(t, "2"), time.Minute, redisclient.BurstOptions{Count: 500, Clients: 5, Field: "login"})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 500, "1000")
	if got := s.Do(t, "HGET", "rl:42", "login"); got != "1003" {
		t.Errorf("login holds %v, want 1003", got)
	}
	if got := s.Do(t, "HGET", "rl:42", "other0"); got != "7" {
		t.Errorf("another field changed to %v", got)
	}
	checkTTL(t, "rl:42", r.After.PTTL, time.Minute)
	if !r.GaveTTL {
		t.Error("the hash had no TTL and the burst gave it one, but GaveTTL is false")
	}

	// A field that does not exist yet starts at 0, as HINCRBY's does.
	r, err = c.Burst(context.Background(), "rl:42", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 10, Clients: 2, Field: "api"})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 10, "10")

	// A key that is no hash is left alone, and nothing is counted as sent.
	s.Do(t, "SET", "plain", "9")
	r, err = c.Burst(context.Background(), "plain", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 10, Clients: 2, Field: "login"})
	if !errors.Is(err, model.ErrNotHash) || r.Sent != 0 || s.Do(t, "GET", "plain") != "9" {
		t.Errorf("burst on a string with a field: sent %d, error %v, value %v; want nothing sent and ErrNotHash", r.Sent, err, s.Do(t, "GET", "plain"))
	}
}

func TestBurstFloat(t *testing.T) {
	t.Parallel()
	_, c := startConnected(t)
	r, err := c.Burst(context.Background(), "f", allowFloat(t, "0.1"), 0, redisclient.BurstOptions{Count: 300, Clients: 3})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 300, "30")
	if r.Before.PTTL != model.PTTLMissing || r.After.PTTL != -1 {
		t.Errorf("PTTL before %d, after %d: want a new key without expiry", r.Before.PTTL, r.After.PTTL)
	}
}

// TestBurstStopsAtFirstError overflows the counter half-way: every
// connection stops, and the result says what was done.
func TestBurstStopsAtFirstError(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.Do(t, "SET", "k", "9223372036854775800")
	r, err := c.Burst(context.Background(), "k", by(t, "1"), 0, redisclient.BurstOptions{Count: 50, Clients: 4})
	checkSentence(t, err, "INCRBY k 1 failed: ERR increment or decrement would overflow", "")
	checkBurst(t, r, 7, "7")
	if r.After.Raw != "9223372036854775807" {
		t.Errorf("k = %q after the burst", r.After.Raw)
	}
}

// TestBurstCancel interrupts a paced burst: it stops, and every increment
// it counts is in the counter.
func TestBurstCancel(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	// A burst that is never interrupted ends the test with DeadlineExceeded.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	watcher := s.Client(t)
	go func() {
		for n, _ := watcher.Get(ctx, "k").Int(); n < 5; n, _ = watcher.Get(ctx, "k").Int() {
			time.Sleep(5 * time.Millisecond)
		}
		cancel()
	}()
	r, err := c.Burst(ctx, "k", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 100000, Clients: 3, Rate: 200})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Burst returned %v, want context.Canceled", err)
	}
	if r.Sent < 5 || r.Sent >= 100000 {
		t.Errorf("sent %d: want it stopped after the 5th or so", r.Sent)
	}
	checkBurst(t, r, r.Sent, strconv.Itoa(r.Sent))
}

// TestBurstSeesExpiry runs a burst longer than the key's window: the key
// expires on the way and a new window starts, so the totals cannot agree,
// and the result says why.
func TestBurstSeesExpiry(t *testing.T) {
	t.Parallel()
	_, c := startConnected(t)
	// 20 increments at 100/s take at least 190ms; the window is 50ms.
	r, err := c.Burst(context.Background(), "k", by(t, "1"), 50*time.Millisecond, redisclient.BurstOptions{Count: 20, Rate: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Expired || r.Sent != 20 {
		t.Errorf("sent %d, expired %v: want all 20 sent and the expiry seen", r.Sent, r.Expired)
	}
}

func TestBurstOptions(t *testing.T) {
	t.Parallel()
	_, c := startConnected(t)
	for _, o := range []redisclient.BurstOptions{{Count: 0}, {Count: 5, Rate: -1}} {
		t.Run(fmt.Sprintf("count %d rate %v", o.Count, o.Rate), func(t *testing.T) {
			_, err := c.Burst(context.Background(), "k", by(t, "1"), 0, o)
			checkSentence(t, err, "give a count of at least 1 and a rate of 0 or more", "")
		})
	}
	// More clients than increments: one increment each, none left over.
	r, err := c.Burst(context.Background(), "k", by(t, "2"), 0, redisclient.BurstOptions{Count: 3, Clients: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 3, "6")
}
