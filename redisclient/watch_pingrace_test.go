package redisclient

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
)

// lateWriteConn is a subscription's connection whose write of a PING
// returns only once the drain has read the PING's answer: the interleaving
// in which a reply is read before the write that asked for it returns,
// which a busy machine makes at random, made every time.
type lateWriteConn struct {
	net.Conn

	mu      sync.Mutex
	payload []byte        // of the PING whose answer is awaited; nil when none is
	seen    []byte        // what was read since, for the payload's answer
	answer  bool          // the answer was read, and handed to the drain
	read    chan struct{} // closed once the drain asks for more after it
}

// Write writes b, and when b is a PING, waits until the drain has read its
// answer: the drain reads the connection again only once it has parsed all
// it had, the pong included.
func (c *lateWriteConn) Write(b []byte) (int, error) {
	payload, isPing := pingPayload(b)
	var read chan struct{}
	if isPing {
		read = make(chan struct{})
		c.mu.Lock()
		c.payload, c.seen, c.answer, c.read = payload, nil, false, read
		c.mu.Unlock()
	}
	n, err := c.Conn.Write(b)
	if err != nil || !isPing {
		return n, err
	}
	select {
	case <-read:
	case <-time.After(10 * time.Second): // the answer never came: the test says so
	}
	return n, nil
}

// Read reads into b, noting when the answer awaited is among what it read,
// and, at the next read, that the drain has parsed it.
func (c *lateWriteConn) Read(b []byte) (int, error) {
	c.mu.Lock()
	if c.answer {
		close(c.read)
		c.payload, c.answer = nil, false
	}
	c.mu.Unlock()
	n, err := c.Conn.Read(b)
	c.mu.Lock()
	if c.payload != nil && !c.answer {
		// The payload with its CRLF: the drain parses the whole pong out
		// of its buffer without reading again.
		c.seen = append(c.seen, b[:n]...)
		want := append(append([]byte{}, c.payload...), '\r', '\n')
		if bytes.Contains(c.seen, want) {
			c.answer = true
		}
		if keep := len(want) - 1; len(c.seen) > keep {
			c.seen = c.seen[len(c.seen)-keep:]
		}
	}
	c.mu.Unlock()
	return n, err
}

// pingPayload returns the payload of the PING command b holds.
func pingPayload(b []byte) ([]byte, bool) {
	const head = "*2\r\n$4\r\nPING\r\n$"
	rest, ok := bytes.CutPrefix(b, []byte(head))
	if !ok {
		return nil, false
	}
	_, rest, ok = bytes.Cut(rest, []byte("\r\n"))
	if !ok {
		return nil, false
	}
	payload, _, ok := bytes.Cut(rest, []byte("\r\n"))
	return payload, ok
}

// A ping is matched to its answer whatever the interleaving: here every
// answer is read before the write of its PING returns, while events flow.
// A ping whose answer went unmatched would stay out for ever, no other
// ping would be sent, and the header would say the subscription was
// further behind each second, then that the server did not answer.
func TestPingAnsweredBeforeItsWriteReturns(t *testing.T) {
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	opt := s.Client(t).Options()
	dial := opt.Dialer
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	opt.Dialer = func(ctx context.Context, network, addr string) (net.Conn, error) {
		nc, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &lateWriteConn{Conn: nc}, nil
	}
	ctx := context.Background()
	conn, err := dialSub(ctx, opt, "countertop-test", newBudget(0).server(""))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close()
	if err := conn.subscribe(ctx, "PSUBSCRIBE", "__keyspace@0__:rl:*"); err != nil {
		t.Fatal(err)
	}
	w := drainWatcher()
	var heard atomic.Uint64
	drained := make(chan error, 1)
	go func() { drained <- conn.drain(w, &heard) }()

	// Events flow all along: INCRs on 30 keys, as fast as they go.
	rdb := s.Client(t)
	stop := make(chan struct{})
	var writes sync.WaitGroup
	writes.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := rdb.Incr(ctx, fmt.Sprintf("rl:%d", i%30)).Err(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	defer func() {
		close(stop)
		writes.Wait()
	}()

	const pings = 200
	for i := range pings {
		sent, err := conn.ping(time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if !sent {
			t.Fatalf("ping %d of %d was not sent: one before it is still out (since %v), its answer lost", i+1, pings, conn.unanswered())
		}
		deadline := time.Now().Add(5 * time.Second)
		for !conn.unanswered().IsZero() {
			if time.Now().After(deadline) {
				t.Fatalf("ping %d of %d is still unanswered after 5s, though its answer was read: behind %v", i+1, pings, conn.behind(time.Now()))
			}
			select {
			case err := <-drained:
				t.Fatalf("the drain ended: %v", err)
			case <-time.After(time.Millisecond):
			}
		}
	}
	if n := w.changed.len(); n != 30 {
		t.Errorf("events named %d keys while the pings went, want the 30 written", n)
	}
	if lag := conn.behind(time.Now()); lag >= behindAfter {
		t.Errorf("after %d pings answered at once, behind = %v", pings, lag)
	}
}
