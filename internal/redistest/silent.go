package redistest

import (
	"net"
	"sync"
	"testing"
)

// Serve listens on a free port of 127.0.0.1 until the test ends and hands
// each connection to handle, in a goroutine of its own: a fake server, a
// proxy, a port that swallows traffic. handle may return at once and leave
// the connection open: every connection is closed when the test ends. It
// returns the address, host:port.
func Serve(t testing.TB, handle func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
	)
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
	})
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed { // accepted while the test ended
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			go handle(c)
		}
	}()
	return l.Addr().String()
}

// Silent listens on a free port, accepts connections and never answers,
// like a firewall that swallows traffic or a service that is not Redis,
// until the test ends. It returns the address, host:port.
func Silent(t testing.TB) string {
	t.Helper()
	return Serve(t, func(net.Conn) {})
}
