package redisclient

import (
	"bufio"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// subReadBuffer is how much of the server's stream a subscription reads at
// once: a flood arrives in large writes, and every message parsed out of
// the buffer costs no system call.
const subReadBuffer = 64 << 10

// maxBulk is the longest bulk string a subscription takes: a key name (or
// a channel, or a reply of the handshake) longer than a megabyte is a
// broken or hostile stream, not something to allocate for, and ends the
// connection as a protocol error.
const maxBulk = 1 << 20

// maxDepth is how deeply a reply's arrays may nest: Redis's pushes and
// replies here nest twice at most, and a deeper one would only spend the
// reader's stack.
const maxDepth = 8

// subConn is a subscription's own connection to one server, read by a
// RESP2 reader of countertop's own. A flood of keyspace notifications or
// invalidations is what countertop must drain faster than Redis makes it:
// go-redis's PubSub allocates a Message (and its strings) per message and
// hands each over a channel, while this reader parses each message out of
// its buffer in place, and allocates nothing but a new key for the changed
// set. go-redis serves every other command.
//
// Every command it sends (AUTH, CLIENT SETNAME, CLIENT ID, SUBSCRIBE or
// PSUBSCRIBE, PING) counts in the server's budget, and waits for its
// answer as the budget notes (see budget.begin), so that a server that
// stops answering shows as silent.
type subConn struct {
	nc     net.Conn
	br     *bufio.Reader
	budget *serverBudget
	skip   int    // bytes of the last bulk string read, still to discard
	big    []byte // holds a bulk string larger than the read buffer
	held   []byte // a message's channel, kept past the next read (see events.message)

	wmu sync.Mutex // writes: the watchdog pings while the reader reads

	pmu    sync.Mutex
	probes []probe // pings sent (or being written) and not answered yet, oldest first
	// lastPing is the payload of the last ping sent (see ping).
	lastPing int64
	// ended: the drain is over, and a ping now would wait for an answer
	// no one reads.
	ended bool
	// The drain's count of messages in the second under way and in the
	// one before (see busy).
	second       time.Time
	thisSecond   uint64
	secondBefore uint64

	// rtt is how long the last ping took to come back (nanoseconds): under
	// a flood, it waited behind everything Redis had queued before it.
	rtt atomic.Int64
}

// probe is a PING sent on the subscription: its payload is when it was
// sent, which its answer gives back.
type probe struct {
	sent int64 // Unix nanoseconds
	w    *wait
}

// replyError is an error reply read by a subConn; like go-redis's own, it
// is a redis.Error.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

var _ redis.Error = replyError("")

// errProtocol is a reply the reader cannot make sense of.
var errProtocol = errors.New("a reply that does not follow the Redis protocol")

// dialSub opens a subscription's connection to the server opt names, as
// go-redis would (opt's dialer, TLS and Sentinel's resolution included),
// logs in with opt's user and password, and names it name, as nameConn
// names go-redis's. It speaks RESP2, in which a subscriber receives
// invalidations as messages.
func dialSub(ctx context.Context, opt *redis.Options, name string, b *serverBudget) (*subConn, error) {
	dial := opt.Dialer
	if dial == nil {
		d := &net.Dialer{Timeout: opt.DialTimeout}
		dial = d.DialContext
	}
	dctx, cancel := context.WithTimeout(ctx, cmp.Or(opt.DialTimeout, defaultDialTimeout))
	defer cancel()
	nc, err := dial(dctx, cmp.Or(opt.Network, "tcp"), opt.Addr)
	if err != nil {
		return nil, err
	}
	c := &subConn{nc: nc, br: bufio.NewReaderSize(nc, subReadBuffer), budget: b}
	if opt.Password != "" {
		args := []string{"AUTH", opt.Password}
		if opt.Username != "" {
			args = []string{"AUTH", opt.Username, opt.Password}
		}
		if _, err := c.do(ctx, args...); err != nil {
			nc.Close()
			return nil, err
		}
	}
	// A refusal leaves it unnamed, as nameConn does, which has said why.
	if _, err := c.do(ctx, "CLIENT", "SETNAME", name); err != nil && !refused(err) {
		nc.Close()
		return nil, err
	}
	return c, nil
}

// close closes the connection; a read under way returns an error.
func (c *subConn) close() { c.nc.Close() }

// send writes one command, counting it in the budget (into debt: a
// subscription's commands cannot wait), and returns the wait to end once
// it is answered.
func (c *subConn) send(args ...string) (*wait, error) {
	w := c.budget.begin()
	if err := c.write(args...); err != nil {
		c.budget.end(w, false)
		return nil, err
	}
	return w, nil
}

// write writes one command, counting it in the budget; its wait is the
// caller's, begun before, since the answer may be read before the write
// returns.
func (c *subConn) write(args ...string) error {
	c.budget.spend(1)
	buf := make([]byte, 0, 64)
	buf = append(buf, '*')
	buf = strconv.AppendInt(buf, int64(len(args)), 10)
	buf = append(buf, '\r', '\n')
	for _, a := range args {
		buf = append(buf, '$')
		buf = strconv.AppendInt(buf, int64(len(a)), 10)
		buf = append(buf, '\r', '\n')
		buf = append(buf, a...)
		buf = append(buf, '\r', '\n')
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.nc.SetWriteDeadline(time.Now().Add(subscribeTimeout)); err != nil {
		return err
	}
	_, err := c.nc.Write(buf)
	return err
}

// do sends a command and reads its reply, before the subscription's
// messages flow (at most subscribeTimeout, or until ctx is done). An error
// reply is returned as a replyError.
func (c *subConn) do(ctx context.Context, args ...string) (any, error) {
	w, err := c.send(args...)
	if err != nil {
		return nil, err
	}
	reply, err := c.readHandshake(ctx)
	c.budget.end(w, wasAnswered(err))
	return reply, err
}

// readHandshake reads one reply within subscribeTimeout, or until ctx is
// done.
func (c *subConn) readHandshake(ctx context.Context) (any, error) {
	stop := context.AfterFunc(ctx, func() { c.nc.SetReadDeadline(time.Now()) })
	defer stop()
	if err := c.nc.SetReadDeadline(time.Now().Add(subscribeTimeout)); err != nil {
		return nil, err
	}
	reply, err := c.readReply(0)
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	if err == nil {
		if e, ok := reply.(replyError); ok {
			return nil, e
		}
	}
	return reply, err
}

// subscribe sends kind ("SUBSCRIBE" or "PSUBSCRIBE") of channels and waits
// until Redis has confirmed them all: from then on, every message is
// delivered.
func (c *subConn) subscribe(ctx context.Context, kind string, channels ...string) error {
	w, err := c.send(append([]string{kind}, channels...)...)
	if err != nil {
		return err
	}
	for range channels {
		reply, err := c.readHandshake(ctx)
		if err != nil {
			c.budget.end(w, wasAnswered(err))
			return err
		}
		if a, ok := reply.([]any); !ok || len(a) != 3 {
			c.budget.end(w, true)
			return fmt.Errorf("%s was answered with %v: %w", kind, reply, errProtocol)
		}
	}
	c.budget.end(w, true)
	// From here on the reader waits for messages as long as it takes: the
	// watchdog tells a silent server.
	return c.nc.SetReadDeadline(time.Time{})
}

// ping sends a PING whose payload is the time, the probe that tells how
// far behind the subscription is (see behind), unless one is still
// unanswered. It reports whether it sent one.
//
// The ping is recorded as awaited before it is written: the drain may
// read its answer before the write returns (it reads apart, and Redis
// answers at once), and an answer to a ping not yet recorded would be
// dropped, leaving the ping out for ever and no other sent.
func (c *subConn) ping(now time.Time) (bool, error) {
	c.pmu.Lock()
	if len(c.probes) > 0 || c.ended {
		c.pmu.Unlock()
		return false, nil
	}
	// Each payload differs from the last, so that an answer names one
	// ping only, whatever the clock does.
	ts := max(now.UnixNano(), c.lastPing+1)
	c.lastPing = ts
	w := c.budget.begin()
	c.probes = append(c.probes, probe{sent: ts, w: w})
	c.pmu.Unlock()
	err := c.write("PING", strconv.FormatInt(ts, 10))
	if err == nil {
		return true, nil
	}
	c.pmu.Lock()
	defer c.pmu.Unlock()
	// Unless the drain's end gave it up meanwhile (see endProbes).
	for i, p := range c.probes {
		if p.w == w {
			c.budget.end(w, false)
			c.probes = slices.Delete(c.probes, i, i+1)
			break
		}
	}
	return false, err
}

// pong takes the answer to the ping sent at payload.
func (c *subConn) pong(payload []byte) {
	ts, ok := atoi(payload)
	if !ok {
		return // a ping that was not ours
	}
	now := time.Now()
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for i, p := range c.probes {
		if p.sent == ts {
			c.budget.end(p.w, true)
			c.probes = slices.Delete(c.probes, i, i+1)
			c.rtt.Store(now.UnixNano() - ts)
			return
		}
	}
}

// heard notes that the server sent something while a ping waits behind
// it: it is not silent, only busy.
func (c *subConn) heard() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if len(c.probes) > 0 {
		c.probes[0].w.touch()
	}
}

// behind returns how far behind the server the subscription is as of now:
// how long the last ping took to come back, or how long the one still out
// has waited, whichever is longer.
func (c *subConn) behind(now time.Time) time.Duration {
	lag := time.Duration(c.rtt.Load())
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if len(c.probes) > 0 {
		lag = max(lag, now.Sub(time.Unix(0, c.probes[0].sent)))
	}
	return lag
}

// unanswered returns when the oldest ping still unanswered was sent; zero
// when none is.
func (c *subConn) unanswered() time.Time {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	if len(c.probes) == 0 {
		return time.Time{}
	}
	return time.Unix(0, c.probes[0].sent)
}

// endProbes gives up the pings still out, once the connection is closed,
// and any the watchdog would send after.
func (c *subConn) endProbes() {
	c.pmu.Lock()
	defer c.pmu.Unlock()
	for _, p := range c.probes {
		c.budget.end(p.w, false)
	}
	c.probes, c.ended = nil, true
}

// discard drops the bulk string last read, before the next read.
func (c *subConn) discard() {
	if c.skip > 0 {
		c.br.Discard(c.skip)
		c.skip = 0
	}
}

// readLine returns the next line without its CRLF; it is valid until the
// next read.
func (c *subConn) readLine() ([]byte, error) {
	c.discard()
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			err = errProtocol
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, errProtocol
	}
	return line[:len(line)-2], nil
}

// readBulk reads a bulk string, and returns its bytes (nil for a null),
// valid until the next read. It reads the header of any other reply as
// an error: the callers know that a bulk string comes next.
func (c *subConn) readBulk() ([]byte, error) {
	line, err := c.readLine()
	if err != nil {
		return nil, err
	}
	return c.bulkAfter(line)
}

// bulkAfter reads the body of the bulk string whose header is line.
func (c *subConn) bulkAfter(line []byte) ([]byte, error) {
	if line[0] != '$' {
		return nil, errProtocol
	}
	n, ok := atoi(line[1:])
	switch {
	case !ok:
		return nil, errProtocol
	case n < 0:
		return nil, nil
	case n > maxBulk:
		return nil, errProtocol
	case n+2 <= int64(c.br.Size()):
		b, err := c.br.Peek(int(n) + 2)
		if err != nil {
			return nil, err
		}
		if b[n] != '\r' || b[n+1] != '\n' {
			return nil, errProtocol
		}
		c.skip = int(n) + 2
		return b[:n], nil
	}
	if int64(cap(c.big)) < n+2 {
		c.big = make([]byte, n+2)
	}
	b := c.big[:n+2]
	if _, err := io.ReadFull(c.br, b); err != nil {
		return nil, err
	}
	if b[n] != '\r' || b[n+1] != '\n' {
		return nil, errProtocol
	}
	return b[:n], nil
}

// readReply reads any reply (in the handshake, and what the drain does
// not expect): a string, an int64, nil, a replyError or a []any of them,
// nested depth arrays deep already.
func (c *subConn) readReply(depth int) (any, error) {
	line, err := c.readLine()
	if err != nil {
		return nil, err
	}
	switch line[0] {
	case '+':
		return string(line[1:]), nil
	case '-':
		return replyError(line[1:]), nil
	case ':':
		n, ok := atoi(line[1:])
		if !ok {
			return nil, errProtocol
		}
		return n, nil
	case '$':
		b, err := c.bulkAfter(line)
		if b == nil || err != nil {
			return nil, err
		}
		return string(b), nil
	case '*':
		n, ok := atoi(line[1:])
		if !ok {
			return nil, errProtocol
		}
		if n < 0 {
			return nil, nil
		}
		if depth >= maxDepth {
			return nil, errProtocol
		}
		a := make([]any, 0, min(n, 64))
		for range n {
			v, err := c.readReply(depth + 1)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		return a, nil
	}
	return nil, errProtocol
}

// skipReplies reads and drops n replies.
func (c *subConn) skipReplies(n int64) error {
	for range n {
		if _, err := c.readReply(0); err != nil {
			return err
		}
	}
	return nil
}

// count adds n messages received at now to the drain's count.
func (c *subConn) count(n uint64, now time.Time) {
	if gap := now.Sub(c.second); gap >= time.Second {
		c.secondBefore = c.thisSecond
		if gap >= 2*time.Second {
			c.secondBefore = 0
		}
		c.second, c.thisSecond = now, 0
	}
	c.thisSecond += n
}

// busy returns how many messages the drain received in about the last
// second, once it has returned.
func (c *subConn) busy() uint64 {
	if time.Since(c.second) >= 2*time.Second {
		return 0
	}
	return c.thisSecond + c.secondBefore
}

// atoi parses a decimal integer, with its sign, without allocating.
func atoi(b []byte) (int64, bool) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 { // 19 digits fit in a uint64
		return 0, false
	}
	var n uint64
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, false
		}
		n = n*10 + uint64(d-'0')
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(n), true
	}
	return int64(n), true
}

// heardEvery is how many messages the drain reads between telling the
// watchdog, and the ping waiting behind them, that it heard from the
// server (and whenever it has read all that had come).
const heardEvery = 256

// drain reads the subscription's messages until the connection fails,
// putting the keys that they name into w's changed set (see
// pushMode.message) and counting what it read in heard. It returns the
// error that ended it.
func (c *subConn) drain(w *pushWatcher, heard *atomic.Uint64) error {
	var n uint64 // read since heard was told
	tell := func() {
		heard.Add(n)
		c.count(n, time.Now())
		n = 0
		c.heard()
	}
	for {
		c.discard() // what is left in the buffer is what came after
		if n >= heardEvery || n > 0 && c.br.Buffered() == 0 {
			tell()
		}
		line, err := c.readLine()
		if err != nil {
			return err
		}
		if line[0] != '*' {
			if line[0] == '-' {
				return replyError(line[1:])
			}
			return errProtocol
		}
		size, ok := atoi(line[1:])
		if !ok || size < 1 {
			return errProtocol
		}
		kind, err := c.readBulk()
		if err != nil {
			return err
		}
		n++
		switch {
		case string(kind) == "pmessage" || string(kind) == "message":
			keys, err := w.push.message(c, kind, size)
			if err != nil {
				return err
			}
			n += keys
		case size == 2 && string(kind) == "pong":
			payload, err := c.readBulk()
			if err != nil {
				return err
			}
			c.pong(payload)
		default: // a confirmation, a ping of someone else's
			if err := c.skipReplies(size - 1); err != nil {
				return err
			}
		}
	}
}
