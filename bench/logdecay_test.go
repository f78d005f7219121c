package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// The logs BenchmarkLogDecay watches: how many, their window, and how
// long the cost is measured (shorter than the window, so that the hits
// keep leaving throughout).
const (
	decayLogs    = 1000
	decayWindow  = time.Minute
	decayMeasure = 15 * time.Second
)

// BenchmarkLogDecay is what it costs Redis to keep logs' counts right while
// their hits leave the window with no write at all: countertop's commands a
// second to a server holding decayLogs sorted-set logs, in events mode
// (which reads a log again when its oldest hit leaves, no sooner than an
// interval after its last read) and when polling every interval, and how
// far the counts shown are from the truth at the end (in hits). dense logs
// lose a hit every 200 ms, sparse ones every 10 s, idle ones hold no hit
// inside the window.
func BenchmarkLogDecay(b *testing.B) {
	for _, tc := range []struct {
		name string
		hits int           // per log, spread over the window
		age  time.Duration // of the newest hit
	}{{"dense", 300, 0}, {"sparse", 6, 0}, {"idle", 6, 2 * decayWindow}} {
		for _, mode := range []model.WatchMode{model.WatchEvents, model.WatchPoll} {
			b.Run(tc.name+"/"+mode.String(), func(b *testing.B) { benchmarkLogDecay(b, mode, tc.hits, tc.age) })
		}
	}
}

func benchmarkLogDecay(b *testing.B, mode model.WatchMode, hits int, age time.Duration) {
	s := redistest.Start(b, "--notify-keyspace-events", "KEA")
	ctx := context.Background()
	rdb := s.Client(b)
	now := time.Now().Add(-age)
	pipe := rdb.Pipeline()
	for i := range decayLogs {
		for h := range hits {
			at := now.Add(-decayWindow + decayWindow*time.Duration(h+1)/time.Duration(hits)).UnixMilli()
			pipe.ZAdd(ctx, logKey(i), redis.Z{Score: float64(at), Member: strconv.Itoa(h)})
		}
		pipe.Expire(ctx, logKey(i), time.Hour)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}

	rules := &model.Rules{List: []model.Rule{{Pattern: "bench:log:*", Limit: 1000, Window: decayWindow, ExpectTTL: true}}}
	c, err := redisclient.Connect(ctx, redisclient.Options{URL: s.URL(), Rules: rules})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	v := &decayView{store: model.NewStore(rules)}
	o := redisclient.WatchOptions{PollOptions: redisclient.PollOptions{Patterns: []string{"bench:log:*"}}, Mode: mode}
	defer watchInto(b, c, o, v.follow)()
	deadline := time.Now().Add(settleTimeout)
	for !v.synced() {
		if time.Now().After(deadline) {
			b.Fatalf("the store never held the %d logs", decayLogs)
		}
		time.Sleep(10 * time.Millisecond) // a poll of the store, not a synchronisation
	}

	b.ResetTimer()
	before := commandStats(b, rdb)
	time.Sleep(decayMeasure) // the cost is measured over a fixed time
	after := commandStats(b, rdb)
	b.StopTimer()

	secs := decayMeasure.Seconds()
	b.ReportMetric(0, "ns/op") // the time is fixed: time per op says nothing
	b.ReportMetric(float64(after["total"]-before["total"]-2)/secs, "cmd/s")
	b.ReportMetric(float64(after["type"]-before["type"])/secs, "reads/s") // TYPE: once per read of a log
	b.ReportMetric(float64(v.maxError(b, rdb)), "max_off_hits")
}

// watchInto runs c.Watch with o, its feed applied by follow, until the
// function it returns is called, which checks that Watch returned nil.
func watchInto(b *testing.B, c *redisclient.Client, o redisclient.WatchOptions, follow func(<-chan model.Batch)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	feed := make(chan model.Batch, 64) // as main.go makes it
	watched := make(chan error, 1)
	go func() { watched <- c.Watch(ctx, o, feed) }()
	applied := make(chan struct{})
	go func() { follow(feed); close(applied) }()
	return func() {
		cancel()
		if err := <-watched; err != nil {
			b.Error(err)
		}
		close(feed)
		<-applied
	}
}

func logKey(i int) string { return "bench:log:" + strconv.Itoa(i) }

// decayView applies the feed to a Store, as the dashboard does.
type decayView struct {
	mu    sync.Mutex
	store *model.Store
	state model.FeedState
}

func (v *decayView) follow(feed <-chan model.Batch) {
	for b := range feed {
		v.mu.Lock()
		v.store.Apply(b)
		if b.State != nil {
			v.state = *b.State
		}
		v.mu.Unlock()
	}
}

// synced reports whether the store holds every log, a pass over.
func (v *decayView) synced() bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.store.Len() == decayLogs && !v.state.Scanning && v.state.LastError == ""
}

// maxError is the most the count shown of a log is off the true count of
// its hits inside the window, now.
func (v *decayView) maxError(b *testing.B, rdb *redis.Client) int64 {
	ctx := context.Background()
	start := "(" + strconv.FormatInt(time.Now().Add(-decayWindow).UnixMilli(), 10)
	pipe := rdb.Pipeline()
	counts := make([]*redis.IntCmd, decayLogs)
	for i := range counts {
		counts[i] = pipe.ZCount(ctx, logKey(i), start, "+inf")
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	var worst int64
	for i, cmd := range counts {
		c, _ := v.store.Get(logKey(i))
		worst = max(worst, c.Value.Int-cmd.Val(), cmd.Val()-c.Value.Int)
	}
	return worst
}

// commandStats returns the server's count of commands run ("total") and of
// calls of each command, from INFO.
func commandStats(b *testing.B, rdb *redis.Client) map[string]int64 {
	info, err := rdb.Info(context.Background(), "stats", "commandstats").Result()
	if err != nil {
		b.Fatal(err)
	}
	out := map[string]int64{}
	for line := range strings.Lines(info) {
		line = strings.TrimSpace(line)
		var n int64
		if _, err := fmt.Sscanf(line, "total_commands_processed:%d", &n); err == nil {
			out["total"] = n
		}
		if name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls="); ok && strings.HasPrefix(line, "cmdstat_") {
			if _, err := fmt.Sscanf(stats, "%d", &n); err == nil {
				out[name] = n
			}
		}
	}
	return out
}
