package model

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// A snapshot classifies each key once with NewCounter; the dashboard holds
// it in a Store. Both must say the same of the same reading.
func TestNewCounterIsTheStoresFirstReading(t *testing.T) {
	rules := &Rules{
		List: []Rule{
			{Pattern: "rl:*", Limit: 10, Window: time.Minute, ExpectTTL: true},
			{Pattern: "views:*"},
		},
		Fallback: Rule{ExpectTTL: true},
	}
	tests := []struct {
		o    Observation
		want Status
	}{
		{Observation{Key: "rl:a", Type: "string", Raw: "5", PTTL: 30_000}, StatusOK},
		{Observation{Key: "rl:full", Type: "string", Raw: "10", PTTL: 30_000}, StatusOver},
		{Observation{Key: "rl:stuck", Type: "string", Raw: "10", PTTL: PTTLNoExpiry}, StatusStuck},
		{Observation{Key: "rl:lost", Type: "string", Raw: "3", PTTL: PTTLNoExpiry}, StatusNoExpiry},
		{Observation{Key: "rl:float", Type: "string", Raw: "8.5", PTTL: 1000}, StatusWarn},
		{Observation{Key: "rl:text", Type: "string", Raw: "hello", PTTL: 1000}, StatusNotCounter},
		{Observation{Key: "rl:padded", Type: "string", Raw: "007", PTTL: 1000}, StatusOK}, // a float to Redis: INCRBYFLOAT reads 7
		{Observation{Key: "views:home", Type: "string", Raw: "12345", PTTL: PTTLNoExpiry}, StatusOK},
		{Observation{Key: "other", Type: "hash", PTTL: PTTLNoExpiry}, StatusNotCounter},
		{Observation{Key: "rl:inf", Type: "string", Raw: "inf", PTTL: PTTLNoExpiry}, StatusNotCounter},
	}
	var obs []Observation
	for _, tt := range tests {
		tt.o.At = t0
		obs = append(obs, tt.o)
	}
	s := NewStore(rules)
	s.Apply(Batch{Observed: obs})
	for i, tt := range tests {
		got := NewCounter(&obs[i], rules)
		want, ok := s.Get(tt.o.Key)
		if !ok {
			t.Fatalf("the Store lost %s", tt.o.Key)
		}
		if got.Status != tt.want {
			t.Errorf("%s: status %v, want %v", tt.o.Key, got.Status, tt.want)
		}
		if !got.ObservedAt.Equal(want.ObservedAt) {
			t.Errorf("%s: observed at %v, the Store says %v", tt.o.Key, got.ObservedAt, want.ObservedAt)
		}
		got.ObservedAt, want.ObservedAt = time.Time{}, time.Time{}
		if got != want {
			t.Errorf("%s:\nNewCounter %+v\nthe Store  %+v", tt.o.Key, got, want)
		}
	}
}

// check and repair collect their counters in a KeySorter, batch by batch,
// as they arrive, and order them at the end (a Snapshot's rows go in the
// same order); the dashboard's first order is the Store's. They agree.
func TestKeySorterIsTheStoresOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 500, 1000, 4097} {
		var obs []Observation
		for i := range n {
			key := fmt.Sprintf("rl:%d", rng.IntN(1_000_000_000))
			switch i % 5 {
			case 1:
				key = strings.ToUpper(key) // before every "rl:"
			case 2:
				key += "\xff"
			case 3:
				key = key[:3+i%4]
			}
			obs = append(obs, Observation{Key: fmt.Sprintf("%s#%d", key, i), Type: "string", Raw: "1", PTTL: 1000, At: t0})
		}
		var sorter KeySorter
		for batch := range slices.Chunk(obs, 1+rng.IntN(600)) {
			counters := make([]Counter, len(batch))
			for i := range batch {
				counters[i] = NewCounter(&batch[i], &Rules{})
			}
			sorter.Add(counters)
		}
		s := NewStore(&Rules{})
		s.Apply(Batch{Observed: obs})
		var got, want []string
		for _, c := range sorter.Sorted() {
			got = append(got, c.Key)
		}
		for _, c := range s.Rows(0, s.Len()) {
			want = append(want, c.Key)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d keys: the KeySorter's order differs from the Store's:\n%q\n%q", n, got, want)
		}
	}
}

// A snapshot may read a key twice (SCAN repeats keys); its output has each
// key once, as the later reading found it.
func TestKeySorterKeepsTheLaterReading(t *testing.T) {
	read := func(key, raw string, after time.Duration) Counter {
		o := Observation{Key: key, Type: "string", Raw: raw, PTTL: 1000, At: t0.Add(after)}
		return NewCounter(&o, &Rules{})
	}
	var s KeySorter
	s.Add([]Counter{read("a", "1", 0), read("b", "1", time.Second), read("c", "1", 0)})
	s.Add([]Counter{read("b", "2", 2*time.Second), read("a", "0", -time.Second)})
	s.Add([]Counter{read("c", "2", time.Second), read("c", "3", 3*time.Second)})
	var got []string
	for _, c := range s.Sorted() {
		got = append(got, c.Key+"="+c.Raw)
	}
	if want := []string{"a=1", "b=2", "c=3"}; !slices.Equal(got, want) {
		t.Errorf("Sorted = %q, want %q", got, want)
	}
}

// The KeySorter compares a few bytes of each key noted as it arrives, past
// the prefix every key shares, and the whole keys only when those are
// equal. Whatever the keys (zero bytes, keys that are prefixes of others,
// a key that leaves the shared prefix late, repeats), its order is
// strings.Compare's, each key once.
func FuzzKeySorter(f *testing.F) {
	f.Add([]byte("rl:user:1\nrl:user:10\nrl:user:1\x00\nrl:user:2\nrl:\nother"), uint8(3))
	f.Add([]byte("a\x00\x00\x00\x00\x00\x00\x00\x00b\na\na\x00\nab\na"), uint8(1))
	f.Add([]byte("ratelimit:user:00012345:login\nratelimit:user:00012346:login\nratelimit:"), uint8(2))
	f.Fuzz(func(t *testing.T, data []byte, batchSize uint8) {
		keys := strings.Split(string(data), "\n")
		var sorter KeySorter
		for batch := range slices.Chunk(keys, 1+int(batchSize%16)) {
			counters := make([]Counter, len(batch))
			for i, k := range batch {
				counters[i] = Counter{Key: k}
			}
			sorter.Add(counters)
		}
		var got []string
		for _, c := range sorter.Sorted() {
			got = append(got, c.Key)
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		want = slices.Compact(want)
		if !slices.Equal(got, want) {
			t.Errorf("Sorted = %q\nwant     %q", got, want)
		}
	})
}

// Percent is what the dashboard's % column shows: a value with no finite
// number (inf, 1e400) has none, where it used to read ">999%".
func TestCounterPercent(t *testing.T) {
	tests := []struct {
		raw   string
		limit float64
		want  float64
		ok    bool
	}{
		{"50", 100, 0.5, true},
		{"2.5", 10, 0.25, true},
		{"150", 100, 1.5, true},
		{"50", 0, 0, false},
		{"hello", 100, 0, false},
		{"inf", 100, 0, false},
		{"-inf", 100, 0, false},
		{"1e400", 100, 0, false},
	}
	for _, tt := range tests {
		c := NewCounter(&Observation{Key: "rl:k", Type: "string", Raw: tt.raw, PTTL: PTTLNoExpiry, At: t0}, testRules())
		if got, ok := c.Percent(tt.limit); got != tt.want || ok != tt.ok {
			t.Errorf("%q of %v: Percent = %v, %v; want %v, %v", tt.raw, tt.limit, got, ok, tt.want, tt.ok)
		}
	}
}
