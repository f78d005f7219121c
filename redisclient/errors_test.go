package redisclient_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
	"github.com/redis/go-redis/v9"
)

func TestConnectRefused(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Stop()
	err := connectErr(t, redisclient.Options{URL: s.URL()})
	checkSentence(t, err, "could not connect to "+s.Addr+": connection refused — is Redis running there? check --url (or REDIS_URL)", "")
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("the cause is lost: %v", errors.Unwrap(err))
	}
}

func TestConnectTimeout(t *testing.T) {
	t.Parallel()
	addr := redistest.Silent(t)
	err := connectErr(t, redisclient.Options{URL: "redis://" + addr, DialTimeout: 200 * time.Millisecond})
	checkSentence(t, err, addr+" did not answer in time — check the host and port", "")
}

// TestConnectUnixSocket connects to a socket that is not there, or that
// countertop may not open: each is a sentence about the socket.
func TestConnectUnixSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	sock := filepath.Join(dir, "redis.sock")
	redistest.Start(t, "--unixsocket", sock)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: "unix://" + sock})
	if err != nil {
		t.Fatalf("Connect to a Redis socket: %v", err)
	}
	c.Close()

	missing := filepath.Join(dir, "nosuch.sock")
	err = connectErr(t, redisclient.Options{URL: "unix://" + missing})
	checkSentence(t, err, "no Redis socket at "+missing+" — check --url (or REDIS_URL), or start Redis", "")
	if !errors.Is(err, syscall.ENOENT) {
		t.Errorf("the cause is lost: %v", errors.Unwrap(err))
	}
	// An '@' in a socket's path is no user info.
	at := filepath.Join(dir, "a@b.sock")
	checkSentence(t, connectErr(t, redisclient.Options{URL: "unix://" + at}), "no Redis socket at "+at+" — check --url", "")

	// Tests may run as root, whom no file mode stops: the refusal is made here.
	denied := &net.OpError{Op: "dial", Net: "unix", Addr: &net.UnixAddr{Name: sock, Net: "unix"},
		Err: os.NewSyscallError("connect", syscall.EACCES)}
	checkSentence(t, redisclient.Explain(denied, sock),
		"countertop may not open the Redis socket at "+sock+" (permission denied) — run it as a user who may (see unixsocketperm in redis.conf), or connect over TCP", "")
}

// TestConnectNotRedis points --url at a port that speaks HTTP.
func TestConnectNotRedis(t *testing.T) {
	t.Parallel()
	web := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(web.Close)
	addr := strings.TrimPrefix(web.URL, "http://")
	checkSentence(t, connectErr(t, redisclient.Options{URL: "redis://" + addr + "/0"}),
		addr+" answered, but not as Redis does — is that another service's port? check --url (or REDIS_URL)", "")

	// A server that greets first, and closes after one line.
	greeter := redistest.Serve(t, func(c net.Conn) {
		c.Write([]byte("<!DOCTYPE HTML>\n"))
		c.Close()
	})
	checkSentence(t, connectErr(t, redisclient.Options{URL: "redis://" + greeter}),
		greeter+" answered, but not as Redis does — is that another service's port? check --url (or REDIS_URL)", "")
}

func TestConnectAuth(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--requirepass", "s3cret")
	s.Do(t, "ACL", "SETUSER", "alice", "on", ">alicepw", "~*", "+@all")
	base := "redis://" + s.Addr + "/0"

	for _, tc := range []struct {
		name string
		o    redisclient.Options
		want string
	}{
		{"no password", redisclient.Options{URL: base}, s.Addr + " requires a password — give it in --url"},
		{"wrong password", redisclient.Options{URL: "redis://:wrong-pw@" + s.Addr}, s.Addr + " rejected the username or password"},
		{"unknown user", redisclient.Options{URL: base, Username: "mallory", Password: "wrong-pw"}, "rejected the username or password"},
		{"option beats URL", redisclient.Options{URL: "redis://:s3cret@" + s.Addr, Password: "wrong-pw"}, "rejected the username or password"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := connectErr(t, tc.o)
			checkSentence(t, err, tc.want, "wrong-pw")
			if !redis.IsAuthError(err) {
				t.Errorf("the cause is lost: %v", errors.Unwrap(err))
			}
		})
	}

	for _, tc := range []struct {
		name string
		o    redisclient.Options
	}{
		{"password in URL", redisclient.Options{URL: "redis://:s3cret@" + s.Addr + "/0"}},
		{"password option", redisclient.Options{URL: base, Password: "s3cret"}},
		{"user in URL", redisclient.Options{URL: "redis://alice:alicepw@" + s.Addr}},
		{"user options beat URL", redisclient.Options{URL: "redis://nobody:nothing@" + s.Addr, Username: "alice", Password: "alicepw"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := redisclient.Connect(context.Background(), tc.o)
			if err != nil {
				t.Fatalf("Connect(%s): %v", tc.o.URL, err)
			}
			if got, want := c.Addr(), s.Addr+"/0"; got != want {
				t.Errorf("Addr() = %q, want %q", got, want)
			}
			c.Close()
		})
	}
}

func TestConnectUnknownDatabase(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	err := connectErr(t, redisclient.Options{URL: "redis://" + s.Addr + "/99"})
	checkSentence(t, err, s.Addr+" has no database 99, the number at the end of --url", "")
}

func TestExplainNoPerm(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "ACL", "SETUSER", "viewer", "on", ">pw", "~*", "+ping", "+hello", "+client")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: "redis://viewer:pw@" + s.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	err = c.Scan(context.Background(), []string{"*"}, 0, func([]string) error { return nil })
	checkSentence(t, err, "the Redis user may not do this on "+s.Addr+" (NOPERM …'scan' command) — grant it with ACL SETUSER", "")
	if !redis.IsPermissionError(err) {
		t.Errorf("the cause is lost: %v", errors.Unwrap(err))
	}
}

// A certificate's names come from the server: what it says reaches the
// terminal escaped.
func TestExplainCertificateNamesAreEscaped(t *testing.T) {
	cert := &x509.Certificate{DNSNames: []string{"\x1b]0;title\a\x1b[2Jred.example"}}
	err := redisclient.Explain(x509.HostnameError{Certificate: cert, Host: "localhost"}, "localhost:6380")
	want := `the TLS certificate of localhost:6380 is not for the host in --url (x509: certificate is valid for \e]0;title\x07\e[2Jred.example, not localhost)`
	checkSentence(t, err, want, "")
}

func TestExplainReadOnly(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	err := replica.Client(t).Set(context.Background(), "k", "1", 0).Err()
	checkSentence(t, redisclient.Explain(err, replica.Addr), replica.Addr+" is a read-only replica — connect to its master", "")
}

func TestExplainLoading(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t, "--enable-debug-command", "local", "--repl-diskless-sync-delay", "0")
	master.Do(t, "DEBUG", "POPULATE", "5000")
	// The replica loads what it receives slowly (key-load-delay, in µs per
	// key) and answers clients while it does, so they see LOADING.
	replica := redistest.Start(t, "--key-load-delay", "200", "--loading-process-events-interval-bytes", "1024")
	c := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1}) // go-redis retries LOADING
	defer c.Close()
	ctx := context.Background()
	replica.Do(t, "REPLICAOF", "127.0.0.1", strconv.Itoa(master.Port))

	deadline := time.Now().Add(10 * time.Second)
	for {
		err := c.Ping(ctx).Err()
		if err != nil && redis.IsLoadingError(err) {
			checkSentence(t, redisclient.Explain(err, replica.Addr), replica.Addr+" is loading its data into memory — try again when it has finished", "")
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the replica never said LOADING (last: %v)", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestExplainOtherReplies(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	err := c.Universal().Do(context.Background(), "NOSUCHCOMMAND").Err()
	checkSentence(t, redisclient.Explain(err, s.Addr), s.Addr+" replied with an error: ERR unknown command 'NOSUCHCOMMAND'", "")
}

// reply is an error reply made here, for replies a local server cannot be
// made to send reliably: at maxclients, Redis closes the connection before a
// client on the same machine has read why.
type reply string

func (r reply) Error() string { return string(r) }
func (reply) RedisError()     {}

func TestExplain(t *testing.T) {
	if redisclient.Explain(nil, "x") != nil {
		t.Error("Explain(nil) is not nil")
	}
	if err := redisclient.Explain(context.Canceled, "x"); err != context.Canceled {
		t.Errorf("a cancellation was explained: %v", err)
	}
	// Resolving a name would leave this machine: the error is made here.
	dns := &net.DNSError{Err: "no such host", Name: "nohost.example", IsNotFound: true}
	checkSentence(t, redisclient.Explain(dns, "nohost.example:1"), "could not find the host of nohost.example:1 — check the host name in --url", "")

	err := redisclient.Explain(reply("ERR max number of clients reached"), "h:1")
	checkSentence(t, err, "h:1 has reached its maxclients limit — close idle clients or raise maxclients", "")

	once := redisclient.Explain(syscall.ECONNREFUSED, "h:1")
	if twice := redisclient.Explain(once, "h:2"); twice != once {
		t.Errorf("an explained error was explained again: %v", twice)
	}
}

// A server can refuse every write for a while: full, short of replicas,
// unable to save. Each refusal says the key keeps its value and what to do.
func TestWritesRefusedByTheServer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	misconf := t.TempDir()
	for _, tc := range []struct {
		name  string
		args  []string
		setup func(*redistest.Server)
		want  string // %[1]s is the server's address
	}{
		{"out of memory", nil, func(s *redistest.Server) { s.Do(t, "CONFIG", "SET", "maxmemory", "1") },
			"INCRBY rl:k 1 failed: OOM command not allowed when used memory > 'maxmemory' (the key keeps its value) — %[1]s has reached its maxmemory and cannot evict enough to make room: raise maxmemory, delete keys no one needs, or set a maxmemory-policy that evicts"},
		{"too few replicas", nil, func(s *redistest.Server) { s.Do(t, "CONFIG", "SET", "min-replicas-to-write", "1") },
			"INCRBY rl:k 1 failed: NOREPLICAS Not enough good replicas to write (the key keeps its value) — %[1]s takes writes only while min-replicas-to-write replicas are connected and in sync: bring its replicas back, or lower min-replicas-to-write"},
		// The snapshot cannot be written once its directory is gone, root
		// or not.
		{"snapshot failing", []string{"--dir", misconf, "--save", "3600 1"}, func(s *redistest.Server) {
			if err := os.RemoveAll(misconf); err != nil {
				t.Fatal(err)
			}
			s.Do(t, "BGSAVE")
			deadline := time.Now().Add(10 * time.Second)
			for !strings.Contains(s.Do(t, "INFO", "persistence").(string), "rdb_last_bgsave_status:err") {
				if time.Now().After(deadline) {
					t.Fatal("BGSAVE never failed")
				}
				time.Sleep(10 * time.Millisecond)
			}
		}, "INCRBY rl:k 1 failed: %[1]s refuses writes since it could not save its RDB snapshot to disk (MISCONF; the key keeps its value) — fix what its log names (a full disk, a directory it may not write) and run BGSAVE, or set stop-writes-on-bgsave-error no"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := startConnected(t, tc.args...)
			s.Do(t, "SET", "rl:k", "5")
			tc.setup(s)
			_, err := c.Incr(ctx, "rl:k", by(t, "1"), time.Minute)
			want := fmt.Sprintf(tc.want, s.Addr)
			checkSentence(t, err, want, "")
			if err != nil && err.Error() != want {
				t.Errorf("Incr: %q\nwant exactly %q", err, want)
			}
			if !redisclient.Refused(err) {
				t.Errorf("Refused(%v) = false; want true: nothing changed", err)
			}
			if got := s.Do(t, "GET", "rl:k"); got != "5" {
				t.Errorf("rl:k = %v after the refused increment; want 5", got)
			}
		})
	}
}

// A script that runs for long keeps Redis from answering reads and writes
// alike.
func TestExplainBusy(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t, "--busy-reply-threshold", "10")
	s.Do(t, "SET", "rl:k", "5")
	ctx := context.Background()
	looping := make(chan struct{})
	loop := redis.NewClient(&redis.Options{Addr: s.Addr})
	defer loop.Close()
	go func() {
		defer close(looping)
		loop.Eval(ctx, "while true do end", nil)
	}()
	defer func() { <-looping }()
	defer s.Do(t, "SCRIPT", "KILL")
	var err error
	deadline := time.Now().Add(10 * time.Second)
	for !redis.HasErrorPrefix(err, "BUSY ") && time.Now().Before(deadline) {
		_, err = c.Fetch(ctx, []string{"rl:k"})
		time.Sleep(10 * time.Millisecond)
	}
	want := s.Addr + " is busy running a script and runs no other command until it ends (BUSY) — wait for it, or stop it with SCRIPT KILL (FUNCTION KILL for a function)"
	checkSentence(t, err, want, "")
	_, err = c.Incr(ctx, "rl:k", by(t, "1"), time.Minute)
	if want := "INCRBY rl:k 1 failed: " + want; err == nil || err.Error() != want {
		t.Errorf("Incr: %v\nwant %s", err, want)
	}
}

// A cluster without a master for a slot, and a replica cut off from its
// master, refuse to run what they are sent.
func TestExplainClusterDownAndMasterDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	node := redistest.Start(t, "--cluster-enabled", "yes") // no slot assigned
	err := node.Client(t).Get(ctx, "rl:k").Err()
	checkSentence(t, redisclient.Explain(err, node.Addr), node.Addr+" ran nothing because the cluster is down (CLUSTERDOWN Hash slot not served) — some slots have no master that answers: wait for a replica to take over (after cluster-node-timeout), or bring the failed master back (CLUSTER NODES shows which)", "")

	replica := redistest.Start(t, "--replica-serve-stale-data", "no")
	// Nothing listens on port 1: the replica never reaches its master.
	replica.Do(t, "REPLICAOF", "127.0.0.1", "1")
	// go-redis retries MASTERDOWN, which would only slow the test down.
	rdb := redis.NewClient(&redis.Options{Addr: replica.Addr, MaxRetries: -1})
	defer rdb.Close()
	err = rdb.Get(ctx, "rl:k").Err()
	checkSentence(t, redisclient.Explain(err, replica.Addr), replica.Addr+" is a replica that lost its master and answers nothing until it is back in sync (MASTERDOWN, as replica-serve-stale-data is no) — connect to the master, or wait for the replica to catch up", "")

	// A resharding moves slots for a moment only: the reply is made here.
	checkSentence(t, redisclient.Explain(reply("TRYAGAIN Multiple keys request during rehashing of slot"), "h:1"),
		"h:1 ran nothing because the key's slot is moving between nodes (TRYAGAIN Multiple keys request during rehashing of slot) — try again when the resharding is done", "")
}
