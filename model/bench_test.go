package model

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchKey is the i-th key of a large keyspace, shaped like real rate-limit
// keys (about 30 bytes).
func benchKey(i int) string { return fmt.Sprintf("ratelimit:user:%08d:login", i) }

// fillStore makes a Store of n string counters, all with TTLs, read at t0.
func fillStore(n int) *Store {
	s := NewStore(&Rules{
		List:     []Rule{{Pattern: "ratelimit:*", Limit: 100, Window: time.Minute, ExpectTTL: true}},
		Fallback: Rule{ExpectTTL: true},
	})
	const chunk = 10_000
	batch := Batch{Observed: make([]Observation, 0, chunk)}
	for i := 0; i < n; i += chunk {
		batch.Observed = batch.Observed[:0]
		for j := i; j < min(i+chunk, n); j++ {
			batch.Observed = append(batch.Observed, Observation{
				Key: benchKey(j), Type: "string", Raw: strconv.Itoa(j % 120),
				PTTL: int64(1000 + j%60_000), At: t0,
			})
		}
		s.Apply(batch)
	}
	return s
}

// changeAll reads every key of a Store made by fillStore again, a second
// later, with another value: each then keeps a history.
func changeAll(s *Store, n int) {
	const chunk = 10_000
	batch := Batch{Observed: make([]Observation, 0, chunk)}
	for i := 0; i < n; i += chunk {
		batch.Observed = batch.Observed[:0]
		for j := i; j < min(i+chunk, n); j++ {
			batch.Observed = append(batch.Observed, Observation{
				Key: benchKey(j), Type: "string", Raw: strconv.Itoa(j%120 + 1),
				PTTL: int64(1000 + j%60_000), At: t0.Add(time.Second),
			})
		}
		s.Apply(batch)
	}
}

// updates is a batch of new readings of count keys of a Store of n, at t.
func updates(n, count, seed int, t time.Time) Batch {
	b := Batch{Observed: make([]Observation, count)}
	for i := range b.Observed {
		k := (seed*count + i*7919) % n
		b.Observed[i] = Observation{
			Key: benchKey(k), Type: "string", Raw: strconv.Itoa((k + seed) % 120),
			PTTL: int64(1000 + (k+seed)%60_000), At: t,
		}
	}
	return b
}

func BenchmarkApply(b *testing.B) {
	const n, batchSize = 100_000, 1000
	b.Run("updates", func(b *testing.B) {
		s := fillStore(n)
		batches := make([]Batch, 64)
		for i := range batches {
			batches[i] = updates(n, batchSize, i, t0.Add(time.Duration(i+1)*time.Second))
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			// Re-applying a batch is a reading older than the last: skip
			// past that by moving the times on.
			batch := batches[i%len(batches)]
			for j := range batch.Observed {
				batch.Observed[j].At = batch.Observed[j].At.Add(time.Minute)
			}
			s.Apply(batch)
			i++
		}
	})
	b.Run("churn", func(b *testing.B) {
		// Half the batch is keys expiring, half new keys: the size holds.
		s := fillStore(n)
		next := n
		b.ReportAllocs()
		for b.Loop() {
			b.StopTimer()
			var batch Batch
			for j := range batchSize / 2 {
				batch.Removed = append(batch.Removed, benchKey(next-n+j))
				batch.Observed = append(batch.Observed, Observation{
					Key: benchKey(next + j), Type: "string", Raw: "1", PTTL: 60_000, At: t0,
				})
			}
			next += batchSize / 2
			b.StartTimer()
			s.Apply(batch)
		}
	})
}

// benchFields are the fields of fieldHash's hashes: a limiter's
// endpoints.
var benchFields = func() []string {
	fs := make([]string, 10)
	for i := range fs {
		fs[i] = fmt.Sprintf("/api/v1/endpoint%d", i)
	}
	return fs
}()

// fieldHash is the i-th hash of a keyspace of limiters that keep a field
// an endpoint (benchFields), each with its TTL (Observation.FieldTTLs),
// read at t; seed moves the values.
func fieldHash(i, seed int, t time.Time) Observation {
	o := Observation{Key: fmt.Sprintf("quota:user:%08d", i), Type: "hash", PTTL: PTTLNoExpiry, At: t, FieldTTLs: true, Len: int64(len(benchFields))}
	o.Fields = make([]Field, len(benchFields))
	for f, name := range benchFields {
		o.Fields[f] = Field{Name: name, Value: strconv.Itoa((i + f + seed) % 120), PTTL: int64(1000 + (i+f)%60_000)}
	}
	return o
}

// fillFields makes a Store of n hashes of fieldHash, a row a field.
func fillFields(n int) *Store {
	s := NewStore(&Rules{List: []Rule{{Pattern: "quota:*", Limit: 100, Window: time.Minute, ExpectTTL: true}}})
	const chunk = 1000
	for i := 0; i < n; i += chunk {
		var b Batch
		for j := i; j < min(i+chunk, n); j++ {
			b.Observed = append(b.Observed, fieldHash(j, 0, t0))
		}
		s.Apply(b)
	}
	return s
}

// BenchmarkApplyFields is BenchmarkApply/updates for rows of hash fields:
// 10,000 hashes of 10 fields with TTLs (100,000 rows), a batch of 100 of
// them read again (1,000 rows), each with new values.
func BenchmarkApplyFields(b *testing.B) {
	const n, batchHashes = 10_000, 100
	s := fillFields(n)
	batches := make([]Batch, 64)
	for i := range batches {
		for j := range batchHashes {
			batches[i].Observed = append(batches[i].Observed, fieldHash((i*batchHashes+j*7919)%n, i+1, t0.Add(time.Duration(i+1)*time.Second)))
		}
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		batch := batches[i%len(batches)]
		for j := range batch.Observed {
			batch.Observed[j].At = batch.Observed[j].At.Add(time.Minute)
		}
		s.Apply(batch)
		i++
	}
}

// BenchmarkStoreMemoryFields is BenchmarkStoreMemory for rows of hash
// fields: 100,000 hashes of 10 fields with TTLs, a million rows, each read
// once.
func BenchmarkStoreMemoryFields(b *testing.B) {
	const n = 100_000
	rows := n * len(benchFields)
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := fillFields(n)
		if s.Len() != rows {
			b.Fatalf("%d rows, want %d", s.Len(), rows)
		}
		s.Rows(0, 40)
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(rows), "B/row")
		runtime.KeepAlive(s)
	}
}

// BenchmarkRows is one dashboard frame (40 rows, and the selection's
// IndexOf) from a million keys, after the changes that trigger one.
func BenchmarkRows(b *testing.B) {
	const n = 1_000_000
	s := fillStore(n)
	frame := func() {
		s.Rows(n/2, 40)
		s.IndexOf(benchKey(n / 2))
	}
	b.Run("unchanged", func(b *testing.B) {
		frame()
		b.ReportAllocs()
		for b.Loop() {
			frame()
		}
	})
	// One reading, or a pipeline's worth (what one poll batch brings),
	// arrived since the last frame: Apply is counted too.
	at := t0
	raws := make([]string, 120)
	for i := range raws {
		raws[i] = strconv.Itoa(i)
	}
	// 40,000 (a flood's frame) is more than 1/32 of the keys: each frame
	// takes a sort of them a step on.
	for _, changes := range []int{1, 500, 40_000} {
		for _, sort := range []SortKey{SortKeyName, SortValue, SortTTL, SortRate} {
			b.Run(fmt.Sprintf("after-%d-changes/by-%v", changes, sort), func(b *testing.B) {
				s.SetSort(sort)
				for frame(); s.Sorting(); {
					frame()
				}
				batches := make([]Batch, min(64, 160_000/changes))
				for i := range batches {
					batches[i] = updates(n, changes, i, at)
				}
				b.ReportAllocs()
				i, slowest := 0, time.Duration(0)
				for b.Loop() {
					// Every reading is new: a later time, a TTL set again,
					// a value that went up.
					at = at.Add(time.Second)
					batch := batches[i%len(batches)]
					for j := range batch.Observed {
						o := &batch.Observed[j]
						o.At, o.Raw = at, raws[(j+i)%len(raws)]
					}
					s.Apply(batch)
					start := time.Now()
					frame()
					slowest = max(slowest, time.Since(start))
					i++
				}
				if changes >= 40_000 { // the slowest frame, Apply aside
					b.ReportMetric(float64(slowest)/float64(time.Millisecond), "max-ms")
				}
				for s.Sorting() {
					frame()
				}
			})
		}
	}
	b.Run("after-new-key/by-key", func(b *testing.B) {
		s.SetSort(SortKeyName)
		frame()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			s.Apply(Batch{
				Removed:  []string{benchKey(n + i - 1)},
				Observed: []Observation{{Key: benchKey(n + i), Type: "string", Raw: "1", PTTL: 1000, At: t0}},
			})
			frame()
			i++
		}
	})
	// Keyspace events, steady: each second 333 keys change (and are read),
	// and the rates of the keys not read since fade (QuietUntil); those
	// are placed again in an order by rate. About 20,000 keys read in the
	// last minute are fading at any time; a rate a minute old is 0.
	b.Run("after-quiet-second/by-rate", func(b *testing.B) {
		const perSecond = 333
		s := fillStore(n) // none of the other runs' rates
		frame := func() {
			s.Rows(n/2, 40)
			s.IndexOf(benchKey(n / 2))
		}
		sec := 0
		second := func() {
			at = at.Add(time.Second)
			batch := updates(n, perSecond, sec, at)
			for j := range batch.Observed {
				batch.Observed[j].Raw = raws[(j+sec)%len(raws)]
			}
			s.Apply(batch)
			s.QuietUntil(at)
			sec++
		}
		for range 61 {
			second()
		}
		s.SetSort(SortRate)
		frame()
		b.ReportAllocs()
		for b.Loop() {
			second()
			frame()
		}
	})
	// s: the next sort, from the one before it in s's cycle, so that each
	// run is the key press that brings its sort: the frame after it, and
	// (whole) every frame until the sort is shown, worked out a step a
	// frame (frames/op; the slowest frame as max-ms).
	for _, whole := range []bool{false, true} {
		for k := range numSortKeys {
			name := "after-sort-change"
			if whole {
				name += "-whole"
			}
			b.Run(name+"/to-"+strings.NewReplacer("% ", "percent-", " ", "-").Replace(k.String()), func(b *testing.B) {
				b.ReportAllocs()
				frames, slowest := 0, time.Duration(0)
				for b.Loop() {
					b.StopTimer()
					s.SetSort((k + numSortKeys - 1) % numSortKeys)
					for frame(); s.Sorting(); {
						frame()
					}
					b.StartTimer()
					s.SetSort(k)
					for first := true; first || whole && s.Sorting(); first = false {
						start := time.Now()
						frame()
						slowest = max(slowest, time.Since(start))
						frames++
					}
				}
				b.ReportMetric(float64(frames)/float64(b.N), "frames/op")
				b.ReportMetric(float64(slowest)/float64(time.Millisecond), "max-ms")
				for s.Sorting() {
					frame()
				}
			})
		}
	}
	// S: the order read from the bottom up, and back.
	b.Run("after-reverse/by-value", func(b *testing.B) {
		s.SetSort(SortValue)
		frame()
		b.ReportAllocs()
		for b.Loop() {
			s.SetReverse(!s.Reverse())
			frame()
		}
		s.SetReverse(false)
	})
	// A keystroke in the filter prompt, and the frame after it; whole: the
	// frames after it until the filter is applied in full (Filtering), so
	// many a frame (frames/op). Typing a filter and taking it back, each
	// step narrows or widens the last: every key holds "login", and 57%
	// a 4. The other pair share nothing (↑ brings back an older filter).
	typing := []string{"", "l", "lo", "log", "logi", "login", "login ", "login 4", "login 42", "login 4", "login ", "login", "logi", "log", "lo", "l"}
	for _, filters := range []struct {
		name  string
		steps []string
	}{{"after-keystroke", typing}, {"after-filter", []string{"login 4", "is:warn"}}} {
		for _, whole := range []bool{false, true} {
			name := filters.name + "/by-key"
			if whole {
				name = filters.name + "-whole/by-key"
			}
			b.Run(name, func(b *testing.B) {
				frame()
				b.ReportAllocs()
				i, frames := 0, 0
				for b.Loop() {
					s.SetFilter(filters.steps[i%len(filters.steps)])
					frame()
					frames++
					for whole && s.Filtering() {
						frame()
						frames++
					}
					i++
				}
				b.ReportMetric(float64(frames)/float64(i), "frames/op")
				s.SetFilter("")
				for s.Filtering() {
					frame()
				}
			})
		}
	}
}

// BenchmarkStoreMemory reports the Go heap a Store of a million keys holds,
// everything included (key and value strings, index, cached order, the
// history): idle, where no key changed since it was first read, and with
// every key read again with another value, so that each keeps a history.
func BenchmarkStoreMemory(b *testing.B) {
	const n = 1_000_000
	for _, changing := range []bool{false, true} {
		name := "idle"
		if changing {
			name = "changing"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				s := fillStore(n)
				if changing {
					changeAll(s, n)
				}
				s.Rows(0, 40)
				runtime.GC()
				runtime.ReadMemStats(&after)
				b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/key")
				runtime.KeepAlive(s)
			}
		})
	}
}

// BenchmarkEachProblem is what E (repair every problem counter in view)
// reads at 1,000,000 keys, a fifth of them without a TTL: the keys to
// repair, without building the rows.
func BenchmarkEachProblem(b *testing.B) {
	const n = 1_000_000
	s := fillStore(n)
	lost := Batch{}
	for i := 0; i < n; i += 5 {
		lost.Observed = append(lost.Observed, Observation{Key: benchKey(i), Type: "string", Raw: "7", PTTL: PTTLNoExpiry, At: t0})
	}
	s.Apply(lost)
	b.ReportAllocs()
	for b.Loop() {
		found := 0
		s.EachProblem(func(string, Rule) { found++ })
		if found != n/5 {
			b.Fatalf("found %d problems, want %d", found, n/5)
		}
	}
}

// BenchmarkApplyShards is the first batches of two shards' keys, half of
// them on both, with and without the shard group that counts their
// copies as they arrive (store_shards.go): what declaring shards costs.
func BenchmarkApplyShards(b *testing.B) {
	const n = 100_000
	batch := func(server string, from int) Batch {
		bt := Batch{Server: server, Observed: make([]Observation, n)}
		for i := range bt.Observed {
			bt.Observed[i] = Observation{Key: benchKey(from + i), Type: "string", Raw: "1", PTTL: 60_000, At: t0}
		}
		return bt
	}
	a, c := batch("a", 0), batch("b", n/2)
	for _, groups := range [][]ShardGroup{nil, {{Name: "ring", Servers: []string{"a", "b"}}}} {
		b.Run(fmt.Sprintf("groups=%d", len(groups)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s := NewStore(&Rules{})
				s.SetShards(groups)
				s.Apply(a)
				s.Apply(c)
				if len(groups) > 0 && s.SharedRows() != n/2 {
					b.Fatalf("%d shared rows, want %d", s.SharedRows(), n/2)
				}
			}
		})
	}
}
