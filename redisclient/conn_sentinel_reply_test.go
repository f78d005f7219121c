package redisclient

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/countertop/countertop/internal/redistest"
)

// fakeSentinel answers SENTINEL commands with an array of n values, and
// everything else as a Redis would that knows no HELLO. It returns its
// address.
func fakeSentinel(t *testing.T, n int) string {
	t.Helper()
	return redistest.Serve(t, func(conn net.Conn) {
		defer conn.Close()
		r := bufio.NewReader(conn)
		for {
			args, err := readCommand(r)
			if err != nil {
				return
			}
			var reply string
			switch strings.ToLower(args[0]) {
			case "hello":
				reply = "-ERR unknown command 'HELLO'\r\n"
			case "sentinel":
				reply = fmt.Sprintf("*%d\r\n", n) + strings.Repeat("$9\r\n127.0.0.1\r\n", n)
			default:
				reply = "+OK\r\n"
			}
			if _, err := conn.Write([]byte(reply)); err != nil {
				return
			}
		}
	})
}

// readCommand reads one command, an array of bulk strings, from r.
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.TrimPrefix(line, "*")))
	if err != nil || n < 1 {
		return nil, fmt.Errorf("not a command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		if _, err := r.ReadString('\n'); err != nil { // $len
			return nil, err
		}
		arg, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		args[i] = strings.TrimSuffix(arg, "\r\n")
	}
	return args, nil
}

// TestSentinelMasterReplyShape: a Sentinel that names the master with
// anything but a host and a port gets a sentence, not a panic.
func TestSentinelMasterReplyShape(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 1} {
		t.Run(fmt.Sprintf("%d values", n), func(t *testing.T) {
			addr := fakeSentinel(t, n)
			c := &Client{}
			c.useSentinel(&redis.Options{Addr: addr}, sentinelTarget{master: "mymaster", addrs: []string{addr}}, Auth{})
			_, err := c.sentinelMaster(context.Background())
			c.Close()
			want := fmt.Sprintf("the Sentinel at %s did not answer with a host and a port for master \"mymaster\" (it sent %d values) — check that --sentinel, or the hosts of a redis+sentinel:// URL, are Sentinels", addr, n)
			if err == nil || err.Error() != want {
				t.Errorf("%d values: %v\nwant %s", n, err, want)
			}
		})
	}
}
