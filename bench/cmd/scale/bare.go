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
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/sync/errgroup"

	"github.com/countertop/countertop/model"
)

// bare times the snapshot's work done by the leanest client this file can
// be: the same SCAN stripes (three on a server, one on a cluster's
// master, as redisclient's Snapshot walks them), the same pipelines of GETRANGE and PTTL
// for 500 keys on two more connections and the same TYPE pipeline for the
// keys that are not strings, but written as bytes on raw sockets and every
// reply skipped as it is read, with no client library and nothing kept but
// the keys SCAN returns. Its ratio to Redis time is what any client doing
// this work, on this machine, can at best hope for. Each node of fl is
// read so, all at once.
func bare(ctx context.Context, fl *fleet, cfg config) (snapshotRun, error) {
	for _, node := range fl.nodes {
		if opt := node.Options(); opt.TLSConfig != nil || opt.Network != "tcp" {
			return snapshotRun{}, errors.New("the bare client speaks plain TCP only: give scale a redis:// URL")
		}
	}
	return fl.measure(ctx, func() (snapshotRun, error) {
		start := time.Now()
		g, gctx := errgroup.WithContext(ctx)
		rows := make([]int, len(fl.nodes))
		stripes := 3 // as redisclient's snapshotStripes
		if fl.cluster {
			stripes = 1
		}
		for i, node := range fl.nodes {
			g.Go(func() (err error) {
				rows[i], err = bareNode(gctx, node.Options(), cfg.pattern, stripes)
				return err
			})
		}
		err := g.Wait()
		r := snapshotRun{wall: time.Since(start)}
		for _, n := range rows {
			r.rows += n
		}
		return r, err
	})
}

// bareNode is bare's work on one node, walked in stripes stripes: it
// returns how many keys it read.
func bareNode(ctx context.Context, opt *redis.Options, pattern string, stripes int) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	found := make(chan []string, 64)
	walkers, wctx := errgroup.WithContext(gctx)
	for i := range stripes {
		walkers.Go(func() error { return bareStripe(wctx, opt, pattern, i, stripes, found) })
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
		return 0, err
	}
	return <-rows + <-rows, nil
}

// bareConn is a raw connection to the benchmark Redis, logged in. It is
// closed when the context it was dialled with is done, so that a read
// never outlives the run.
type bareConn struct {
	net.Conn
	r    *bufio.Reader
	out  []byte
	stop func() bool
}

func bareDial(ctx context.Context, opt *redis.Options) (*bareConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", opt.Addr)
	if err != nil {
		return nil, err
	}
	c := &bareConn{Conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	c.stop = context.AfterFunc(ctx, func() { conn.Close() })
	sent := 0
	switch {
	case opt.Username != "":
		c.command("AUTH", opt.Username, opt.Password)
		sent++
	case opt.Password != "":
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
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *bareConn) Close() error {
	c.stop()
	return c.Conn.Close()
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

// wrongType reports whether err is Redis's answer for a key of another
// type than the command reads.
func wrongType(err error) bool {
	var re replyError
	return errors.As(err, &re) && strings.HasPrefix(string(re), "WRONGTYPE")
}

// skip reads one reply, appending the bulk strings in it to keep when
// keep is not nil; it allocates only for what it keeps. An error reply is
// a replyError.
func (c *bareConn) skip(keep *[]string) error {
	line, err := c.r.ReadSlice('\n')
	if err == nil && len(line) < 3 {
		err = errors.New("a reply too short")
	}
	if err != nil {
		return err
	}
	head, body := line[0], line[1:len(line)-2]
	switch head {
	case '+', ':':
		return nil
	case '-':
		return replyError(body)
	case '$', '*':
		n, err := atoi(body)
		if err != nil || n < 0 {
			return err // a null
		}
		if head == '*' {
			for range n {
				if err := c.skip(keep); err != nil {
					return err
				}
			}
			return nil
		}
		if keep == nil {
			_, err := c.r.Discard(n + 2)
			return err
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(c.r, buf); err != nil {
			return err
		}
		*keep = append(*keep, string(buf[:n]))
		return nil
	}
	return fmt.Errorf("a reply of unknown type %q", head)
}

// atoi reads a RESP length, -1 included, without making a string of it.
func atoi(b []byte) (int, error) {
	if len(b) == 2 && b[0] == '-' && b[1] == '1' {
		return -1, nil
	}
	n := 0
	for _, d := range b {
		if d < '0' || d > '9' {
			return 0, fmt.Errorf("a bad length %q in a reply", b)
		}
		n = n*10 + int(d-'0')
	}
	return n, nil
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

// bareReads reads each chunk of keys as redisclient's fetchChunk does: one
// pipeline of GETRANGE and PTTL, then one of TYPE for the keys GETRANGE
// found are not strings. It skips the replies and returns how many keys it
// read.
func bareReads(ctx context.Context, opt *redis.Options, chunks <-chan []string) (int, error) {
	c, err := bareDial(ctx, opt)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	read := 0
	var others []string
	for keys := range chunks {
		for _, k := range keys {
			c.command("GETRANGE", k, "0", strconv.Itoa(model.MaxRaw-1))
			c.command("PTTL", k)
		}
		if err := c.send(); err != nil {
			return read, err
		}
		others = others[:0]
		for _, k := range keys {
			switch err := c.skip(nil); {
			case wrongType(err):
				others = append(others, k)
			case err != nil:
				return read, err
			}
			if err := c.skip(nil); err != nil {
				return read, err
			}
		}
		if len(others) > 0 {
			for _, k := range others {
				c.command("TYPE", k)
			}
			if err := c.send(); err != nil {
				return read, err
			}
			for range others {
				if err := c.skip(nil); err != nil {
					return read, err
				}
			}
		}
		read += len(keys)
	}
	return read, nil
}
