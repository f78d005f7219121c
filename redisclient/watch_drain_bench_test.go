package redisclient

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
)

// floodKeys is how many keys a flood spreads its writes over, as in the
// issue's measurement (issue 18).
const floodKeys = 100_000

// floodChunk is how many INCRs one EVAL of the flood runs: Redis queues
// their messages at once, faster than clients could send the INCRs.
const floodChunk = 10_000

// floodWindow is how far the flood may run ahead of the drain, so that
// Redis's output buffer for the subscriber stays bounded.
const floodWindow = 1_000_000

// BenchmarkNotificationDrain measures how many keyspace notifications (or,
// in tracking mode, keys named by invalidations) a subscription drains a
// second into the changed set that the reader takes its re-reads from, one
// op per message (per key in tracking mode). impl=lean is countertop's own
// reader (subConn); impl=goredis is go-redis's PubSub with the loop
// countertop had before it, kept here to compare. src=redis floods a real
// redis-server with INCRs run by EVAL (its pubsub output buffer unlimited),
// so that the rate is the lesser of what Redis makes and what the
// subscription drains; src=replay writes the same messages, recorded as
// Redis sends them, from a local socket: the drain's own ceiling.
func BenchmarkNotificationDrain(b *testing.B) {
	for _, kind := range pushKinds {
		mode := kind.mode
		b.Run("mode="+mode.String(), func(b *testing.B) {
			b.Run("src=replay", func(b *testing.B) {
				for _, impl := range []string{"goredis", "lean"} {
					b.Run("impl="+impl, func(b *testing.B) { benchReplay(b, mode, impl) })
				}
			})
			b.Run("src=redis", func(b *testing.B) {
				s := redistest.Start(b, "--notify-keyspace-events", "KEA")
				s.Do(b, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 0 0 0")
				for _, impl := range []string{"goredis", "lean"} {
					b.Run("impl="+impl, func(b *testing.B) { benchRedis(b, s, mode, impl) })
				}
			})
		})
	}
}

// benchWatcher returns a watcher of rl:* in mode, reading through c (nil
// for none), and starts taking its changed set as the reader does, until
// the benchmark ends.
func benchWatcher(b *testing.B, c *Client, mode model.WatchMode) *pushWatcher {
	if c == nil {
		c = &Client{budget: newBudget(0)}
	}
	r := c.newReader(PollOptions{Patterns: []string{"rl:*"}}.withDefaults(), nil)
	o := WatchOptions{PollOptions: r.o}.withDefaults()
	w := eventsKind.watcher(r, o)
	if mode == model.WatchTracking {
		w = trackingKind.watcher(r, o)
	}
	done := make(chan struct{})
	b.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-w.changed.ready:
				w.changed.take()
				w.changed.read()
			}
		}
	}()
	return w
}

// goRedisDrain is the loop countertop drained a go-redis PubSub with
// before subConn: each message, a *redis.Message from Receive, its key put
// in the changed set. It counts messages (keys, in tracking mode) in heard.
func goRedisDrain(ctx context.Context, w *pushWatcher, ps *redis.PubSub, heard *atomic.Uint64) {
	for {
		msg, err := ps.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil || strings.Contains(err.Error(), "closed") {
				return
			}
			continue // a flush's null, which Receive gives as an error
		}
		m, ok := msg.(*redis.Message)
		if !ok {
			continue
		}
		t, ok := w.push.(*tracking)
		if !ok {
			heard.Add(1)
			if key, ok := strings.CutPrefix(m.Channel, string(w.push.(*events).prefix)); ok {
				w.changed.add(key)
			}
			continue
		}
		heard.Add(uint64(len(m.PayloadSlice)))
		for _, key := range m.PayloadSlice {
			if t.matches(key) {
				w.changed.add(key)
			}
		}
	}
}

// awaitHeard waits until heard reaches n.
func awaitHeard(b *testing.B, heard *atomic.Uint64, n uint64) {
	deadline := time.Now().Add(5 * time.Minute)
	for heard.Load() < n {
		if time.Now().After(deadline) {
			b.Fatalf("heard %d of %d messages", heard.Load(), n)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// benchRedis floods s and drains its messages with impl.
func benchRedis(b *testing.B, s *redistest.Server, mode model.WatchMode, impl string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := Connect(ctx, Options{URL: s.URL()})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	node := c.rdb.(*redis.Client)
	w := benchWatcher(b, c, mode)
	var heard atomic.Uint64
	switch impl {
	case "lean":
		sub, err := w.push.open(ctx, node)
		if err != nil {
			b.Fatal(err)
		}
		defer sub.close()
		go sub.conn.drain(w, &heard)
	case "goredis":
		ps, closeAll := goRedisSubscribe(b, ctx, w, node)
		defer closeAll()
		go goRedisDrain(ctx, w, ps, &heard)
	}

	flood := redis.NewScript(`for i = 1, tonumber(ARGV[2]) do redis.call('INCR', 'rl:flood:' .. ((tonumber(ARGV[1]) + i) % tonumber(ARGV[3]))) end`)
	rdb := s.Client(b)
	b.ResetTimer()
	for sent := 0; sent < b.N; {
		n := min(floodChunk, b.N-sent)
		for uint64(sent) > heard.Load()+floodWindow {
			time.Sleep(100 * time.Microsecond)
		}
		if err := flood.Run(ctx, rdb, nil, sent, n, floodKeys).Err(); err != nil && err != redis.Nil {
			b.Fatal(err)
		}
		sent += n
	}
	awaitHeard(b, &heard, uint64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// goRedisSubscribe subscribes as countertop did before subConn: events
// with node's own PubSub (RESP3, as node speaks), tracking with a RESP2
// client of its own whose OnConnect reads CLIENT ID, and node's
// EphemeralConn turning tracking on.
func goRedisSubscribe(b *testing.B, ctx context.Context, w *pushWatcher, node *redis.Client) (*redis.PubSub, func()) {
	t, ok := w.push.(*tracking)
	if !ok {
		ps := node.PSubscribe(ctx, w.push.(*events).channels...)
		if _, err := ps.Receive(ctx); err != nil {
			b.Fatal(err)
		}
		return ps, func() { ps.Close() }
	}
	opt := *node.Options()
	opt.Protocol = 2
	opt.MinIdleConns = 0
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	var id atomic.Int64
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		n, err := cn.ClientID(ctx).Result()
		id.Store(n)
		return err
	}
	client := redis.NewClient(&opt)
	ps := client.Subscribe(ctx, invalidations)
	if _, err := ps.Receive(ctx); err != nil {
		b.Fatal(err)
	}
	tracker := node.EphemeralConn()
	if err := tracker.ClientTrackingOn(ctx, &redis.ClientTrackingOptions{Redirect: id.Load(), Bcast: true, Prefixes: t.prefixes}).Err(); err != nil {
		b.Fatal(err)
	}
	return ps, func() { ps.Close(); tracker.Close(); client.Close() }
}

// replayKeysPerMessage is how many keys each replayed invalidation names:
// Redis gathers a BCAST prefix's keys for an event loop's turn.
const replayKeysPerMessage = 100

// recorded returns a block of messages as Redis sends them in mode, and how
// many ops (messages, or keys named) it holds.
func recorded(mode model.WatchMode) ([]byte, int) {
	var sb strings.Builder
	ops := 0
	for i := 0; ops < floodChunk; i++ {
		if mode == model.WatchEvents {
			sb.WriteString(pmessage("__keyspace@0__:rl:*", "rl:flood:"+strconv.Itoa(i*7919%floodKeys), "incrby"))
			ops++
			continue
		}
		keys := make([]string, replayKeysPerMessage)
		for j := range keys {
			keys[j] = "rl:flood:" + strconv.Itoa((i*replayKeysPerMessage+j)*7919%floodKeys)
		}
		sb.WriteString(invalidation(keys...))
		ops += len(keys)
	}
	return []byte(sb.String()), ops
}

// benchReplay drains recorded messages, written from a local socket, with
// impl.
func benchReplay(b *testing.B, mode model.WatchMode, impl string) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	block, ops := recorded(mode)
	go replayServer(ln, block, ops, b.N)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := benchWatcher(b, nil, mode)
	var channels []string
	if e, ok := w.push.(*events); ok {
		e.channels = []string{"__keyspace@0__:rl:*"}
		channels = e.channels
	}
	var heard atomic.Uint64
	b.ResetTimer()
	switch impl {
	case "lean":
		conn, err := dialSub(ctx, &redis.Options{Addr: ln.Addr().String(), DialTimeout: time.Second}, "countertop-bench", w.c.budget.server(""))
		if err != nil {
			b.Fatal(err)
		}
		defer conn.close()
		kind := "PSUBSCRIBE"
		if mode == model.WatchTracking {
			kind, channels = "SUBSCRIBE", []string{invalidations}
		}
		if err := conn.subscribe(ctx, kind, channels...); err != nil {
			b.Fatal(err)
		}
		go conn.drain(w, &heard)
	case "goredis":
		client := redis.NewClient(&redis.Options{Addr: ln.Addr().String(), Protocol: 2, DisableIdentity: true,
			MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}})
		defer client.Close()
		var ps *redis.PubSub
		if mode == model.WatchTracking {
			ps = client.Subscribe(ctx, invalidations)
		} else {
			ps = client.PSubscribe(ctx, channels...)
		}
		defer ps.Close()
		go goRedisDrain(ctx, w, ps, &heard)
	}
	awaitHeard(b, &heard, uint64(b.N))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// replayServer answers one subscriber on ln as Redis would (an error to
// HELLO, which makes go-redis speak RESP2, the confirmation of a
// subscription), then writes block, which holds ops messages' worth, until
// n are written.
func replayServer(ln net.Listener, block []byte, ops, n int) {
	nc, err := ln.Accept()
	if err != nil {
		return
	}
	defer nc.Close()
	in := &subConn{br: bufio.NewReader(nc)}
	for {
		cmd, err := in.readReply(0)
		if err != nil {
			return
		}
		args, _ := cmd.([]any)
		if len(args) == 0 {
			return
		}
		name := strings.ToUpper(fmt.Sprint(args[0]))
		if name != "SUBSCRIBE" && name != "PSUBSCRIBE" {
			nc.Write([]byte("-ERR unknown command\r\n"))
			continue
		}
		for i, ch := range args[1:] {
			fmt.Fprintf(nc, "*3\r\n%s%s:%d\r\n", bulk(strings.ToLower(name)), bulk(fmt.Sprint(ch)), i+1)
		}
		break
	}
	for sent := 0; sent < n; sent += ops {
		if _, err := nc.Write(block); err != nil {
			return
		}
	}
	time.Sleep(time.Second) // the subscriber reads to the end before the close
}
