package report

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// check and repair collect their counters in a KeySorter, batch by batch,
// as they arrive, and order them at the end (a Snapshot's rows go in the
// same order): byte order, as `LC_ALL=C sort` gives it, for scripts to
// join on; the dashboard reads runs of digits as numbers (model.CompareKeys).
func TestKeySorterIsByteOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 7, 500, 1000, 4097} {
		var obs []model.Observation
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
			obs = append(obs, model.Observation{Key: fmt.Sprintf("%s#%d", key, i), Type: "string", Raw: "1", PTTL: 1000, At: t0})
		}
		var sorter KeySorter
		for batch := range slices.Chunk(obs, 1+rng.IntN(600)) {
			counters := make([]model.Counter, len(batch))
			for i := range batch {
				counters[i] = model.NewCounter(&batch[i], &model.Rules{})
			}
			sorter.Add(counters)
		}
		var got, want []string
		for _, c := range sorter.Sorted() {
			got = append(got, c.Key)
		}
		for _, o := range obs {
			want = append(want, o.Key)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%d keys: the KeySorter's order is not byte order:\n%q\n%q", n, got, want)
		}
	}
}

// A snapshot may read a key twice (SCAN repeats keys); its output has each
// key once, as the later reading found it.
func TestKeySorterKeepsTheLaterReading(t *testing.T) {
	read := func(key, raw string, after time.Duration) model.Counter {
		o := model.Observation{Key: key, Type: "string", Raw: raw, PTTL: 1000, At: t0.Add(after)}
		return model.NewCounter(&o, &model.Rules{})
	}
	var s KeySorter
	s.Add([]model.Counter{read("a", "1", 0), read("b", "1", time.Second), read("c", "1", 0)})
	s.Add([]model.Counter{read("b", "2", 2*time.Second), read("a", "0", -time.Second)})
	s.Add([]model.Counter{read("c", "2", time.Second), read("c", "3", 3*time.Second)})
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
			counters := make([]model.Counter, len(batch))
			for i, k := range batch {
				counters[i] = model.Counter{Key: k}
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
