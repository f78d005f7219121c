// Package redistest starts real redis-server processes for tests: each on its
// own free 127.0.0.1 port, in its own temp dir, stopped when the test ends.
// countertop's tests never use a shared Redis and never mock one.
//
// Start runs a single server and StartTLS one that speaks only TLS;
// StartCluster runs a Redis Cluster and StartSentinel a Sentinel in front of
// a master and its replicas, both with a Failover that tests can fire.
//
// The redis-server is PATH's, or the one in the folder COUNTERTOP_REDIS_BIN
// names (BinEnv); Kind tells a test which server it got.
package redistest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

const (
	// startAttempts bounds how often Start retries on a fresh port when the
	// server could not bind the one it was given (another test took it).
	startAttempts = 5
	// readyTimeout bounds the wait for a started server to answer PING.
	readyTimeout = 10 * time.Second
	// stopTimeout bounds the wait for a killed server to exit.
	stopTimeout = 10 * time.Second
	// logTail is how many lines of the server's log a failure shows.
	logTail = 20
	// settleTimeout bounds the wait for a cluster or a Sentinel setup to
	// agree on its topology, at start and after a failover.
	settleTimeout = 20 * time.Second
)

// Server is one running redis-server. Its fields are fixed for its lifetime,
// across Restart.
type Server struct {
	Addr     string // "127.0.0.1:PORT"
	Port     int
	Password string // the value of --requirepass among the args, if any
	// TLS holds the certificates of a server started with StartTLS, which
	// listens only with TLS on Port; nil otherwise.
	TLS *Certs

	bin      string // the redis-server that runs it
	dir      string
	args     []string // the extra args Start was given
	sentinel bool     // runs as Sentinel, with sentinel.conf in dir

	mu     sync.Mutex
	proc   *exec.Cmd     // nil when stopped
	exited chan struct{} // closed when proc has exited
	admin  *redis.Client // serves Do; reconnects across Restart
}

// Start runs redis-server on a free port in t.TempDir(), waits until it
// answers PING, and stops it when the test ends. args are appended to the
// defaults (no persistence, bound to 127.0.0.1), e.g.
// "--notify-keyspace-events", "KEA" or "--requirepass", "pw".
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	return launch(t, &Server{args: args, Password: argValue(args, "--requirepass")})
}

// launch gives s a free port (and a temp dir unless it has one), starts it
// and stops it when the test ends.
func launch(t testing.TB, s *Server) *Server {
	t.Helper()
	var err error
	if s.bin, err = serverBinary(); err != nil {
		t.Fatal(err)
	}
	if s.dir == "" {
		s.dir = t.TempDir()
	}
	t.Cleanup(s.Stop)

	for range startAttempts {
		if s.Port, err = freePort(); err != nil {
			t.Fatalf("redistest: no free port: %v", err)
		}
		s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.Port))
		if err = s.start(); err == nil || !strings.Contains(err.Error(), "Address already in use") {
			break
		}
	}
	if err != nil {
		t.Fatalf("redistest: %v", err)
	}
	s.admin = redis.NewClient(s.options())
	t.Cleanup(func() { s.admin.Close() })
	return s
}

// URL is the server's address as countertop's --url takes it (database 0,
// without the password): rediss:// for a server started with StartTLS.
func (s *Server) URL() string {
	if s.TLS != nil {
		return "rediss://" + s.Addr + "/0"
	}
	return "redis://" + s.Addr + "/0"
}

// Client returns a go-redis client for the server, authenticated with
// Password (and with the client certificate of TLS), closed when the test
// ends.
func (s *Server) Client(t testing.TB) *redis.Client {
	c := redis.NewClient(s.options())
	t.Cleanup(func() { c.Close() })
	return c
}

// Do runs one command for test setup and returns its reply; any error fails
// the test.
func (s *Server) Do(t testing.TB, args ...any) any {
	t.Helper()
	v, err := s.admin.Do(context.Background(), args...).Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		t.Fatalf("redistest: %v: %v", args, err)
	}
	return v
}

// CommandCalls returns how often the server ran each command, by its INFO
// commandstats name ("getrange", "client|id"), calls from scripts
// included; the INFO that asks counts in the next answer, not its own.
func (s *Server) CommandCalls(t testing.TB) map[string]int64 {
	t.Helper()
	calls := make(map[string]int64)
	for line := range strings.Lines(s.Do(t, "INFO", "commandstats").(string)) {
		name, stats, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, _, _ := strings.Cut(stats, ",")
		calls[name], _ = strconv.ParseInt(n, 10, 64)
	}
	return calls
}

// Stop kills the server and waits for it to exit; its port then refuses
// connections. Calling it again does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	// No graceful SHUTDOWN: nothing is persisted, and a kill cannot be
	// refused (by a password, an ACL or a busy script).
	_ = s.proc.Process.Kill()
	select {
	case <-s.exited:
	case <-time.After(stopTimeout):
		// The process is unkillable; there is nothing more a test can do.
	}
	s.proc = nil
}

// Restart stops the server and starts it again with the same port, dir and
// args, as an operator restarting Redis would; clients must reconnect.
func (s *Server) Restart(t testing.TB) {
	t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		t.Fatalf("redistest: restart: %v", err)
	}
}

func (s *Server) options() *redis.Options {
	return &redis.Options{Addr: s.Addr, Password: s.Password, TLSConfig: s.tlsConfig()}
}

// tlsConfig is how test code connects to s: nil for plain TCP.
func (s *Server) tlsConfig() *tls.Config {
	if s.TLS == nil {
		return nil
	}
	return s.TLS.clientConfig()
}

// start runs redis-server on s.Port and waits until it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()

	logPath := filepath.Join(s.dir, "redis.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()

	var args []string
	if s.sentinel {
		// Sentinel wants its config file first, and writes its state there.
		args = append(args, filepath.Join(s.dir, sentinelConf), "--sentinel")
	}
	if port := strconv.Itoa(s.Port); s.TLS != nil {
		args = append(args, "--port", "0", "--tls-port", port)
	} else {
		args = append(args, "--port", port)
	}
	args = append(args,
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "no",
		"--daemonize", "no",
	)
	args = append(args, s.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("could not run redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()

	deadline := time.Now().Add(readyTimeout)
	for {
		err := ping(s.Addr, s.Password, s.tlsConfig())
		if err == nil {
			s.proc, s.exited = cmd, exited
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("redis-server on port %d exited at start; its log ends:\n%s", s.Port, tail(logPath))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			<-exited
			return fmt.Errorf("redis-server on port %d did not answer PING within %v (last: %v); its log ends:\n%s",
				s.Port, readyTimeout, err, tail(logPath))
		}
	}
}

// ping sends AUTH (when password is set) and PING over a fresh connection
// (TLS when conf is set), without go-redis's pool, which would remember
// early dial errors.
func ping(addr, password string, conf *tls.Config) error {
	conn, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	if conf != nil {
		conn = tls.Client(conn, conf)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	r := bufio.NewReader(conn)
	if password != "" {
		if _, err := conn.Write(command("AUTH", password)); err != nil {
			return err
		}
		if line, err := r.ReadString('\n'); err != nil {
			return err
		} else if !strings.HasPrefix(line, "+OK") {
			return errors.New(strings.TrimSpace(line))
		}
	}
	if _, err := conn.Write(command("PING")); err != nil {
		return err
	}
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if !strings.HasPrefix(line, "+PONG") {
		return errors.New(strings.TrimSpace(line))
	}
	return nil
}

// command encodes args as a RESP array of bulk strings.
func command(args ...string) []byte {
	b := fmt.Appendf(nil, "*%d\r\n", len(args))
	for _, a := range args {
		b = fmt.Appendf(b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b
}

// freePort asks the kernel for a free port. Another process may take it
// before redis-server binds it; Start retries then.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// argValue returns the value following name in args, or "".
func argValue(args []string, name string) string {
	for i := 0; i+1 < len(args); i++ {
		if args[i] == name {
			return args[i+1]
		}
	}
	return ""
}

// tail returns the last lines of the file at path, for failure messages.
func tail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-logTail):], "\n")
}

// waitFor polls cond until it reports true, failing the test with what
// and cond's last word when settleTimeout passes first.
func waitFor(t testing.TB, what string, cond func() (ok bool, why string)) {
	t.Helper()
	deadline := time.Now().Add(settleTimeout)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("redistest: waited %v for %s (last: %s)", settleTimeout, what, why)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
