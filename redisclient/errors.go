package redisclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"syscall"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// Error is an error explained for people: Error is one sentence that says
// what happened and what to do; Unwrap is the cause, for errors.Is and
// errors.As. Neither carries a password.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Refused reports whether the error is a refusal (see the function
// Refused): nothing changed, whatever the connection does. The ui asks it
// through an interface, without importing this package.
func (e *Error) Refused() bool { return Refused(e) }

// explained returns the *Error that says msg, caused by cause (possibly nil).
func explained(msg string, cause error) *Error { return &Error{msg: msg, err: cause} }

// Explain turns an error from go-redis, the network or TLS into an *Error
// whose sentence names addr (host:port) and says what to do. It returns nil
// for nil, and returns unchanged an error that is already explained or that
// only says the caller cancelled.
func Explain(err error, addr string) error {
	var done *Error
	if err == nil || errors.As(err, &done) || errors.Is(err, context.Canceled) {
		return err
	}
	for _, x := range explanations {
		if x.is(err) {
			return explained(x.say(addr, err), err)
		}
	}
	return explained(fmt.Sprintf("talking to Redis at %s failed: %s", addr, reason(err)), err)
}

// explain explains err as Explain does, for errors from this client's
// deployment. In a cluster or behind Sentinel, a network error names the
// node that failed: it may not be the one given in --url.
func (c *Client) explain(err error) error { return c.explainAt(err, c.hostPort) }

// explainAt is explain for err, the error of a command sent to the node at
// addr (a cluster's master, say). A refusal (a wrong password there) names
// addr; a network error names its own node.
func (c *Client) explainAt(err error, addr string) error {
	where := addr
	if op := as[*net.OpError](err); c.kind != standalone && op != nil && op.Addr != nil {
		where = op.Addr.String()
	}
	if c.kind == cluster && (unreachable(err) || isTimeout(err)) && !isA[*Error](err) && (where != c.hostPort || c.connected.Load()) {
		return explained(c.nodeDown(where, err), err)
	}
	if c.kind == standalone && redis.HasErrorPrefix(err, "DB index is out of range") {
		return explained(noDatabase(where, strconv.Itoa(c.db())), err) // at connect, or a server restarted with fewer
	}
	return Explain(err, where)
}

// explanations are tried in order; the first that matches explains the
// error. Specific cases come before the general ones they are part of (a
// TLS handshake that timed out is about TLS, not about a slow network).
var explanations = []struct {
	is  func(error) bool
	say func(addr string, err error) string
}{
	{isA[*urlError], func(_ string, err error) string {
		return as[*urlError](err).Error() + " — write it as redis://[user:password@]host:port/db, or rediss:// for TLS"
	}},
	{isA[x509.HostnameError], func(addr string, err error) string {
		return fmt.Sprintf("the TLS certificate of %s is not for the host in --url (%s) — connect by a name the certificate lists, or have the server's certificate list this one",
			addr, reason(as[x509.HostnameError](err)))
	}},
	{expired, func(addr string, err error) string {
		return fmt.Sprintf("the TLS certificate of %s is not valid now (%s) — the server needs a new certificate (check this machine's clock too)",
			addr, reason(as[x509.CertificateInvalidError](err)))
	}},
	{isA[*tls.CertificateVerificationError], func(addr string, err error) string {
		return fmt.Sprintf("the TLS certificate of %s is not trusted (%s) — pass the CA that signed it with --tls-ca, or --tls-skip-verify when testing",
			addr, reason(as[*tls.CertificateVerificationError](err).Err))
	}},
	{isTLSAlert, func(addr string, err error) string {
		return fmt.Sprintf("%s refused the TLS connection (%s) — if it requires a client certificate, pass one its CA signed with --tls-cert and --tls-key",
			addr, reason(as[*net.OpError](err).Err))
	}},
	{isA[*handshakeError], func(addr string, _ error) string {
		return fmt.Sprintf("the TLS handshake with %s did not complete — if that port speaks plain Redis, use redis:// instead of rediss:// and drop the --tls flags", addr)
	}},
	{isWrongPass, func(addr string, err error) string {
		msg := fmt.Sprintf("%s rejected the username or password — check the ones in --url or in REDIS_USERNAME and REDIS_PASSWORD", addr)
		if strings.Contains(err.Error(), "disabled") {
			// Redis 6+ says the same whether the password is wrong or the
			// user was switched off (ACL SETUSER NAME off), as may happen
			// in the middle of a session.
			msg += "; if they are right, the user is off: turn it on with ACL SETUSER <user> on"
		}
		return msg
	}},
	{isNoAuth, func(addr string, _ error) string {
		return fmt.Sprintf("%s requires a password — give it in --url (redis://:PASSWORD@host:port) or in REDIS_PASSWORD", addr)
	}},
	{reply("NOPERM"), func(addr string, err error) string {
		return fmt.Sprintf("the Redis user may not do this on %s (%s) — grant it with ACL SETUSER, or connect as a user who may", addr, reason(err))
	}},
	{reply("LOADING"), func(addr string, _ error) string {
		return fmt.Sprintf("%s is loading its data into memory — try again when it has finished", addr)
	}},
	{reply("READONLY"), func(addr string, _ error) string {
		return fmt.Sprintf("%s is a read-only replica — connect to its master to change keys", addr)
	}},
	{reply("BUSY "), func(addr string, _ error) string {
		return fmt.Sprintf("%s is busy running a script and runs no other command until it ends (BUSY) — wait for it, or stop it with SCRIPT KILL (FUNCTION KILL for a function)", addr)
	}},
	{reply("MASTERDOWN"), func(addr string, _ error) string {
		return fmt.Sprintf("%s is a replica that lost its master and answers nothing until it is back in sync (MASTERDOWN, as replica-serve-stale-data is no) — connect to the master, or wait for the replica to catch up", addr)
	}},
	{reply("CLUSTERDOWN"), func(addr string, err error) string {
		return fmt.Sprintf("%s ran nothing because the cluster is down (%s) — some slots have no master that answers: wait for a replica to take over (after cluster-node-timeout), or bring the failed master back (CLUSTER NODES shows which)", addr, reason(err))
	}},
	{reply("TRYAGAIN"), func(addr string, err error) string {
		return fmt.Sprintf("%s ran nothing because the key's slot is moving between nodes (%s) — try again when the resharding is done", addr, reason(err))
	}},
	// Writes the server refuses for now, whatever the key. Redis's own
	// words for MISCONF run to five sentences: they stay in the cause.
	{reply("OOM "), refusedBy("%s has reached its maxmemory and cannot evict enough to make room: raise maxmemory, delete keys no one needs, or set a maxmemory-policy that evicts")},
	{reply("NOREPLICAS"), refusedBy("%s takes writes only while min-replicas-to-write replicas are connected and in sync: bring its replicas back, or lower min-replicas-to-write")},
	{reply("MISCONF"), func(addr string, _ error) string {
		return fmt.Sprintf("%s refuses writes since it could not save its RDB snapshot to disk (MISCONF; the key keeps its value) — fix what its log names (a full disk, a directory it may not write) and run BGSAVE, or set stop-writes-on-bgsave-error no", addr)
	}},
	// A write Redis refused: the key is left as it was.
	{reply("increment or decrement would overflow"), unchanged("a counter stays between -9223372036854775808 and 9223372036854775807: DEL the key, or SET it to a value this change keeps in that range")},
	{reply("value is not an integer or out of range"), unchanged("the key holds no number Redis can add to (text, or infinity): SET it to a number or DEL it")},
	{reply("value is not a valid float"), unchanged("the key holds text, not a number: SET it to a number or DEL it")},
	{reply("hash value is not an integer"), unchanged("the field holds no number Redis can add to (text, or a decimal beyond what it keeps): HSET it to a number or HDEL it")},
	{reply("hash value is not a float"), unchanged("the field holds text, not a number: HSET it to a number or HDEL it")},
	{reply("increment would produce NaN or Infinity"), unchanged("the value is, or would become, infinite: SET the key to a finite number or DEL it")},
	{reply("WRONGTYPE"), unchanged("the key holds a hash, list or other type, not a string counter: pick another key, or DEL this one")},
	{reply("DB index is out of range"), func(addr string, _ error) string { return noDatabase(addr, "") }},
	{reply("max number of clients reached"), func(addr string, _ error) string {
		return fmt.Sprintf("%s has reached its maxclients limit — close idle clients or raise maxclients", addr)
	}},
	{socket(syscall.ENOENT), func(addr string, _ error) string {
		return fmt.Sprintf("no Redis socket at %s — check --url (or REDIS_URL), or start Redis", addr)
	}},
	{socket(syscall.EACCES), func(addr string, _ error) string {
		return fmt.Sprintf("countertop may not open the Redis socket at %s (permission denied) — run it as a user who may (see unixsocketperm in redis.conf), or connect over TCP", addr)
	}},
	{is(syscall.ECONNREFUSED), func(addr string, _ error) string {
		return fmt.Sprintf("could not connect to %s: connection refused — is Redis running there? check --url (or REDIS_URL)", addr)
	}},
	{isA[*net.DNSError], func(addr string, _ error) string {
		return fmt.Sprintf("could not find the host of %s — check the host name in --url", addr)
	}},
	{isTimeout, func(addr string, _ error) string {
		return fmt.Sprintf("%s did not answer in time — check the host and port in --url, and that nothing in between drops the traffic", addr)
	}},
	{isProtocol, func(addr string, _ error) string {
		return fmt.Sprintf("%s answered, but not as Redis does — is that another service's port? check --url (or REDIS_URL)", addr)
	}},
	{is(io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE), func(addr string, _ error) string {
		return fmt.Sprintf("%s closed the connection — if that port expects TLS, use rediss://; otherwise check that it is a Redis port, not at its maxclients limit", addr)
	}},
	{isA[redis.Error], func(addr string, err error) string {
		return fmt.Sprintf("%s replied with an error: %s", addr, reason(err))
	}},
}

// unchanged explains an error reply to a write that Redis refused before
// changing anything: Redis's own words, then what to do.
func unchanged(hint string) func(string, error) string {
	return func(_ string, err error) string {
		return fmt.Sprintf("%s (the key keeps its value) — %s", strings.TrimSuffix(reason(err), "."), hint)
	}
}

// refusedBy returns unchanged for a server that refuses every write for now:
// hint names it where it says %s.
func refusedBy(hint string) func(string, error) string {
	return func(addr string, err error) string {
		return unchanged(fmt.Sprintf(hint, addr))(addr, err)
	}
}

// isA reports whether err's chain holds a T.
func isA[T error](err error) bool {
	var t T
	return errors.As(err, &t)
}

// as returns the first T in err's chain (the zero T when there is none).
func as[T error](err error) T {
	var t T
	errors.As(err, &t)
	return t
}

// is matches errors whose chain holds any of targets.
func is(targets ...error) func(error) bool {
	return func(err error) bool {
		for _, t := range targets {
			if errors.Is(err, t) {
				return true
			}
		}
		return false
	}
}

// expired matches a server certificate that has expired or is not valid
// yet: the CA may be the right one.
func expired(err error) bool {
	var ce x509.CertificateInvalidError
	return errors.As(err, &ce) && ce.Reason == x509.Expired
}

// socket matches a failed dial of a Unix socket whose chain holds target.
func socket(target error) func(error) bool {
	return func(err error) bool {
		op := as[*net.OpError](err)
		return op != nil && op.Net == "unix" && errors.Is(err, target)
	}
}

// isProtocol matches a reply go-redis could not read as RESP: the other
// end speaks another protocol (an HTTP server answers with "HTTP/1.1 400").
// go-redis gives these errors no type, only their words.
func isProtocol(err error) bool {
	for ; err != nil; err = errors.Unwrap(err) {
		if msg := err.Error(); strings.HasPrefix(msg, "redis: invalid reply") || strings.HasPrefix(msg, "redis: can't parse") {
			return true
		}
	}
	return false
}

// Refusals of credentials: a wrong user or password (older servers say
// "invalid password"), or none given where one is required.
var (
	isWrongPass = reply("WRONGPASS", "invalid password", "invalid username-password pair")
	isNoAuth    = reply("NOAUTH")
)

// reply matches error replies from Redis that start with one of prefixes
// (after an optional "ERR ").
func reply(prefixes ...string) func(error) bool {
	return func(err error) bool {
		for _, p := range prefixes {
			if redis.HasErrorPrefix(err, p) {
				return true
			}
		}
		return false
	}
}

// isTLSAlert matches a TLS alert the server sent. With TLS 1.3 the server
// checks the client's certificate after the client's handshake is done, so
// its alert arrives on the first read, outside any handshakeError.
func isTLSAlert(err error) bool {
	op := as[*net.OpError](err)
	return op != nil && op.Op == "remote error"
}

// isTimeout reports whether err is a deadline that passed: a context's, or
// a network read or dial that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout()
}

// isReply reports whether err is an error reply from Redis: the server is
// there and refused, as opposed to a failure to reach it.
func isReply(err error) bool {
	var reply redis.Error
	return errors.As(err, &reply)
}

// unreachable reports whether err is a failed attempt to open a connection
// (refused, timed out, no route): the node is down or gone.
func unreachable(err error) bool {
	op := as[*net.OpError](err)
	return op != nil && op.Op == "dial"
}

// reason returns err's text made safe for a terminal: replies from Redis can
// quote key names, which are untrusted bytes.
func reason(err error) string { return model.Printable(err.Error()) }

// noDatabase says that addr has no database db, the number at the end of
// --url ("" when it is not known here).
func noDatabase(addr, db string) string {
	which := "with the number at the end of --url"
	if db != "" {
		which = db + ", the number at the end of --url"
	}
	return fmt.Sprintf("%s has no database %s — use one below its 'databases' setting (0 to 15 by default)", addr, which)
}
