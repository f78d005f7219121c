package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

func TestParallelServersGetDifferentPorts(t *testing.T) {
	t.Parallel()
	a, b := redistest.Start(t), redistest.Start(t)
	if a.Port == b.Port {
		t.Fatalf("both servers got port %d", a.Port)
	}
	a.Do(t, "SET", "k", "a")
	if got := b.Do(t, "EXISTS", "k"); got != int64(0) {
		t.Fatalf("a key set on one server is visible on the other: EXISTS = %v", got)
	}
}

func TestStopRefusesConnections(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Stop()
	_, err := net.Dial("tcp", s.Addr)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial after Stop: got %v, want connection refused", err)
	}
	s.Stop() // idempotent
}

func TestRestartKeepsPortAndClientsReconnect(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--notify-keyspace-events", "KEA")
	c := s.Client(t)
	ctx := context.Background()
	if err := c.Set(ctx, "k", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	port := s.Port
	s.Restart(t)
	if s.Port != port || s.URL() != "redis://127.0.0.1:"+strconv.Itoa(port)+"/0" {
		t.Fatalf("after Restart: port %d, URL %s; want port %d", s.Port, s.URL(), port)
	}
	if n, err := c.Exists(ctx, "k").Result(); err != nil || n != 0 {
		t.Fatalf("after Restart: EXISTS k = %d, %v; want 0 (nothing is persisted)", n, err)
	}
	if got := s.Do(t, "CONFIG", "GET", "notify-keyspace-events"); !containsValue(got, "AKE") {
		t.Fatalf("extra args lost across Restart: notify-keyspace-events = %v", got)
	}
}

func TestRequirePass(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--requirepass", "s3cret")
	if s.Password != "s3cret" {
		t.Fatalf("Password = %q", s.Password)
	}
	if err := s.Client(t).Ping(context.Background()).Err(); err != nil {
		t.Fatalf("Client is not authenticated: %v", err)
	}
	if got := s.Do(t, "PING"); got != "PONG" {
		t.Fatalf("Do(PING) = %v", got)
	}
}

// containsValue reports whether the CONFIG GET reply holds want (RESP2
// returns a list, RESP3 a map).
func containsValue(reply any, want string) bool {
	switch r := reply.(type) {
	case map[any]any:
		for _, v := range r {
			if v == want {
				return true
			}
		}
	case []any:
		for _, v := range r {
			if v == want {
				return true
			}
		}
	}
	return false
}

func TestStartFailureMessages(t *testing.T) {
	t.Run("bad argument shows the server's log", func(t *testing.T) {
		msg := startFatal(t, "--no-such-directive", "x")
		if !strings.Contains(msg, "exited at start") || !strings.Contains(msg, "no-such-directive") {
			t.Fatalf("message does not explain the failure:\n%s", msg)
		}
	})
	t.Run("redis-server not installed", func(t *testing.T) {
		t.Setenv("PATH", t.TempDir())
		msg := startFatal(t)
		if !strings.HasPrefix(msg, "redis-server not found on PATH: install it") {
			t.Fatalf("message = %q", msg)
		}
	})
}

// startFatal runs Start with args and returns the message it failed the
// test with.
func startFatal(t *testing.T, args ...string) string {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		redistest.Start(f, args...)
	}()
	<-done
	if f.msg == "" {
		t.Fatal("Start did not fail")
	}
	return f.msg
}

// fatalTB records the message of Fatal/Fatalf and stops the goroutine, as
// testing.T does, without failing the real test.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
