package redistest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
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
		t.Setenv(redistest.BinEnv, "")
		t.Setenv("PATH", t.TempDir())
		msg := startFatal(t)
		if !strings.HasPrefix(msg, "redis-server not found on PATH: install it") {
			t.Fatalf("message = %q", msg)
		}
	})
	t.Run("COUNTERTOP_REDIS_BIN without a redis-server", func(t *testing.T) {
		dir := t.TempDir()
		t.Setenv(redistest.BinEnv, dir)
		msg := startFatal(t)
		if want := "COUNTERTOP_REDIS_BIN=" + dir + " holds no redis-server to run"; !strings.HasPrefix(msg, want) {
			t.Fatalf("message = %q, want it to start %q", msg, want)
		}
	})
}

// The folder COUNTERTOP_REDIS_BIN names is where the server comes from,
// not PATH: a test run for Redis 8 must not quietly test Redis 7.
func TestBinEnvChoosesTheServer(t *testing.T) {
	real := filepath.Join(os.Getenv(redistest.BinEnv), "redis-server")
	if os.Getenv(redistest.BinEnv) == "" {
		var err error
		if real, err = exec.LookPath("redis-server"); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := os.Symlink(real, filepath.Join(dir, "redis-server")); err != nil {
		t.Fatal(err)
	}
	t.Setenv(redistest.BinEnv, dir)
	t.Setenv("PATH", t.TempDir()) // none there
	info := redistest.Start(t).Do(t, "INFO", "server").(string)
	if want := "executable:" + filepath.Join(dir, "redis-server") + "\r\n"; !strings.Contains(info, want) {
		t.Fatalf("the server is not the one in %s: INFO server says\n%s", dir, info)
	}
}

// Kind's FieldTTL is whether the server runs HPEXPIRE, which tests of
// hash-field TTLs need.
func TestKindSaysWhetherFieldsHaveTTLs(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	k := s.Kind(t)
	if (k.Name != "redis" && k.Name != "valkey") || k.Version == "" {
		t.Fatalf("Kind = %+v, want a name and a version", k)
	}
	s.Do(t, "HSET", "h", "f", "1")
	err := s.Client(t).Do(context.Background(), "HPEXPIRE", "h", 60000, "FIELDS", 1, "f").Err()
	if k.FieldTTL != (err == nil) {
		t.Fatalf("Kind = %+v, but HPEXPIRE says %v", k, err)
	}
}

// RequireFieldTTL skips on a server without field TTLs, but fails there
// when COUNTERTOP_REQUIRE_FIELD_TTL asks for them: CI's Redis 8 run.
func TestRequireFieldTTL(t *testing.T) {
	s := redistest.Start(t)
	has := s.Kind(t).FieldTTL
	for _, required := range []bool{false, true} {
		t.Run(fmt.Sprintf("required=%v", required), func(t *testing.T) {
			if required {
				t.Setenv(redistest.RequireFieldTTLEnv, "1")
			} else {
				t.Setenv(redistest.RequireFieldTTLEnv, "")
			}
			f := run(t, s.RequireFieldTTL)
			switch {
			case has && (f.msg != "" || f.skipped != ""):
				t.Errorf("required=%v: on a server with field TTLs RequireFieldTTL stopped the test: %q %q", required, f.msg, f.skipped)
			case !has && required && !strings.Contains(f.msg, "has no hash-field TTLs (HPEXPIRE)"):
				t.Errorf("required: want a failure on a server without field TTLs, got failure %q, skip %q", f.msg, f.skipped)
			case !has && !required && (f.msg != "" || f.skipped == ""):
				t.Errorf("not required: want a skip on a server without field TTLs, got failure %q, skip %q", f.msg, f.skipped)
			}
		})
	}
}

// startFatal runs Start with args and returns the message it failed the
// test with.
func startFatal(t *testing.T, args ...string) string {
	f := run(t, func(tb testing.TB) { redistest.Start(tb, args...) })
	if f.msg == "" {
		t.Fatal("Start did not fail")
	}
	return f.msg
}

// run calls fn with a fatalTB, in a goroutine of its own as Fatal and
// Skip end it, and returns what it recorded.
func run(t *testing.T, fn func(testing.TB)) *fatalTB {
	f := &fatalTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn(f)
	}()
	<-done
	return f
}

// fatalTB records the message of Fatal/Fatalf and Skip and stops the
// goroutine, as testing.T does, without failing or skipping the real test.
type fatalTB struct {
	testing.TB
	msg, skipped string
}

func (f *fatalTB) Fatal(args ...any) { f.msg = fmt.Sprint(args...); runtime.Goexit() }
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalTB) Skip(args ...any) { f.skipped = fmt.Sprint(args...); runtime.Goexit() }
