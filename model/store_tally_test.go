package model

import (
	"maps"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"
)

// recount is Tally counted from scratch, from a Counter per key, as
// `countertop serve` counted before the Store kept a tally.
func recount(s *Store) Tally {
	t := Tally{Keys: map[TallyGroup]int{}, Fill: map[int16]float64{}}
	for _, c := range s.Rows(0, s.Len()) {
		t.Keys[TallyGroup{Rule: c.Rule, Layout: c.Layout, Status: c.Status}]++
		if f, ok := c.Percent(s.Rules().At(int(c.Rule)).Limit); ok {
			if was, seen := t.Fill[c.Rule]; !seen || f > was {
				t.Fill[c.Rule] = f
			}
		}
	}
	return t
}

// The tally Apply keeps equals a recount after any sequence of readings
// of every shape, removals, keys gone missing and readings older than
// the one held, whether it was first asked for on an empty Store or
// halfway through (when it counts what is there).
func TestTallyIsARecount(t *testing.T) {
	shapes := layoutCases()
	names := []string{"rl:a", "rl:b", "rate:c", "views:d", "other"} // any shape is read under these
	for _, c := range shapes {
		names = append(names, c.o.Key) // the names that make a window, a pair...
	}
	rules := &Rules{
		List: []Rule{
			{Pattern: "rl:*", Limit: 10, Window: time.Minute, ExpectTTL: true},
			{Pattern: "rate:*", Limit: 3, ExpectTTL: true},
			{Pattern: "views:*"},
		},
		Fallback: Rule{Limit: 20, ExpectTTL: true},
	}
	for _, first := range []int{0, 700} {
		rng := rand.New(rand.NewPCG(uint64(first), 28))
		s := NewStore(rules)
		checked := 0
		for step := range 3000 {
			if step == first {
				s.Tally()
			}
			var b Batch
			for range 1 + rng.IntN(6) {
				key := names[rng.IntN(len(names))]
				o := shapes[rng.IntN(len(shapes))].o
				o.Key = key
				o.At = now.Add(time.Duration(step-rng.IntN(3)) * time.Second) // now and then older than what is held
				o.PTTL = [...]int64{ttl, ttl, PTTLNoExpiry, PTTLMissing}[rng.IntN(4)]
				if o.Type == "string" {
					switch rng.IntN(3) {
					case 0: // a count near the limits
						o.Raw = strconv.Itoa(rng.IntN(30))
					case 1: // a decimal: a fill of its own each time, which the tally must let go of
						o.Raw = strconv.FormatFloat(rng.Float64()*30, 'f', -1, 64)
					}
				}
				if rng.IntN(8) == 0 {
					b.Removed = append(b.Removed, key)
				} else {
					b.Observed = append(b.Observed, o)
				}
			}
			s.Apply(b)
			if step < first || step%7 != 0 {
				continue
			}
			got, want := s.Tally(), recount(s)
			if !maps.Equal(got.Keys, want.Keys) || !maps.Equal(got.Fill, want.Fill) {
				t.Fatalf("first asked for at step %d; step %d, %d keys:\ntally   %v\nrecount %v", first, step, s.Len(), got, want)
			}
			checked++
		}
		if fs := s.tally.fills[0]; fs == nil || len(fs.top) > 2*fs.live+64 {
			t.Errorf("the fills of rl:* were not let go of: %+v", fs)
		}
		t.Logf("first asked for at step %d: %d recounts equal, %d keys at the end", first, checked, s.Len())
	}
}
