package redisclient

import (
	"testing"
	"time"
)

// TestSilence: a server is silent from the oldest command it has not
// answered, still waiting or given up, until it answers one; a server sent
// nothing for forgetSilence is not silent any more.
func TestSilence(t *testing.T) {
	b := newBudget(0)
	s := b.server("")
	now := func() time.Time { return time.Now() }
	silent := func() time.Time { return s.oldestWait(now()) }

	if !silent().IsZero() {
		t.Fatal("a server sent nothing is silent")
	}
	first := s.begin()
	if got := silent(); !got.Equal(time.Unix(0, first.since.Load())) {
		t.Fatalf("waiting: silent since %v, want since the command was sent", got)
	}
	s.end(first, false) // a timeout
	second := s.begin()
	s.end(second, false)
	if got := silent(); !got.Equal(time.Unix(0, first.since.Load())) {
		t.Fatalf("after two timeouts: silent since %v, want since the first was sent", got)
	}
	if addr, since := b.silent(now(), time.Hour); addr != "" || !since.IsZero() {
		t.Fatalf("silent for less than after: got %q since %v", addr, since)
	}
	if _, since := b.silent(now().Add(time.Second), time.Millisecond); since.IsZero() {
		t.Fatal("silent for longer than after: not reported")
	}
	if got := s.oldestWait(now().Add(forgetSilence + time.Second)); !got.IsZero() {
		t.Fatalf("sent nothing for %v: still silent since %v", forgetSilence, got)
	}
	third := s.begin()
	s.end(third, true)
	if got := silent(); !got.IsZero() {
		t.Fatalf("after an answer: silent since %v", got)
	}
}
