package model

import (
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
