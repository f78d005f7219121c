package redisclient

import (
	"bufio"
	"fmt"
	"math"
	"net"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// bulk is s as a RESP bulk string.
func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

// pmessage is the keyspace notification Redis sends a PSUBSCRIBE of
// pattern when key changes.
func pmessage(pattern, key, event string) string {
	return "*4\r\n" + bulk("pmessage") + bulk(pattern) + bulk("__keyspace@0__:"+key) + bulk(event)
}

// invalidation is the message Redis sends a RESP2 subscriber of
// __redis__:invalidate naming keys.
func invalidation(keys ...string) string {
	s := "*3\r\n" + bulk("message") + bulk(invalidations) + "*" + strconv.Itoa(len(keys)) + "\r\n"
	for _, k := range keys {
		s += bulk(k)
	}
	return s
}

// drainWatcher returns a watcher of database 0 in events mode (or, with
// patterns, tracking mode) with no client behind it: enough for a drain.
func drainWatcher(patterns ...string) *pushWatcher {
	w := newPushWatcher(&reader{}, WatchOptions{}, eventsKind)
	w.push = &events{w: w, prefix: []byte("__keyspace@0__:")}
	if len(patterns) > 0 {
		t := newTracking(patterns)
		t.w = w
		w.kind, w.push = trackingKind, t
	}
	return w
}

// drained returns the keys the drain of stream puts in the changed set of
// drainWatcher(patterns...), whether it saw a flush, and the error that
// ended it.
func drained(stream string, patterns ...string) (keys []string, flushed bool, err error) {
	w := drainWatcher(patterns...)
	c := &subConn{br: bufio.NewReaderSize(strings.NewReader(stream), 16), budget: (*budget)(nil).server("")}
	var heard atomic.Uint64
	err = c.drain(w, &heard)
	if want := uint64(strings.Count(stream, "message\r\n")); heard.Load() < want && err != nil && err.Error() == "EOF" {
		err = fmt.Errorf("heard %d messages of %d", heard.Load(), want)
	}
	select {
	case <-w.flushSeen:
		flushed = true
	default:
	}
	keys = w.changed.take()
	slices.Sort(keys)
	return keys, flushed, err
}

// The drain reads every key the messages name, whatever bytes it holds,
// once each; in tracking mode only those a pattern matches, and a null as
// a flush; and a pong answers its ping.
func TestDrainReadsTheKeysMessagesName(t *testing.T) {
	long := strings.Repeat("k", 100) // longer than the test's read buffer
	for _, tc := range []struct {
		name     string
		stream   string
		patterns []string
		keys     []string
		flushed  bool
	}{
		{"events", pmessage("__keyspace@0__:rl:*", "rl:a", "incrby") + pmessage("__keyspace@0__:rl:*", "rl:b", "expire") + pmessage("__keyspace@0__:rl:*", "rl:a", "incrby"), nil, []string{"rl:a", "rl:b"}, false},
		{"odd bytes", pmessage("p", "rl:\r\n:x", "set") + pmessage("p", "", "set") + pmessage("p", long, "del"), nil, []string{"", long, "rl:\r\n:x"}, false},
		{"another database's channel", "*4\r\n" + bulk("pmessage") + bulk("p") + bulk("__keyspace@1__:rl:a") + bulk("set"), nil, nil, false},
		{"a confirmation and a pong", "*3\r\n" + bulk("psubscribe") + bulk("p") + ":1\r\n" + "*2\r\n" + bulk("pong") + bulk("123") + pmessage("p", "rl:a", "set"), nil, []string{"rl:a"}, false},
		{"tracking", invalidation("rl:a", "rl:b", "other:c") + invalidation("rl:a"), []string{"rl:*"}, []string{"rl:a", "rl:b"}, false},
		{"tracking a flush", "*3\r\n" + bulk("message") + bulk(invalidations) + "$-1\r\n" + invalidation("rl:x"), []string{"rl:*"}, []string{"rl:x"}, true},
		{"tracking a null array", "*3\r\n" + bulk("message") + bulk(invalidations) + "*-1\r\n", []string{"rl:*"}, nil, true},
		{"tracking, someone else's channel", "*3\r\n" + bulk("message") + bulk("news") + bulk("rl:a"), []string{"rl:*"}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			keys, flushed, err := drained(tc.stream, tc.patterns...)
			if err == nil || err.Error() != "EOF" {
				t.Errorf("the drain ended with %v, want EOF at the stream's end", err)
			}
			if !slices.Equal(keys, tc.keys) || flushed != tc.flushed {
				t.Errorf("drained %q (flushed %v), want %q (flushed %v)", keys, flushed, tc.keys, tc.flushed)
			}
		})
	}
}

// What does not follow the protocol, or is an error reply, ends the drain
// with an error, and never a panic.
func TestDrainRefusesBrokenStreams(t *testing.T) {
	for _, stream := range []string{
		"+OK\r\n",
		"-ERR oops\r\n",
		"*x\r\n",
		"*4\r\n$8\r\npmessage\r\n$1\r\np\r\n:1\r\n",
		"*3\r\n$7\r\nmessage\r\n" + bulk(invalidations) + "+no\r\n",
		"*4\r\n$8\r\npmessage\r\n$99999999999999999999\r\n",
		"*1\n",
		// a bulk longer than maxBulk, which is not allocated for
		"*4\r\n$8\r\npmessage\r\n$536870000\r\nxx\r\n",
		// a bulk whose end is not CRLF
		"*4\r\n$8\r\npmessage\r\n$1\r\npXX" + bulk("__keyspace@0__:rl:a") + bulk("set"),
		// arrays nested past maxDepth, as the drain skips an unexpected reply
		"*2\r\n$3\r\nfoo\r\n" + strings.Repeat("*1\r\n", 100_000) + ":1\r\n",
	} {
		if _, _, err := drained(stream, "rl:*"); err == nil || err.Error() == "EOF" {
			t.Errorf("drained %q: %v, want a protocol or reply error", stream, err)
		}
	}
}

// atoi reads what Redis sends as lengths and a ping's payload, the time in
// Unix nanoseconds (19 digits) included.
func TestAtoi(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"-1", -1, true}, {"42", 42, true},
		{strconv.FormatInt(time.Now().UnixNano(), 10), 0, true},
		{strconv.FormatInt(math.MaxInt64, 10), math.MaxInt64, true},
		{"9223372036854775808", 0, false}, {"99999999999999999999", 0, false},
		{"", 0, false}, {"-", 0, false}, {"1x", 0, false}, {" 1", 0, false},
	} {
		t.Run("in "+strconv.Quote(tc.in), func(t *testing.T) {
			got, ok := atoi([]byte(tc.in))
			want := tc.want
			if tc.ok && want == 0 && tc.in != "0" {
				want, _ = strconv.ParseInt(tc.in, 10, 64)
			}
			if ok != tc.ok || ok && got != want {
				t.Errorf("atoi(%q) = %d, %v; want %d, %v", tc.in, got, ok, want, tc.ok)
			}
		})
	}
}

// FuzzDrain: whatever bytes a server sends, the drain returns an error at
// their end (never a panic), and every key it takes from a well-formed
// message is one the message named.
func FuzzDrain(f *testing.F) {
	f.Add(pmessage("p", "rl:a", "set"), false)
	f.Add(invalidation("rl:a", "x"), true)
	f.Add("*3\r\n"+bulk("message")+bulk(invalidations)+"$-1\r\n", true)
	f.Add("*2\r\n"+bulk("pong")+bulk("1"), false)
	f.Fuzz(func(t *testing.T, stream string, tracking bool) {
		var patterns []string
		if tracking {
			patterns = []string{"*"}
		}
		keys, _, err := drained(stream, patterns...)
		if err == nil {
			t.Fatal("the drain ended without an error")
		}
		for _, k := range keys {
			if !strings.Contains(stream, k) {
				t.Fatalf("drained %q, which %q does not hold", k, stream)
			}
		}
	})
}

// A ping's answer is matched to it by its payload, and how long it took is
// the subscription's lag until the next.
func TestPongMeasuresTheLag(t *testing.T) {
	b := newBudget(0)
	c := &subConn{budget: b.server("")}
	sent := time.Now().Add(-2 * time.Second)
	w := c.budget.begin()
	c.probes = []probe{{sent: sent.UnixNano(), w: w}}
	if lag := c.behind(time.Now()); lag < 2*time.Second {
		t.Errorf("with a ping out for 2s, behind = %v", lag)
	}
	c.pong([]byte(strconv.FormatInt(sent.UnixNano(), 10)))
	if len(c.probes) != 0 {
		t.Fatalf("the pong left %d probes out", len(c.probes))
	}
	if lag := c.behind(time.Now()); lag < 2*time.Second || lag > time.Minute {
		t.Errorf("after a pong 2s late, behind = %v", lag)
	}
	if !c.budget.oldestWait(time.Now()).IsZero() {
		t.Error("the answered ping still waits in the budget")
	}
}

// The sentence on a subscription the server closed: certain when the
// server counts output buffer closes and the count rose; none when it did
// not rise, or when the server is gone (a restart); hedged otherwise, and
// always naming the setting to change.
func TestOverflowSentence(t *testing.T) {
	for _, tc := range []struct {
		name        string
		before, now int64
		up          bool
		behind      time.Duration
		busy        uint64
		want        string // "" for none
	}{
		{"counted", 3, 4, true, 0, 0, "because countertop fell behind (its pubsub output buffer passed client-output-buffer-limit pubsub)"},
		{"counted, not ours", 3, 3, true, 0, 0, ""},
		{"gone", -1, -1, false, 5 * time.Second, 5000, ""},
		{"uncounted, behind", -1, -1, true, 2 * time.Second, 0, "while countertop was 2.0s behind, most likely"},
		{"uncounted, in a flood", -1, -1, true, 0, 5000, "in the middle of a flood, most likely"},
		{"uncounted, quiet", -1, -1, true, 0, 10, "or someone ran CLIENT KILL; countertop re-reads every key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := overflowSentence("notification", "h:1", tc.before, tc.now, tc.up, tc.behind, tc.busy)
			switch {
			case tc.want == "" && got != "":
				t.Errorf("%s: %q, want none", tc.name, got)
			case tc.want != "" && (!strings.Contains(got, tc.want) || !strings.Contains(got, `CONFIG SET client-output-buffer-limit "pubsub 64mb 16mb 60"`) || !strings.HasPrefix(got, "Redis closed the notification connection to h:1")):
				t.Errorf("%s: %q, want it to say %q and the setting", tc.name, got, tc.want)
			}
		})
	}
	if n := infoCount("# Stats\r\ntotal_connections_received:9\r\nclient_output_buffer_limit_disconnections:7\r\n", overflowStat); n != 7 {
		t.Errorf("infoCount = %d, want 7", n)
	}
	if n := infoCount("# Stats\r\ntotal_connections_received:9\r\n", overflowStat); n != -1 {
		t.Errorf("infoCount of an INFO without the field = %d, want -1", n)
	}
}

// Once the drain is over, the watchdog's ping sends nothing: its answer
// would never be read, and its wait would show the server silent for good.
func TestNoPingOnceTheDrainEnded(t *testing.T) {
	c := &subConn{budget: (*budget)(nil).server("")}
	c.endProbes()
	if sent, err := c.ping(time.Now()); sent || err != nil || !c.unanswered().IsZero() {
		t.Errorf("ping after the drain ended: sent %v, error %v, unanswered since %v; want nothing sent", sent, err, c.unanswered())
	}
}

// A ping that could not be written is not left awaited: the watchdog gives
// the connection up with the write's error, and a later ping is sent.
func TestPingNotWrittenIsNotAwaited(t *testing.T) {
	nc, other := net.Pipe()
	other.Close()
	c := &subConn{nc: nc, budget: newBudget(0).server("")}
	if sent, err := c.ping(time.Now()); sent || err == nil {
		t.Fatalf("ping on a closed connection: sent %v, error %v; want an error", sent, err)
	}
	if !c.unanswered().IsZero() || c.behind(time.Now()) != 0 {
		t.Errorf("the ping not written is still awaited: unanswered since %v, behind %v", c.unanswered(), c.behind(time.Now()))
	}
}
