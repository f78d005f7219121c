package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"net"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"
)

// bare times the snapshot's work done by the leanest client this file can
// be: the same two SCAN stripes and the same pipelines of GETRANGE and
// PTTL for 500 keys on two more connections, but written as bytes on raw
// sockets and every reply skipped as it is read, with no client library,
// no objects per command and nothing kept. Its ratio to Redis time is what
// any client doing this work, on this machine, can at best hope for.
func bare(ctx context.Context, rdb *redis.Client, cfg config) (snapshotRun, error) {
	opt := rdb.Options()
	before, err := readStats(ctx, rdb)
	if err != nil {
		return snapshotRun{}, err
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	found := make(chan []string, 64)
	var walkers errgroup.Group
	const stripes = 2
	for i := range stripes {
		walkers.Go(func() error { return bareStripe(gctx, opt, cfg.pattern, i, stripes, found) })
	}
	g.Go(func() error {
		defer close(found)
		return walkers.Wait()
	})
	chunks := make(chan []string, 1024)
	g.Go(func() error {
		defer close(chunks)
		put := func(chunk []string) error {
			select {
			case chunks <- chunk:
				return nil
			case <-gctx.Done():
				return gctx.Err()
			}
		}
		var chunk []string
		for keys := range found {
			chunk = append(chunk, keys...)
			for len(chunk) >= 500 {
				if err := put(chunk[:500:500]); err != nil {
					return err
				}
				chunk = chunk[500:]
			}
		}
		if len(chunk) > 0 {
			return put(chunk)
		}
		return nil
	})
	rows := make(chan int, 2)
	for range 2 {
		g.Go(func() error {
			n, err := bareReads(gctx, opt, chunks)
			rows <- n
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return snapshotRun{}, err
	}
	r := snapshotRun{wall: time.Since(start), rows: <-rows + <-rows}
	after, err := readStats(ctx, rdb)
	if err != nil {
		return snapshotRun{}, err
	}
	r.server = after.since(before)
	return r, nil
}

// bareConn is a raw connection to the benchmark Redis, logged in.
type bareConn struct {
	net.Conn
	r   *bufio.Reader
	out []byte
}

func bareDial(ctx context.Context, opt *redis.Options) (*bareConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", opt.Addr)
	if err != nil {
		return nil, err
	}
	c := &bareConn{Conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	sent := 0
	if opt.Password != "" {
		c.command("AUTH", opt.Password)
		sent++
	}
	if opt.DB != 0 {
		c.command("SELECT", strconv.Itoa(opt.DB))
		sent++
	}
	if sent > 0 {
		err = c.send()
	}
	for range sent {
		if err == nil {
			err = c.skip(nil)
		}
	}
	if err != nil {
		conn.Close()
		return nil, err
	}
	return c, nil
}

// command appends a command in RESP to what send will write.
func (c *bareConn) command(args ...string) {
	c.out = append(c.out, '*')
	c.out = strconv.AppendInt(c.out, int64(len(args)), 10)
	c.out = append(c.out, "\r\n"...)
	for _, a := range args {
		c.out = append(c.out, '$')
		c.out = strconv.AppendInt(c.out, int64(len(a)), 10)
		c.out = append(c.out, "\r\n"...)
		c.out = append(c.out, a...)
		c.out = append(c.out, "\r\n"...)
	}
}

func (c *bareConn) send() error {
	_, err := c.Write(c.out)
	c.out = c.out[:0]
	return err
}

// replyError is an error Redis answered with.
type replyError string

func (e replyError) Error() string { return string(e) }

// skip reads one reply, appending the bulk strings in it to keep when
// keep is not nil. An error reply is a replyError.
func (c *bareConn) skip(keep *[]string) error {
	line, err := c.r.ReadSlice('\n')
	if err == nil && len(line) < 3 {
		err = errors.New("a reply too short")
	}
	if err != nil {
		return err
	}
	head, body := line[0], string(line[1:len(line)-2])
	switch head {
	case '+', ':':
		return nil
	case '-':
		return replyError(body)
	case '$', '*':
		n, err := strconv.Atoi(body)
		if err != nil {
			return err
		}
		if head == '*' {
			for range n {
				if err := c.skip(keep); err != nil {
					return err
				}
			}
			return nil
		}
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return err
		}
		if keep != nil {
			*keep = append(*keep, string(buf[:n]))
		}
		return nil
	}
	return fmt.Errorf("a reply of unknown type %q", head)
}

// bareStripe walks the i-th of n stripes of the keyspace as
// redisclient's snapshot does, and sends each reply's keys to found.
func bareStripe(ctx context.Context, opt *redis.Options, pattern string, i, n int, found chan<- []string) error {
	c, err := bareDial(ctx, opt)
	if err != nil {
		return err
	}
	defer c.Close()
	width := math.MaxUint64/uint64(n) + 1
	end := uint64(i+1) * width
	cursor := bits.Reverse64(uint64(i) * width)
	for {
		c.command("SCAN", strconv.FormatUint(cursor, 10), "MATCH", pattern, "COUNT", "1000")
		if err := c.send(); err != nil {
			return err
		}
		var reply []string // the next cursor, then the keys
		if err := c.skip(&reply); err != nil {
			return err
		}
		if len(reply) == 0 {
			return errors.New("SCAN answered without a cursor")
		}
		next, err := strconv.ParseUint(reply[0], 10, 64)
		if err != nil {
			return err
		}
		if len(reply) > 1 {
			select {
			case found <- reply[1:]:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if next == 0 || i < n-1 && bits.Reverse64(next) >= end {
			return nil
		}
		cursor = next
	}
}

// bareReads reads each chunk of keys in one pipeline of GETRANGE and PTTL
// and skips the replies; it returns how many keys it read.
func bareReads(ctx context.Context, opt *redis.Options, chunks <-chan []string) (int, error) {
	c, err := bareDial(ctx, opt)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	read := 0
	for keys := range chunks {
		for _, k := range keys {
			c.command("GETRANGE", k, "0", "65535")
			c.command("PTTL", k)
		}
		if err := c.send(); err != nil {
			return read, err
		}
		for range 2 * len(keys) {
			// WRONGTYPE, for a key that is not a string, is an answer.
			if err := c.skip(nil); err != nil && !errors.As(err, new(replyError)) {
				return read, err
			}
		}
		read += len(keys)
	}
	return read, nil
}
