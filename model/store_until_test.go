package model

import (
	"testing"
	"time"
)

// TestKnownUntil: the Store keeps until when the feed vouches for each
// reading that says so, the soonest among rows and of all, and forgets it
// when a reading vouched for while live comes, or the key goes.
func TestKnownUntil(t *testing.T) {
	sec := func(s int) time.Duration { return time.Duration(s) * time.Second }
	until := func(o Observation, d time.Duration) Observation { o.KnownUntil = t0.Add(d); return o }
	s := NewStore(testRules())
	s.Apply(Batch{Observed: []Observation{
		read("rl:a", "1", -1, 0),
		until(read("rl:b", "1", -1, sec(1)), sec(1)),  // polled: true as of its read
		until(read("rl:c", "1", -1, sec(2)), sec(30)), // a log whose hit leaves at 30s
	}})
	if got, want := soonestShown(s, 0, 3), t0.Add(sec(1)); !got.Equal(want) {
		t.Errorf("soonest shown(all) = %v, want %v", got, want)
	}
	if got, want := soonestShown(s, 2, 1), t0.Add(sec(30)); !got.Equal(want) { // by name: rl:c
		t.Errorf("soonest shown(rl:c) = %v, want %v", got, want)
	}
	if got := soonestShown(s, 0, 1); !got.IsZero() {
		t.Errorf("soonest shown(rl:a) = %v, want none", got)
	}
	if c, _ := s.Get("rl:c"); !c.KnownUntil.Equal(t0.Add(sec(30))) {
		t.Errorf("rl:c's KnownUntil = %v", c.KnownUntil)
	}
	if got, want := s.SoonestKnownUntil(), t0.Add(sec(1)); got.After(want) || want.Sub(got) > time.Second+time.Second/8 {
		t.Errorf("SoonestKnownUntil = %v, want about %v and no later", got, want)
	}

	// rl:b read live again, rl:c gone: nothing is vouched for until a time.
	s.Apply(Batch{Observed: []Observation{read("rl:b", "2", -1, sec(3))}, Removed: []string{"rl:c"}})
	if got := soonestShown(s, 0, 3); !got.IsZero() {
		t.Errorf("soonest shown = %v after the readings that said so went, want none", got)
	}
	if got := s.SoonestKnownUntil(); !got.IsZero() {
		t.Errorf("SoonestKnownUntil = %v, want none", got)
	}
	if c, _ := s.Get("rl:b"); !c.KnownUntil.IsZero() {
		t.Errorf("rl:b's KnownUntil = %v after a live reading", c.KnownUntil)
	}
}

// soonestShown is the soonest KnownUntil EachShownRead tells of the n
// rows from offset; zero when none has one.
func soonestShown(s *Store, offset, n int) time.Time {
	var soonest time.Time
	s.EachShownRead(offset, n, func(_ string, _, until time.Time) {
		if !until.IsZero() && (soonest.IsZero() || until.Before(soonest)) {
			soonest = until
		}
	})
	return soonest
}
