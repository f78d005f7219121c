package model

import (
	"slices"
	"testing"
	"time"
)

// The Store keeps a few bytes of each reading's layout and rebuilds the
// rest: what it gives back, in Get and in Rows, is what NewCounter makes of
// the same reading, for every shape.
func TestStoreHoldsWhatReadSays(t *testing.T) {
	for _, tc := range layoutCases() {
		t.Run(tc.name, func(t *testing.T) {
			for _, pttl := range []int64{ttl, PTTLNoExpiry} {
				rules := &Rules{Fallback: tc.rule}
				o := tc.o
				o.PTTL = pttl
				s := NewStore(rules)
				s.Apply(Batch{Observed: []Observation{o}})
				want := NewCounter(&o, rules)
				got := mustGet(t, s, o.Key)
				rows := s.Rows(0, 1)
				if len(rows) != 1 {
					t.Fatalf("%s: %d rows", tc.name, len(rows))
				}
				for _, c := range []*Counter{&want, &got, &rows[0]} {
					if !c.ObservedAt.Equal(now) {
						t.Errorf("%s: observed at %v", tc.name, c.ObservedAt)
					}
					c.ObservedAt = time.Time{}
				}
				if got != want || rows[0] != want {
					t.Errorf("%s (PTTL %d):\nNewCounter %+v\nGet        %+v\nRows       %+v", tc.name, pttl, want, got, rows[0])
				}
			}
		})
	}
}

func TestStoreFollowsALayoutAcrossReadings(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}}
	s := NewStore(rules)
	at := func(o Observation, d time.Duration) Observation { o.At = now.Add(d); return o }
	bucket := hash("b:u42", "tokens", "4", "refilledAt", "1796160099000")
	s.Apply(Batch{Observed: []Observation{bucket, str("k", "hello"), logOf("zset", "log:u42", 3, 1796160090, 1796160099, 3)}})

	// Tokens taken: the value changes, and the refill time with it.
	bucket2 := at(hash("b:u42", "tokens", "0", "refilledAt", "1796160100000"), time.Second)
	// Text turned into a number: another layout and status.
	number := at(str("k", "3"), time.Second)
	// Another hit in the log: its count moves, though its type does not.
	log2 := at(logOf("zset", "log:u42", 4, 1796160090, 1796160100, 4), time.Second)
	if n := s.Apply(Batch{Observed: []Observation{bucket2, number, log2}}); n != 3 {
		t.Errorf("Apply counted %d changes, want 3", n)
	}
	b := mustGet(t, s, "b:u42")
	if b.Status != StatusOver || !b.At.Equal(secs(1796160100)) || b.Field != "tokens" {
		t.Errorf("the empty bucket: %v at %v, field %q", b.Status, b.At, b.Field)
	}
	if c := mustGet(t, s, "k"); c.Layout != LayoutCounter || c.Status != StatusOK {
		t.Errorf("k: %v %v", c.Layout, c.Status)
	}
	if c := mustGet(t, s, "log:u42"); c.Layout != LayoutLog || c.Value.Int != 4 || c.Rate <= 0 {
		t.Errorf("the log: %v %v, rate %v", c.Layout, c.Value, c.Rate)
	}
	// The same reading again changes nothing.
	if n := s.Apply(Batch{Observed: []Observation{at(bucket2, 2*time.Second), at(number, 2*time.Second), at(log2, 2*time.Second)}}); n != 0 {
		t.Errorf("the same readings again counted %d changes", n)
	}

	// What the Store keeps aside for a hash goes with it.
	s.Apply(Batch{Removed: []string{"b:u42"}})
	if len(s.notes) != 0 {
		t.Errorf("%d notes left after the hash was removed", len(s.notes))
	}
	s.Apply(Batch{Observed: []Observation{at(bucket, 3*time.Second)}})
	s.Apply(Batch{Observed: []Observation{at(hash("b:u42", "name", "Ada"), 4*time.Second)}})
	if len(s.notes) != 0 {
		t.Errorf("%d notes left after the hash stopped being a bucket", len(s.notes))
	}
}

// A leak is a problem: is:problem shows it, is:leak shows it alone, and
// EachProblem (what E repairs) visits it.
func TestStoreFiltersLeaks(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, Window: time.Minute, ExpectTTL: true}}
	s := NewStore(rules)
	noTTL := func(o Observation) Observation { o.PTTL = PTTLNoExpiry; return o }
	s.Apply(Batch{Observed: []Observation{
		noTTL(str("rl:u42:29935000", "3")), // a past window
		noTTL(str("rl:u42:29936001", "3")), // the current one
		noTTL(str("rl:u42", "10")),         // stuck
		str("rl:u43", "3"),                 // fine
	}})
	if got := s.Counts().ByStatus[StatusLeak]; got != 1 {
		t.Errorf("%d leaks counted, want 1", got)
	}
	for q, want := range map[string][]string{
		"is:leak":    {"rl:u42:29935000"},
		"is:problem": {"rl:u42", "rl:u42:29935000", "rl:u42:29936001"},
	} {
		t.Run(q, func(t *testing.T) {
			s.SetFilter(q)
			if got := keys(s.Rows(0, 10)); !slices.Equal(got, want) {
				t.Errorf("%s shows %q, want %q", q, got, want)
			}
		})
	}
	s.SetFilter("")
	var problems []string
	s.EachProblem(func(key string, _ Rule) { problems = append(problems, key) })
	slices.Sort(problems)
	if want := []string{"rl:u42", "rl:u42:29935000", "rl:u42:29936001"}; !slices.Equal(problems, want) {
		t.Errorf("EachProblem visits %q, want %q", problems, want)
	}
}

// Sorted by % of limit, a bucket is as near its limit as it is empty; a
// GCRA key, which has no value, sorts with the keys that hold no number.
func TestStoreSortsLayouts(t *testing.T) {
	rules := &Rules{Fallback: Rule{Limit: 10, ExpectTTL: true}}
	s := NewStore(rules)
	s.Apply(Batch{Observed: []Observation{
		hash("full", "tokens", "10", "ts", "1796160099"),
		hash("empty", "tokens", "1", "ts", "1796160099"),
		str("half", "5"),
		str("rate:gcra", "312931303.11663097"),
	}})
	s.SetSort(SortPercent)
	if got, want := keys(s.Rows(0, 10)), []string{"empty", "half", "full", "rate:gcra"}; !slices.Equal(got, want) {
		t.Errorf("by %% of limit: %q, want %q", got, want)
	}
	s.SetSort(SortValue)
	if got, want := keys(s.Rows(0, 10)), []string{"full", "half", "empty", "rate:gcra"}; !slices.Equal(got, want) {
		t.Errorf("by value: %q, want %q", got, want)
	}
}
