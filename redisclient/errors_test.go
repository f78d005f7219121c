package redisclient_test

import (
	"context"
	"crypto/x509"
	"errors"
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

// connectErr connects with o and returns the error, failing the test when
// there is none.
func connectErr(t *testing.T, o redisclient.Options) error {
	t.Helper()
	c, err := redisclient.Connect(context.Background(), o)
	if err == nil {
		c.Close()
		t.Fatalf("Connect(%+v) succeeded", o)
	}
	return err
}

// checkSentence checks that err is explained, says want, keeps a single
// line, and does not leak secret.
func checkSentence(t *testing.T, err error, want, secret string) {
	t.Helper()
	var e *redisclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("error is not explained: %T %v", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, want) {
		t.Errorf("error = %q\nwant it to say %q", msg, want)
	}
	if strings.Contains(msg, "\n") {
		t.Errorf("error spans lines: %q", msg)
	}
	if secret != "" && strings.Contains(msg, secret) {
		t.Errorf("error shows the password: %q", msg)
	}
}

func TestConnectBadURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want, secret string }{
		{"http://x", "--url is not a valid Redis URL (invalid URL scheme: http) — write it as redis://[user:password@]host:port/db", ""},
		{"redis://host:notaport", `invalid port ":notaport"`, ""},
		{"redis://host/zero", `invalid database number: "zero"`, ""},
		{"redis://host/0?colour=red", "unexpected option: colour", ""},
		{"redis://127.0.0.1:99999/0", "--url has port 99999, which does not exist — use a port from 1 to 65535, like 6379", ""},
		{"rediss://:s3cret@[::1]:0", "--url has port 0, which does not exist — use a port from 1 to 65535, like 6379", "s3cret"},
		// An unencoded '/' in the password makes url.Parse quote part of it.
		{"redis://user:pa/ss@host:1", "percent-encode", "pa/ss@"},
		// go-redis quotes the path, which here holds the end of the password.
		{"redis://:p@ss/w:rd@127.0.0.1:31010/0", "percent-encode", "w:rd"},
		{"redis+sentinel://:p@ss/w:rd@127.0.0.1:26379/0?master_name=m", "percent-encode", "w:rd"},
	} {
		checkSentence(t, connectErr(t, redisclient.Options{URL: tc.url}), tc.want, tc.secret)
	}
}

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

// TestConnectCancelled cancels Connect while the server it dialled says
// nothing: Connect returns at once, as an interruption, not after its
// timeout, whatever the kind of deployment it was waiting on.
func TestConnectCancelled(t *testing.T) {
	t.Parallel()
	addr := redistest.Silent(t)
	for _, tc := range []struct {
		name string
		o    redisclient.Options
	}{
		{"standalone", redisclient.Options{URL: "redis://" + addr + "/0"}},
		{"cluster", redisclient.Options{URL: "redis://" + addr, Cluster: true}},
		{"sentinel", redisclient.Options{URL: "redis://ignored:1/0", SentinelMaster: "mymaster", SentinelAddrs: []string{addr}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(100*time.Millisecond, cancel)
			start := time.Now()
			c, err := redisclient.Connect(ctx, tc.o)
			if err == nil {
				c.Close()
				t.Fatal("Connect to a server that never answers succeeded")
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error = %v, want one that says the caller cancelled", err)
			}
			// The default timeout is 5s for the dial and 5s more for PING.
			if took := time.Since(start); took > time.Second {
				t.Errorf("Connect returned %v after it started, though cancelled after 100ms", took)
			}
		})
	}
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
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("<!DOCTYPE HTML>\n"))
			c.Close()
		}
	}()
	checkSentence(t, connectErr(t, redisclient.Options{URL: "redis://" + l.Addr().String()}),
		l.Addr().String()+" answered, but not as Redis does — is that another service's port? check --url (or REDIS_URL)", "")
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

	for _, o := range []redisclient.Options{
		{URL: "redis://:s3cret@" + s.Addr + "/0"},
		{URL: base, Password: "s3cret"},
		{URL: "redis://alice:alicepw@" + s.Addr},
		{URL: "redis://nobody:nothing@" + s.Addr, Username: "alice", Password: "alicepw"},
	} {
		c, err := redisclient.Connect(context.Background(), o)
		if err != nil {
			t.Fatalf("Connect(%s): %v", o.URL, err)
		}
		if got, want := c.Addr(), s.Addr+"/0"; got != want {
			t.Errorf("Addr() = %q, want %q", got, want)
		}
		c.Close()
	}
}

func TestConnectUnknownDatabase(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	err := connectErr(t, redisclient.Options{URL: "redis://" + s.Addr + "/99"})
	checkSentence(t, err, s.Addr+" has no database with the number at the end of --url", "")
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
	checkSentence(t, err, "the Redis user may not do this on "+s.Addr+" (NOPERM this user has no permissions to run the 'scan' command) — grant it with ACL SETUSER", "")
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

func TestConnectTLS(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, true)
	plain := redistest.Start(t)
	f, other := s.TLS, redistest.NewCerts(t)
	full := redisclient.TLSOptions{CAFile: f.CA, CertFile: f.ClientCert, KeyFile: f.ClientKey}

	t.Run("trusted, with client certificate", func(t *testing.T) {
		for _, o := range []redisclient.Options{
			{URL: "rediss://" + s.Addr, TLS: full},
			{URL: "redis://" + s.Addr, TLS: full}, // a TLS flag turns TLS on
			{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{SkipVerify: true, CertFile: f.ClientCert, KeyFile: f.ClientKey}},
		} {
			c, err := redisclient.Connect(context.Background(), o)
			if err != nil {
				t.Fatalf("Connect(%s, %+v): %v", o.URL, o.TLS, err)
			}
			c.Close()
		}
	})

	for _, tc := range []struct {
		name string
		o    redisclient.Options
		want string
	}{
		{"plain client to TLS port", redisclient.Options{URL: "redis://" + s.Addr},
			s.Addr + " closed the connection — if that port expects TLS, use rediss://"},
		{"TLS client to plain port", redisclient.Options{URL: "rediss://" + plain.Addr, TLS: full, DialTimeout: 300 * time.Millisecond},
			"the TLS handshake with " + plain.Addr + " did not complete — if that port speaks plain Redis, use redis://"},
		{"unknown CA", redisclient.Options{URL: "rediss://" + s.Addr},
			"the TLS certificate of " + s.Addr + " is not trusted (x509: certificate signed by unknown authority) — pass the CA that signed it with --tls-ca"},
		{"no client certificate", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA}},
			s.Addr + " refused the TLS connection (tls: certificate required) — if it requires a client certificate"},
		{"client certificate from another CA", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA, CertFile: other.ClientCert, KeyFile: other.ClientKey}},
			s.Addr + " refused the TLS connection (tls: unknown certificate authority) — if it requires a client certificate, pass one its CA signed"},
		{"missing CA file", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.CA + ".missing"}},
			"could not read the TLS CA file: open " + f.CA + ".missing: no such file or directory: check --tls-ca"},
		{"CA file is not PEM", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CAFile: f.ClientKey}},
			"holds no PEM certificate: check --tls-ca"},
		{"certificate without key", redisclient.Options{URL: "rediss://" + s.Addr, TLS: redisclient.TLSOptions{CertFile: f.ClientCert}},
			"a TLS client certificate needs both --tls-cert and --tls-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkSentence(t, connectErr(t, tc.o), tc.want, "")
		})
	}
}

// A certificate from the right CA can still be refused: when it has
// expired, or names another host than the one dialled. Passing the CA again
// would not help, and the sentence says what would.
func TestConnectTLSCertificateNotForNow(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, false)
	_, port, _ := net.SplitHostPort(s.Addr)
	checkSentence(t, connectErr(t, redisclient.Options{URL: "rediss://localhost:" + port, TLS: redisclient.TLSOptions{CAFile: s.TLS.CA}}),
		"the TLS certificate of localhost:"+port+" is not for the host in --url (x509: certificate is not valid for any names, but wanted to match localhost) — connect by a name the certificate lists", "")

	old := redistest.StartTLSWith(t, redistest.ExpiredCerts(t), false)
	checkSentence(t, connectErr(t, redisclient.Options{URL: old.URL(), TLS: redisclient.TLSOptions{CAFile: old.TLS.CA}}),
		"the TLS certificate of "+old.Addr+" is not valid now (x509: certificate has expired or is not yet valid: current time ", "")
}

func TestConnectTLSWithoutClientCert(t *testing.T) {
	t.Parallel()
	s := redistest.StartTLS(t, false)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), TLS: redisclient.TLSOptions{CAFile: s.TLS.CA}})
	if err != nil {
		t.Fatalf("Connect with the CA only, to a server that asks no client certificate: %v", err)
	}
	c.Close()
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
