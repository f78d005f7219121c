package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

// BenchmarkFieldReads is what a hash whose fields carry TTLs of their own
// costs to read, per field, beside what a string counter costs per key: a
// read (Fetch) of 1,000 string counters, of 1,000 hashes of 4 fields and
// of 250 hashes of 16 (each field with its TTL), and of one hash of a
// million fields shown 100 at a time (--max-fields), then check's count
// of the fields beyond those shown (CountNotShown). It reports the
// commands and the wall time per key and per field, Redis's own time
// (INFO commandstats) per field, and how long Redis took over each of
// countertop's commands as SLOWLOG, told to log them all, timed them:
// median, 99th percentile, slowest. On a busy machine the slowest is the
// time Redis waited for a core, not the command's cost. It needs a server with
// field TTLs: COUNTERTOP_REDIS_BIN=$(../../shared/servers/build redis-8).
func BenchmarkFieldReads(b *testing.B) {
	for _, tc := range []struct {
		name          string
		keys, fields  int // fields 0: string counters
		shown, counts int // --max-fields; counts: CountNotShown after the read
	}{
		{name: "strings/1000", keys: 1000},
		{name: "hashes/1000x4", keys: 1000, fields: 4, shown: 100},
		{name: "hashes/250x16", keys: 250, fields: 16, shown: 100},
		{name: "hash/1x1000000/read", keys: 1, fields: 1_000_000, shown: 100},
		{name: "hash/1x1000000/count", keys: 1, fields: 1_000_000, shown: 100, counts: 1},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s := redistest.Start(b, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "200000")
			s.RequireFieldTTL(b)
			ctx := context.Background()
			keys := seedFields(b, s.Client(b), tc.keys, tc.fields)
			c, err := redisclient.Connect(ctx, redisclient.Options{URL: s.URL(), MaxFields: tc.shown, ClientName: "countertop-bench"})
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			if _, err := c.Fetch(ctx, keys); err != nil { // learns the server, fills the connection pool
				b.Fatal(err)
			}
			s.Do(b, "SLOWLOG", "RESET")
			before, usBefore := s.CommandCalls(b), redisMicros(b, s)
			b.ResetTimer()
			for range b.N {
				obs, err := c.Fetch(ctx, keys)
				if err != nil {
					b.Fatal(err)
				}
				if tc.counts > 0 {
					if err := c.CountNotShown(ctx, &obs[0]); err != nil || obs[0].NotShownNoTTL < 0 {
						b.Fatalf("count: %v, %d", err, obs[0].NotShownNoTTL)
					}
					lost := int64(tc.fields / 100_000) // seedFields leaves them without a TTL
					for _, f := range obs[0].Fields {
						if f.PTTL == -1 {
							lost--
						}
					}
					if obs[0].NotShownNoTTL != lost {
						b.Fatalf("counted %d fields not shown without a TTL, want %d", obs[0].NotShownNoTTL, lost)
					}
				}
			}
			b.StopTimer()
			after, usAfter := s.CommandCalls(b), redisMicros(b, s)
			sent := int64(0)
			for name, n := range after {
				if name != "info" && name != "slowlog|reset" {
					sent += n - before[name]
				}
			}
			per := float64(b.N)
			read := float64(tc.keys) // what one read went through: keys, or fields
			unit := "key"
			if tc.fields > 0 {
				read, unit = float64(min(tc.fields, tc.shown)*tc.keys), "field"
				if tc.counts > 0 {
					read = float64(tc.fields)
				}
			}
			b.ReportMetric(float64(sent)/per/read, "cmds/"+unit)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per/read, "ns/"+unit)
			b.ReportMetric(float64(usAfter-usBefore)*1000/per/read, "redis-ns/"+unit)
			b.ReportMetric(float64(sent)/per, "cmds/read")
			p50, p99, top := commandTimes(b, s)
			b.ReportMetric(float64(p50.Microseconds()), "cmd-p50-µs")
			b.ReportMetric(float64(p99.Microseconds()), "cmd-p99-µs")
			b.ReportMetric(float64(top.Microseconds()), "cmd-max-µs")
		})
	}
}

// seedFields writes keys counters: strings (fields 0), or hashes of fields
// fields each, every field with a TTL of ten minutes but every 100,000th,
// whose HEXPIRE was lost. It returns their names.
func seedFields(b *testing.B, rdb *redis.Client, keys, fields int) []string {
	ctx := context.Background()
	names := make([]string, keys)
	pipe := rdb.Pipeline()
	flush := func() {
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
	}
	for k := range keys {
		names[k] = fmt.Sprintf("quota:%06d", k)
		if fields == 0 {
			pipe.Set(ctx, names[k], k, 10*time.Minute)
			continue
		}
		for from := 0; from < fields; from += 1000 {
			set, expire := []any{"HSET", names[k]}, []any{"HPEXPIRE", names[k], 600_000, "FIELDS"}
			var expiring []any
			for f := from; f < min(from+1000, fields); f++ {
				name := "f" + strconv.Itoa(f)
				set = append(set, name, f)
				if f%100_000 != 99_999 {
					expiring = append(expiring, name)
				}
			}
			pipe.Do(ctx, set...)
			pipe.Do(ctx, append(append(expire, len(expiring)), expiring...)...)
			if pipe.Len() >= 200 {
				flush()
			}
		}
	}
	flush()
	return names
}

// redisMicros is the time Redis spent running commands, as INFO
// commandstats adds it up, in microseconds.
func redisMicros(b *testing.B, s *redistest.Server) int64 {
	var total int64
	for line := range strings.Lines(s.Do(b, "INFO", "commandstats").(string)) {
		_, stats, ok := strings.Cut(line, ",usec=")
		if !ok {
			continue
		}
		us, _, _ := strings.Cut(stats, ",")
		n, _ := strconv.ParseInt(us, 10, 64)
		total += n
	}
	return total
}

// commandTimes is how long Redis took over each of countertop's commands
// (those of connections named countertop-bench), as SLOWLOG, which logs
// every command, timed them: the median, the 99th percentile and the
// slowest, whose name -v logs.
func commandTimes(b *testing.B, s *redistest.Server) (p50, p99, top time.Duration) {
	var times []time.Duration
	var slowest any
	entries, _ := s.Do(b, "SLOWLOG", "GET", -1).([]any)
	for _, e := range entries {
		fields, ok := e.([]any)
		if !ok || len(fields) < 6 || fields[5] != "countertop-bench" {
			continue
		}
		if us, ok := fields[2].(int64); ok {
			d := time.Duration(us) * time.Microsecond
			times = append(times, d)
			if d > top {
				top, slowest = d, fields[3]
			}
		}
	}
	if len(times) == 0 {
		return 0, 0, 0
	}
	slices.Sort(times)
	b.Logf("%d commands; the slowest, %v: %.80v", len(times), top, slowest)
	return times[len(times)/2], times[len(times)*99/100], top
}

// BenchmarkHScanPages is what chose the listing's page: Redis's time over
// each HSCAN of a million-field hash, every field with a TTL or none, at
// COUNT 250 (countertop's page) and 1000, as SLOWLOG times them (median,
// 99th percentile, slowest) and per field listed.
func BenchmarkHScanPages(b *testing.B) {
	for _, ttl := range []bool{true, false} {
		for _, count := range []int64{250, 1000} {
			b.Run(fmt.Sprintf("ttl=%v/count=%d", ttl, count), func(b *testing.B) {
				s := redistest.Start(b, "--slowlog-log-slower-than", "0", "--slowlog-max-len", "200000")
				s.RequireFieldTTL(b)
				ctx := context.Background()
				rdb := s.Client(b)
				seedPlainOrTTL(b, rdb, ttl)
				s.Do(b, "SLOWLOG", "RESET")
				listed := 0
				b.ResetTimer()
				for range b.N {
					var cursor uint64
					for {
						page, next, err := rdb.HScan(ctx, "quota:big", cursor, "", count).Result()
						if err != nil {
							b.Fatal(err)
						}
						listed += len(page) / 2
						if cursor = next; cursor == 0 {
							break
						}
					}
				}
				b.StopTimer()
				var times []time.Duration
				var total time.Duration
				entries, _ := s.Do(b, "SLOWLOG", "GET", -1).([]any)
				for _, e := range entries {
					if f, ok := e.([]any); ok && len(f) > 3 && fmt.Sprint(f[3]) != "" && strings.HasPrefix(strings.ToLower(fmt.Sprint(f[3])), "[hscan") {
						d := time.Duration(f[2].(int64)) * time.Microsecond
						times, total = append(times, d), total+d
					}
				}
				slices.Sort(times)
				b.ReportMetric(float64(times[len(times)/2].Microseconds()), "page-p50-µs")
				b.ReportMetric(float64(times[len(times)*99/100].Microseconds()), "page-p99-µs")
				b.ReportMetric(float64(times[len(times)-1].Microseconds()), "page-max-µs")
				b.ReportMetric(float64(total.Nanoseconds())/float64(listed), "redis-ns/field")
			})
		}
	}
}

// seedPlainOrTTL writes quota:big, a million fields, each with a TTL of
// ten minutes when ttl is true.
func seedPlainOrTTL(b *testing.B, rdb *redis.Client, ttl bool) {
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for from := 0; from < 1_000_000; from += 1000 {
		set, expire := []any{"HSET", "quota:big"}, []any{"HPEXPIRE", "quota:big", 600_000, "FIELDS", 1000}
		for f := from; f < from+1000; f++ {
			set = append(set, "f"+strconv.Itoa(f), f)
			expire = append(expire, "f"+strconv.Itoa(f))
		}
		pipe.Do(ctx, set...)
		if ttl {
			pipe.Do(ctx, expire...)
		}
		if pipe.Len() >= 200 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
}
