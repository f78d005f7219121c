package redisclient

import (
	"slices"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// TestRereads: a polled type is due an interval after each read; a log
// when its oldest hit leaves the window, but no sooner than an interval
// after its read; a key read again or gone is due as its last read says,
// once; and each reading says until when it is vouched for.
func TestRereads(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	window := model.Rule{Window: 10 * time.Second}
	s := newRereads(time.Second, func(string) model.Rule { return window })
	s.poll("h")
	ms := func(d time.Duration) float64 { return float64(t0.Add(d).UnixMilli()) }
	logRead := func(key string, at, from time.Duration) model.Observation {
		return model.Observation{Key: key, Type: "zset", PTTL: -1, At: t0.Add(at), Len: 5, Newest: ms(at), Oldest: ms(-time.Minute),
			InWindow: 3, InWindowFrom: ms(from)}
	}
	obs := []model.Observation{
		{Key: "hash", Type: "hash", PTTL: -1, At: t0},
		{Key: "string", Type: "string", PTTL: -1, At: t0},
		logRead("slow", 0, -5*time.Second),         // its oldest hit leaves in 5s
		logRead("busy", 0, -9900*time.Millisecond), // in 0.1s: read again in 1s
	}
	for i := range obs {
		s.observed(&obs[i])
	}
	want := []time.Duration{0, -1, 5 * time.Second, 100 * time.Millisecond} // KnownUntil from t0; -1: none
	for i, o := range obs {
		if w := want[i]; w < 0 && !o.KnownUntil.IsZero() || w >= 0 && !o.KnownUntil.Equal(t0.Add(w)) {
			t.Errorf("%s: vouched for until %v, want t0+%v", o.Key, o.KnownUntil, w)
		}
	}
	if at, _ := s.next(); !at.Equal(t0.Add(time.Second)) {
		t.Errorf("next due at %v, want t0+1s", at)
	}
	if got := s.take(t0.Add(time.Second), 10); !slices.Equal(sorted(got), []string{"busy", "hash"}) {
		t.Errorf("due at t0+1s: %q, want busy and hash", got)
	}
	// slow read again at 2s by an event (a hit in): due when that hit's
	// predecessor leaves, once; gone, it is due no more.
	again := logRead("slow", 2*time.Second, -4*time.Second)
	s.observed(&again)
	if got := s.take(t0.Add(5*time.Second), 10); len(got) != 0 {
		t.Errorf("due at t0+5s after a read at 2s: %q", got)
	}
	if got := s.take(t0.Add(6*time.Second), 10); !slices.Equal(got, []string{"slow"}) {
		t.Errorf("due at t0+6s: %q, want slow once", got)
	}
	s.observed(&model.Observation{Key: "slow", Type: "none", PTTL: model.PTTLMissing, At: t0.Add(7 * time.Second)})
	if _, ok := s.next(); ok || s.len() != 0 {
		t.Errorf("%d keys still scheduled", s.len())
	}
}

func sorted(keys []string) []string { slices.Sort(keys); return keys }
