package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// benchObservations are n readings of keys shaped like real rate-limit
// keys (about 30 bytes), all string counters with TTLs, read at t0.
func benchObservations(n int) []model.Observation {
	obs := make([]model.Observation, n)
	for i := range obs {
		k := i * 7919 % n
		obs[i] = model.Observation{
			Key: fmt.Sprintf("ratelimit:user:%08d:login", k), Type: "string", Raw: strconv.Itoa(k % 120),
			PTTL: int64(1000 + k%60_000), At: t0,
		}
	}
	return obs
}

// BenchmarkSnapshot is the client-side work of `countertop snapshot` of
// 100,000 keys, in each format: arrive is what it does as the reads
// arrive, while Redis works on the next ones (classify each counter,
// render its row, note its place in key order); write is what is left
// once Redis has answered, while the user waits (sort the places, put the
// rows together with their TTLs, write them). sort is the end of the
// KeySorter that check and repair use.
func BenchmarkSnapshot(b *testing.B) {
	const n = 100_000
	obs := benchObservations(n)
	rules := &model.Rules{
		List:     []model.Rule{{Pattern: "ratelimit:*", Limit: 100, Window: time.Minute, ExpectTTL: true}},
		Fallback: model.Rule{ExpectTTL: true},
	}
	arrive := func(s *Snapshot) {
		for batch := range slices.Chunk(obs, 500) {
			s.Add(batch)
		}
	}
	for _, format := range Formats {
		b.Run("arrive/"+format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				arrive(NewSnapshot(format, rules))
			}
		})
		b.Run("write/"+format, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				b.StopTimer()
				s := NewSnapshot(format, rules)
				arrive(s)
				b.StartTimer()
				if err := s.Write(io.Discard, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("sort", func(b *testing.B) {
		var batches [][]model.Counter
		for batch := range slices.Chunk(obs, 500) {
			counters := make([]model.Counter, len(batch))
			for i := range batch {
				counters[i] = model.NewCounter(&batch[i], rules)
			}
			batches = append(batches, counters)
		}
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			var sorter KeySorter
			for _, batch := range batches {
				sorter.Add(batch)
			}
			b.StartTimer()
			sorter.Sorted()
		}
	})
}
