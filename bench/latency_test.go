package bench

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countertop/countertop/bench/measure"
	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

// The load of issue 4's target (1,000 changes/s over 10,000 keys) and of
// issue 6's (5,000 changes/s over 100,000 keys).
var (
	baseLoad  = load{keys: 10_000, perSec: 1_000}
	scaleLoad = load{keys: 100_000, perSec: 5_000}
)

// load is how many counters are watched and how many INCRs a second hit
// them, spread at random.
type load struct{ keys, perSec int }

const (
	// settleTimeout bounds the waits for the store to catch up.
	settleTimeout = 10 * time.Second
	// loadEnv, when set, makes the test binary the load generator: it
	// holds "ADDR N KEYS PERSEC", the Redis to hit, how many INCRs to fire,
	// over how many keys, how many a second.
	loadEnv = "COUNTERTOP_BENCH_LOAD"
)

func TestMain(m *testing.M) {
	if spec := os.Getenv(loadEnv); spec != "" {
		if err := generate(spec); err != nil {
			fmt.Fprintln(os.Stderr, "load generator:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// BenchmarkEventLatency is the delay from an INCR returning to the
// dashboard's store holding the new value, with keyspace notifications.
func BenchmarkEventLatency(b *testing.B) {
	benchmarkLatency(b, redisclient.WatchOptions{Mode: model.WatchEvents}, baseLoad)
}

// BenchmarkEventLatencyAtScale is the same at 5,000 changes/s over
// 100,000 watched keys (target: the store within 100 ms of Redis).
func BenchmarkEventLatencyAtScale(b *testing.B) {
	benchmarkLatency(b, redisclient.WatchOptions{Mode: model.WatchEvents}, scaleLoad)
}

// BenchmarkPollLatency is the same delay when polling every second.
func BenchmarkPollLatency(b *testing.B) {
	benchmarkLatency(b, redisclient.WatchOptions{Mode: model.WatchPoll, PollOptions: redisclient.PollOptions{Interval: time.Second}}, baseLoad)
}

// benchmarkLatency watches l.keys counters with o while b.N INCRs hit
// them, spread at random, at l.perSec. It reports the delay's p50, p99
// and maximum, and the CPU this process (countertop's watcher and store)
// used meanwhile, as a percentage of one core. The INCRs come from another
// process, so that their cost is not counted as countertop's.
func benchmarkLatency(b *testing.B, o redisclient.WatchOptions, l load) {
	s := redistest.Start(b, "--notify-keyspace-events", "K$gxe")
	ctx := context.Background()
	rdb := s.Client(b)
	pipe := rdb.Pipeline()
	for i := range l.keys {
		pipe.Set(ctx, key(i), 0, time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}

	c, err := redisclient.Connect(ctx, redisclient.Options{URL: s.URL()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	d := measure.NewFollower()
	o.Patterns = []string{"bench:*"}
	defer watchInto(b, c, o, d.Follow)()
	if !d.WaitFor(settleTimeout, func(s *model.Store) bool { return s.Len() == l.keys }) {
		b.Fatalf("the store never held the %d keys", l.keys)
	}

	b.ResetTimer()
	var incrs []measure.Incr
	cpu, wall := usage(func() {
		incrs = runGenerator(b, s.Addr, b.N, l)
		if !d.WaitFor(settleTimeout, measure.HoldsAll(incrs)) {
			b.Fatal("the store never caught up with the increments")
		}
	})
	b.StopTimer()

	lat := d.Latencies(incrs)
	ms := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))]) / float64(time.Millisecond) }
	b.ReportMetric(0, "ns/op") // the rate is fixed: time per op says nothing
	b.ReportMetric(ms(0.50), "p50_ms")
	b.ReportMetric(ms(0.99), "p99_ms")
	b.ReportMetric(ms(1), "max_ms")
	b.ReportMetric(100*cpu.Seconds()/wall.Seconds(), "cpu_%")
}

func key(i int) string { return "bench:" + strconv.Itoa(i) }

// runGenerator runs this test binary as the load generator, firing n
// INCRs at addr, and returns what it fired.
func runGenerator(b *testing.B, addr string, n int, l load) []measure.Incr {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d %d", loadEnv, addr, n, l.keys, l.perSec))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("load generator: %v", err)
	}
	incrs := make([]measure.Incr, 0, n)
	for line := range strings.Lines(string(out)) {
		var in measure.Incr
		if _, err := fmt.Sscan(line, &in.Key, &in.Value, &in.At); err != nil {
			b.Fatalf("load generator said %q: %v", line, err)
		}
		incrs = append(incrs, in)
	}
	return incrs
}

// generate is the load generator's main: it fires INCRs at random keys at
// the spec's rate, keeping the average rate when it falls behind, and then
// prints each as "key value unixnano".
func generate(spec string) error {
	var addr string
	var n int
	var l load
	if _, err := fmt.Sscan(spec, &addr, &n, &l.keys, &l.perSec); err != nil {
		return fmt.Errorf("%s=%q: %v", loadEnv, spec, err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	defer rdb.Close()
	incrs := make([]measure.Incr, n)
	start := time.Now()
	for i := range incrs {
		time.Sleep(time.Until(start.Add(time.Duration(i) * time.Second / time.Duration(l.perSec))))
		k := key(rand.IntN(l.keys))
		v, err := rdb.Incr(context.Background(), k).Result()
		if err != nil {
			return err
		}
		incrs[i] = measure.Incr{Key: k, Value: v, At: time.Now().UnixNano()}
	}
	w := bufio.NewWriter(os.Stdout)
	for _, in := range incrs {
		fmt.Fprintln(w, in.Key, in.Value, in.At)
	}
	return w.Flush()
}

// usage runs fn and returns the CPU time this process used meanwhile, and
// the wall time it took.
func usage(fn func()) (cpu, wall time.Duration) {
	before, start := cpuTime(), time.Now()
	fn()
	return cpuTime() - before, time.Since(start)
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
