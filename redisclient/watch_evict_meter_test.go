package redisclient

import (
	"testing"
	"time"
)

// The meter counts the last minute only; INFO's readings count what
// evicted_keys grew by, a restart's count whole; and a change between
// events and INFO starts the count again, since they count other keys.
func TestEvictionMeter(t *testing.T) {
	var m evictionMeter
	at := time.Unix(1_000_000, 0)
	check := func(what string, now time.Time, want int64, wantAll bool) {
		t.Helper()
		if n, all := m.count(now); n != want || all != wantAll {
			t.Errorf("%s: %d (of every key: %v), want %d (%v)", what, n, all, want, wantAll)
		}
	}

	m.sampled("a:1", 100, at) // where it starts: nothing counted
	m.sampled("b:1", 7, at)
	check("first readings", at, 0, true)
	m.sampled("a:1", 130, at.Add(5*time.Second))
	m.sampled("b:1", 9, at.Add(5*time.Second))
	check("two masters' growth", at.Add(5*time.Second), 32, true)
	m.sampled("a:1", 4, at.Add(10*time.Second)) // restarted: 4 since
	check("a restart", at.Add(10*time.Second), 36, true)
	check("59s later", at.Add(64*time.Second), 36, true)
	check("a minute later", at.Add(65*time.Second), 4, true)
	check("two minutes later", at.Add(2*time.Minute), 0, true)

	m.following(true)
	m.sampled("a:1", 1000, at.Add(2*time.Minute)) // INFO is not counted while events are
	m.sawEvicted()
	m.sawEvicted()
	check("events", at.Add(2*time.Minute), 2, false)
	m.following(false)
	m.sawEvicted() // late: it was the events watcher's, which is gone
	check("back to INFO", at.Add(2*time.Minute), 0, true)
	m.sampled("a:1", 1010, at.Add(2*time.Minute+time.Second)) // a first reading again
	check("INFO's first reading after events", at.Add(2*time.Minute+time.Second), 0, true)
}
