package model

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"
)

// TestStoreRateAfterFall is what RATE says after a counter's value falls:
// lowered in place (the window still running, or no TTL at all) it went
// down, and the rate must not say it went up; only a key that can have been
// made again (its old deadline passed, or a new deadline set) counted up
// from 0 in a new window.
func TestStoreRateAfterFall(t *testing.T) {
	const minute = 60_000
	for _, tc := range []struct {
		name     string
		readings []Observation
		rising   bool // the rate is above 0; else it is at most 0
	}{
		// The three falls measured in issue 19.
		{"a DECR of a key at 50 while its TTL runs", []Observation{
			read("k", "50", minute, 0), read("k", "49", minute-1000, time.Second),
		}, false},
		{"SET k 5 KEEPTTL on a key at 50", []Observation{
			read("k", "50", minute, 0), read("k", "5", minute-1000, time.Second),
		}, false},
		{"a dead counter lowered from 153.5 to 150, no TTL", []Observation{
			read("k", "153.5", PTTLNoExpiry, 0), read("k", "150", PTTLNoExpiry, time.Second),
		}, false},
		{"a counter lowered from 153.5 to 150 while its TTL runs", []Observation{
			read("k", "153.5", minute, 0), read("k", "150", minute-1000, time.Second),
		}, false},
		{"a fall read a few hundred ms off the deadline it keeps", []Observation{
			read("k", "50", minute, 0), read("k", "40", minute-2000+800, 2*time.Second),
		}, false},
		{"a fall that shortens the TTL (EXPIRE with less)", []Observation{
			read("k", "50", minute, 0), read("k", "40", 10_000, time.Second),
		}, false},
		{"a fall that loses the TTL before it was due (SET without KEEPTTL)", []Observation{
			read("k", "50", minute, 0), read("k", "5", PTTLNoExpiry, time.Second),
		}, false},
		{"a hit given back (INCR, then DECR) while the TTL runs", []Observation{
			read("k", "10", minute, 0), read("k", "15", minute-1000, time.Second), read("k", "10", minute-2000, 2*time.Second),
		}, false},

		// Restarts: the key was made again and counted up from 0.
		{"expired, made again with a new TTL", []Observation{
			read("k", "50", 1000, 0), read("k", "3", minute, 2*time.Second),
		}, true},
		{"expired a moment before a short window's next reading", []Observation{
			read("k", "50", 500, 0), read("k", "3", 400, 600*time.Millisecond),
		}, true},
		{"expired, made again by an INCR that set no TTL (the bug)", []Observation{
			read("k", "50", 1000, 0), read("k", "3", PTTLNoExpiry, 1200*time.Millisecond),
		}, true},
		{"deleted and made again before its deadline: a later deadline", []Observation{
			read("k", "50", 30_000, 0), read("k", "3", minute, 5*time.Second),
		}, true},
		{"a stuck key deleted and made again with a TTL", []Observation{
			read("k", "150", PTTLNoExpiry, 0), read("k", "3", minute, 2*time.Second),
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStore(testRules())
			for _, o := range tc.readings {
				s.Apply(Batch{Observed: []Observation{o}})
			}
			r := mustGet(t, s, "k").Rate
			if tc.rising && r <= 0 {
				t.Errorf("rate %v, want above 0: the key counted up again from 0", r)
			}
			if !tc.rising && r > 0 {
				t.Errorf("rate %v, want at most 0: the counter only went down", r)
			}
		})
	}
}

// A counter lowered in place shows how fast it fell: the rate is the
// change of the value per second, as it is when it rises.
func TestStoreRateFallsBy(t *testing.T) {
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{read("k", "50", 60_000, 0)}})
	s.Apply(Batch{Observed: []Observation{read("k", "40", 58_000, 2*time.Second)}})
	if r := mustGet(t, s, "k").Rate; r > -4.99 || r < -5.01 {
		t.Errorf("50 then 40 two seconds later, the TTL running: rate %v, want -5", r)
	}
}

func TestStoreRate(t *testing.T) {
	rate := func(readings ...Observation) float64 {
		s := NewStore(testRules())
		for _, o := range readings {
			s.Apply(Batch{Observed: []Observation{o}})
		}
		return mustGet(t, s, readings[0].Key).Rate
	}
	if r := rate(read("k", "7", 1000, 0)); r != 0 {
		t.Errorf("one reading: rate %v, want 0", r)
	}
	near := func(r, want float64) bool { return math.Abs(r-want) < 1e-6*want } // float32 sums
	if r := rate(read("k", "0", 1000, 0), read("k", "10", 1000, 2*time.Second)); !near(r, 5) {
		t.Errorf("+10 in 2s: rate %v, want 5", r)
	}
	if r := rate(read("k", "50", 1000, 0), read("k", "3", 1000, time.Second)); !near(r, 3) {
		t.Errorf("50 then 3 a second later (a new window): rate %v, want 3", r)
	}
	if r := rate(read("k", "0", 1000, 0), read("k", "0", 1000, time.Second)); r != 0 {
		t.Errorf("no change: rate %v, want 0", r)
	}
	if r := rate(read("k", "1", 1000, 0), read("k", "x", 1000, time.Second), read("k", "5", 1000, 2*time.Second)); r != 0 {
		t.Errorf("a non-number in between: rate %v, want 0 (history forgotten)", r)
	}
	// 10 increments a second, then one more read 10ms later: the rate
	// should stay near 10/s, not leap to 100/s.
	r := rate(read("k", "0", 1000, 0), read("k", "10", 1000, time.Second), read("k", "11", 1000, 1010*time.Millisecond))
	if r < 9 || r > 12 {
		t.Errorf("a reading 10ms after the last: rate %v, want about 10", r)
	}
	// A counter that starts again after a long quiet spell climbs as fast
	// as after half a minute: the spell weighs as rateHorizon seconds at
	// most. (Keyspace events read a key only when it changes.)
	climb := func(quiet time.Duration) float64 {
		readings := []Observation{read("k", "0", 1000, 0), read("k", "100", 1000, time.Second), read("k", "100", 1000, time.Second+quiet)}
		for i := range 20 { // 20 a second for a second, in readings 50 ms apart
			readings = append(readings, read("k", fmt.Sprint(101+i), 1000, time.Second+quiet+time.Duration(i+1)*50*time.Millisecond))
		}
		return rate(readings...)
	}
	if after30s, after5m := climb(30*time.Second), climb(5*time.Minute); math.Abs(after5m-after30s) > 0.05*after30s || after30s < 3 {
		t.Errorf("a second into 20/s: rate %v after 30 s of quiet, %v after 5 min; want them alike, and over 3", after30s, after5m)
	}
	// A float counter's jump past what a float32 holds stays a number,
	// and fades to 0 like any other, never to NaN ("?/s").
	huge := rate(read("k", "0", 1000, 0), read("k", "1e300", 1000, time.Second))
	if math.IsNaN(huge) || huge < 1e38 {
		t.Errorf("a jump of 1e300 in a second: rate %v, want a huge number", huge)
	}
	if r := rate(read("k", "0", 1000, 0), read("k", "1e300", 1000, time.Second), read("k", "1e300", 1000, time.Hour)); r != 0 {
		t.Errorf("an hour after a jump of 1e300: rate %v, want 0", r)
	}
	// An old rate fades: after a burst, a long quiet spell brings it near 0.
	r = rate(read("k", "0", 1000, 0), read("k", "100", 1000, time.Second), read("k", "100", 1000, 60*time.Second))
	if r > 0.5 {
		t.Errorf("a minute after a burst: rate %v, want near 0", r)
	}
}

// TestStoreRateFadesWhenQuiet is a keyspace-event feed's rates: a key is
// read when it changes and not otherwise, so a counter that stopped would
// show its last rate for ever but for QuietUntil.
func TestStoreRateFadesWhenQuiet(t *testing.T) {
	// busy counts 10 a second for 5 s, then stops; slow counts 1 a second
	// throughout.
	s := NewStore(testRules())
	for sec := range 21 {
		at := time.Duration(sec) * time.Second
		b := Batch{Observed: []Observation{read("rl:slow", fmt.Sprint(sec), 60_000, at)}}
		if sec <= 5 {
			b.Observed = append(b.Observed, read("rl:busy", fmt.Sprint(10*sec), 60_000, at))
		}
		s.Apply(b)
	}
	s.SetSort(SortRate)
	busy := mustGet(t, s, "rl:busy").Rate
	if busy < 9 || busy > 11 {
		t.Fatalf("busy's rate as of its last reading: %v, want about 10", busy)
	}
	if got := keys(s.Rows(0, 2)); !slices.Equal(got, []string{"rl:busy", "rl:slow"}) {
		t.Errorf("by rate, before anything is known of the quiet: %v", got)
	}

	// Quiet since 5 s, as far as the feed knows: busy's rate is what one
	// more reading of the same value would give.
	s.QuietUntil(t0.Add(20 * time.Second))
	faded := mustGet(t, s, "rl:busy").Rate
	again := NewStore(testRules())
	for sec := range 6 {
		again.Apply(Batch{Observed: []Observation{read("rl:busy", fmt.Sprint(10*sec), 60_000, time.Duration(sec)*time.Second)}})
	}
	again.Apply(Batch{Observed: []Observation{read("rl:busy", "50", 60_000, 20*time.Second)}})
	if want := mustGet(t, again, "rl:busy").Rate; math.Abs(faded-want) > 1e-6*want {
		t.Errorf("busy's rate 15 s into the quiet: %v, want %v, as a reading then would give", faded, want)
	}
	if faded > 0.5 {
		t.Errorf("busy's rate 15 s into the quiet: %v, want under 0.5", faded)
	}
	if slow := mustGet(t, s, "rl:slow").Rate; slow < 0.9 || slow > 1.1 {
		t.Errorf("slow, read at the moment of the quiet: rate %v, want about 1 still", slow)
	}
	if got := keys(s.Rows(0, 2)); !slices.Equal(got, []string{"rl:slow", "rl:busy"}) {
		t.Errorf("by rate, once busy has been quiet 15 s: %v, want the one still counting first", got)
	}

	// A minute on, its rate is 0; the quiet moves in whole steps only.
	s.QuietUntil(t0.Add(65 * time.Second))
	if r := mustGet(t, s, "rl:busy").Rate; r != 0 {
		t.Errorf("busy a minute into the quiet: rate %v, want 0", r)
	}
	step := mustGet(t, s, "rl:slow").Rate
	s.QuietUntil(t0.Add(65*time.Second + quietStep/2))
	if r := mustGet(t, s, "rl:slow").Rate; r != step {
		t.Errorf("half a step later: rate %v, want %v as of the last step", r, step)
	}
}
