package redisclient_test

import (
	"context"
	"errors"
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
		_, err := c.Burst(context.Background(), "k", by(t, "1"), 0, o)
		checkSentence(t, err, "give a count of at least 1 and a rate of 0 or more", "")
	}
	// More clients than increments: one increment each, none left over.
	r, err := c.Burst(context.Background(), "k", by(t, "2"), 0, redisclient.BurstOptions{Count: 3, Clients: 10})
	if err != nil {
		t.Fatal(err)
	}
	checkBurst(t, r, 3, "6")
}
