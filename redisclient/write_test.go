package redisclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// by parses an amount, failing the test on error.
func by(t *testing.T, s string) model.Amount {
	t.Helper()
	a, err := model.ParseAmount(s)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// allowFloat is by(t, s) with the user's consent that it may turn an
// integer counter, or a new key, into a decimal one.
func allowFloat(t *testing.T, s string) model.Amount {
	t.Helper()
	a := by(t, s)
	a.AllowFloat = true
	return a
}

// pttl is key's PTTL as the server reports it.
func pttl(t *testing.T, s *redistest.Server, key string) int64 {
	t.Helper()
	return s.Do(t, "PTTL", key).(int64)
}

// checkTTL checks that a PTTL is a TTL of about want: at most want, and
// less than 10s below it (time passes between setting and reading a TTL,
// more so on a busy machine).
func checkTTL(t *testing.T, what string, got int64, want time.Duration) {
	t.Helper()
	if ms := want.Milliseconds(); got > ms || got < ms-10000 {
		t.Errorf("%s: PTTL %d, want a TTL of about %v", what, got, want)
	}
}

func TestIncr(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "with-ttl", "5", "EX", "100")
	s.Do(t, "SET", "no-ttl", "5")
	s.Do(t, "SET", "float", "3.5")
	s.Do(t, "SET", "tenth", "0.1")
	s.Do(t, "SET", "big", "9007199254740993") // 2^53+1: a double cannot hold it

	for _, tc := range []struct {
		name, key, by string
		window        time.Duration
		raw           string
		ttl           time.Duration // 0: no TTL
	}{
		{"first increment creates the key with the window", "new", "1", time.Minute, "1", time.Minute},
		{"a TTL is kept, never reset or shortened", "with-ttl", "1", time.Minute, "6", 100 * time.Second},
		{"a key without a TTL gets one", "no-ttl", "-2", time.Minute, "3", time.Minute},
		{"window 0 sends a plain increment", "plain", "7", 0, "7", 0},
		{"decimal amount: INCRBYFLOAT", "float", "0.25", time.Minute, "3.75", time.Minute},
		{"INCRBYFLOAT rounds as Redis prints", "tenth", "0.2", 0, "0.3", 0},
		{"integers above 2^53 stay exact", "big", "1", 0, "9007199254740994", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			obs, err := c.Incr(ctx, tc.key, by(t, tc.by), tc.window)
			if err != nil {
				t.Fatal(err)
			}
			if obs.Key != tc.key || obs.Type != "string" || obs.Raw != tc.raw || obs.At.IsZero() {
				t.Errorf("Incr returned %+v, want key %q = %q", obs, tc.key, tc.raw)
			}
			if got := s.Do(t, "GET", tc.key); got != tc.raw {
				t.Errorf("the server holds %q, want %q", got, tc.raw)
			}
			if tc.ttl == 0 {
				if obs.PTTL != -1 || pttl(t, s, tc.key) != -1 {
					t.Errorf("PTTL %d (server: %d), want no expiry", obs.PTTL, pttl(t, s, tc.key))
				}
				return
			}
			checkTTL(t, "returned", obs.PTTL, tc.ttl)
			checkTTL(t, "on the server", pttl(t, s, tc.key), tc.ttl)
		})
	}
}

// TestIncrRefused checks that every error Redis gives an increment reaches
// the user as one sentence naming the key, and that the key is left exactly
// as it was: value, and no TTL added.
func TestIncrRefused(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "max", "9223372036854775807")
	s.Do(t, "SET", "min", "-9223372036854775808")
	s.Do(t, "SET", "word", "hello")
	s.Do(t, "SET", "infinite", "inf")
	s.Do(t, "HSET", "hash", "f", "1")

	for _, tc := range []struct {
		key, by, want string
	}{
		{"max", "1", "INCRBY max 1 failed: ERR increment or decrement would overflow (the key keeps its value) — a counter stays between"},
		{"min", "-1", "INCRBY min -1 failed: ERR increment or decrement would overflow"},
		{"word", "1", "INCRBY word 1 failed: ERR value is not an integer or out of range (the key keeps its value) — the key holds no number Redis can add to (text, or infinity): SET it to a number or DEL it"},
		{"infinite", "1", "INCRBY infinite 1 failed: ERR value is not an integer or out of range (the key keeps its value)"},
		{"word", "0.5", "INCRBYFLOAT word 0.5 failed: ERR value is not a valid float (the key keeps its value) — the key holds text"},
		{"infinite", "1.5", "INCRBYFLOAT infinite 1.5 failed: ERR increment would produce NaN or Infinity (the key keeps its value)"},
		{"hash", "1", "INCRBY hash 1 failed: WRONGTYPE Operation against a key holding the wrong kind of value (the key keeps its value) — the key holds a hash"},
	} {
		t.Run(tc.key+" "+tc.by, func(t *testing.T) {
			before := s.Do(t, "DUMP", tc.key)
			_, err := c.Incr(ctx, tc.key, by(t, tc.by), time.Minute)
			checkSentence(t, err, tc.want, "")
			// The ui asks through the error itself, without this package.
			var r interface{ Refused() bool }
			if !redisclient.Refused(err) || !errors.As(err, &r) || !r.Refused() {
				t.Errorf("Refused(%v) = false, want true", err)
			}
			if s.Do(t, "DUMP", tc.key) != before || pttl(t, s, tc.key) != -1 {
				t.Errorf("the key changed: value or TTL")
			}
		})
	}
}

// A key holding a number INCRBY refuses but INCRBYFLOAT takes ("3.5", or
// "007", which is not written as Redis writes integers) is a decimal
// counter: a whole amount goes to it as INCRBYFLOAT, and a decimal one
// needs no consent, as the application's INCR fails on it already.
func TestIncrOfADecimalCounter(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "decimal", "3.5")
	s.Do(t, "SET", "padded", "007")
	s.Do(t, "SET", "beyond", "9223372036854775808")
	for _, tc := range []struct{ key, by, raw, ran string }{
		{"decimal", "1", "4.5", "INCRBYFLOAT"},
		{"decimal", "-0.5", "4", "INCRBYFLOAT"},
		{"decimal", "1", "5", "INCRBY"}, // an integer now, as Redis wrote it
		{"padded", "1", "8", "INCRBYFLOAT"},
		{"beyond", "1", "9223372036854775809", "INCRBYFLOAT"},
	} {
		r, err := c.Incr(ctx, tc.key, by(t, tc.by), time.Minute)
		if err != nil || r.Raw != tc.raw || r.Command != tc.ran || !r.GaveTTL {
			t.Errorf("%s by %s = %+v, %v; want %s, by %s, with the TTL it lacked", tc.key, tc.by, r, err, tc.raw, tc.ran)
		}
		if got := s.Do(t, "GET", tc.key); got != tc.raw {
			t.Errorf("the server holds %s = %q, want %q", tc.key, got, tc.raw)
		}
		s.Do(t, "PERSIST", tc.key)
	}
	s.Do(t, "SET", "padded", "007")
	if r, err := c.Incr(ctx, "padded", by(t, "2.5"), 0); err != nil || r.Raw != "9.5" {
		t.Errorf("padded by 2.5 = %+v, %v; want 9.5, with no consent asked", r, err)
	}
}

// A decimal increment never turns a key that holds an integer, or none,
// into a decimal counter, on which the application's INCR would fail, unless
// the user agreed: it changes nothing, and says why and what the key holds.
func TestIncrNeverMakesAnIntegerDecimalUnasked(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "ratelimit:x", "151")
	s.Do(t, "SET", "zero", "0", "EX", "100")
	s.Do(t, "SET", "min", "-9223372036854775808")
	for key, want := range map[string]string{
		"ratelimit:x": "INCRBYFLOAT ratelimit:x 2.5 was not sent: ratelimit:x holds 151, an integer, and INCRBYFLOAT would leave a decimal there, on which the application's INCR fails with 'value is not an integer'",
		"zero":        "INCRBYFLOAT zero 2.5 was not sent: zero holds 0, an integer, and",
		"min":         "INCRBYFLOAT min 2.5 was not sent: min holds -9223372036854775808, an integer, and",
		"new":         "INCRBYFLOAT new 2.5 was not sent: new does not exist yet, and INCRBYFLOAT would leave a decimal there",
	} {
		t.Run(key, func(t *testing.T) {
			before, ttl := s.Do(t, "DUMP", key), pttl(t, s, key)
			for _, w := range []time.Duration{time.Minute, model.WindowUnknown} {
				r, err := c.Incr(ctx, key, by(t, "2.5"), w)
				checkSentence(t, err, want, "")
				if !errors.Is(err, model.ErrMakesDecimal) {
					t.Errorf("%s: the error does not wrap ErrMakesDecimal: %v", key, err)
				}
				if r.Key != key || r.Command != "" || key == "new" && r.PTTL != model.PTTLMissing || key != "new" && r.Raw != s.Do(t, "GET", key) {
					t.Errorf("%s: the refusal returned %+v, not the key as it is", key, r)
				}
			}
			if s.Do(t, "DUMP", key) != before || ttl < 0 && pttl(t, s, key) != ttl {
				t.Errorf("%s changed", key)
			}
		})
	}

	r, err := c.Incr(ctx, "ratelimit:x", allowFloat(t, "2.5"), time.Minute)
	if err != nil || r.Raw != "153.5" || r.Command != "INCRBYFLOAT" || !r.GaveTTL {
		t.Errorf("with consent: %+v, %v; want 153.5 and a TTL", r, err)
	}
	if r, err := c.Incr(ctx, "new", allowFloat(t, "2.5"), time.Minute); err != nil || r.Raw != "2.5" || r.GaveTTL || r.PTTL <= 0 {
		t.Errorf("with consent, a new key: %+v, %v; want 2.5 with the window", r, err)
	}
	// A whole amount leaves an integer an integer: no consent is asked.
	if r, err := c.Incr(ctx, "zero", by(t, "2.0"), time.Minute); err != nil || r.Raw != "2" || r.Command != "INCRBY" {
		t.Errorf("zero by 2.0 = %+v, %v; want INCRBY to 2", r, err)
	}
}

// Incr says whether it gave the key its first TTL: a counter stuck without
// one is repaired by the increment, and the user is told so.
func TestIncrSaysWhenItGaveTheKeyATTL(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "ratelimit:api:stuck", "150")
	for _, tc := range []struct {
		key     string
		window  time.Duration
		gaveTTL bool
	}{
		{"ratelimit:api:stuck", 0, false}, // window 0: no TTL to give
		{"ratelimit:api:stuck", time.Minute, true},
		{"ratelimit:api:stuck", time.Minute, false}, // it has one now
		{"ratelimit:api:new", time.Minute, false},   // created with it: it never lacked one
	} {
		r, err := c.Incr(ctx, tc.key, by(t, "1"), tc.window)
		if err != nil || r.GaveTTL != tc.gaveTTL || r.Command != "INCRBY" {
			t.Errorf("%s with window %v: %+v, %v; want GaveTTL %v", tc.key, tc.window, r, err, tc.gaveTTL)
		}
	}
	checkTTL(t, "repaired", pttl(t, s, "ratelimit:api:stuck"), time.Minute)
}

func TestIncrOnReplica(t *testing.T) {
	t.Parallel()
	master := redistest.Start(t)
	replica := redistest.Start(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	c := connect(t, replica)
	_, err := c.Incr(context.Background(), "ratelimit:x", by(t, "1"), time.Minute)
	checkSentence(t, err, "INCRBY ratelimit:x 1 failed: "+replica.Addr+" is a read-only replica — connect to its master to change keys", "")
	if !redisclient.Refused(err) {
		t.Errorf("Refused(%v) = false, want true", err)
	}
}

// TestIncrNoPerm checks users whose ACL lacks a command the increment needs.
// The script checks every command before its first write: a user who may
// INCRBY but not PEXPIRE must not be left with a counter that never expires.
func TestIncrNoPerm(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "ACL", "SETUSER", "no-incr", "on", ">pw", "~*", "+@all", "-incrby")
	s.Do(t, "ACL", "SETUSER", "no-expire", "on", ">pw", "~*", "+@all", "-pexpire")
	s.Do(t, "ACL", "SETUSER", "no-eval", "on", ">pw", "~*", "+@all", "-eval", "-evalsha")
	s.Do(t, "SET", "counter", "5")

	for _, tc := range []struct {
		user, key, want string
	}{
		{"no-incr", "counter", "INCRBY counter 1 failed: the Redis user may not do this on " + s.Addr + " (NOPERM this user has no permissions to run the 'incrby' command on this key) — grant it with ACL SETUSER"},
		{"no-expire", "fresh", "(NOPERM this user has no permissions to run the 'pexpire' command on this key)"},
		{"no-eval", "fresh", "INCRBY fresh 1 failed: the Redis user may not do this on " + s.Addr + " (NOPERM …'evalsha' command) — grant it with ACL SETUSER"},
	} {
		t.Run(tc.user, func(t *testing.T) {
			c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: "redis://" + tc.user + ":pw@" + s.Addr})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			_, err = c.Incr(context.Background(), tc.key, by(t, "1"), time.Minute)
			checkSentence(t, err, tc.want, "")
			if !redisclient.Refused(err) {
				t.Errorf("Refused(%v) = false, want true", err)
			}
		})
	}
	if got := s.Do(t, "GET", "counter"); got != "5" || pttl(t, s, "counter") != -1 {
		t.Errorf("counter = %q with PTTL %d, want it untouched", got, pttl(t, s, "counter"))
	}
	if got := s.Do(t, "EXISTS", "fresh"); got != int64(0) {
		t.Error("a user without PEXPIRE created a counter (without a TTL)")
	}
}

// TestIncrAfterScriptFlush checks that the increment survives a server that
// lost its script cache: EVALSHA says NOSCRIPT, and EVAL runs it.
func TestIncrAfterScriptFlush(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	if _, err := c.Incr(ctx, "k", by(t, "1"), time.Minute); err != nil {
		t.Fatal(err)
	}
	s.Do(t, "SCRIPT", "FLUSH")
	evals := s.CommandCalls(t)["eval"]
	obs, err := c.Incr(ctx, "k", by(t, "1"), time.Minute)
	if err != nil {
		t.Fatalf("increment after SCRIPT FLUSH: %v", err)
	}
	if obs.Raw != "2" {
		t.Errorf("k = %q, want 2", obs.Raw)
	}
	if s.CommandCalls(t)["eval"] != evals+1 {
		t.Error("the script did not go through EVAL after NOSCRIPT")
	}
}

// With no window known, a key that has a TTL needs none and is
// incremented; any other is left exactly as it was (no counter without a
// TTL is made), and the error says a window is needed.
func TestIncrWithoutAWindow(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	ctx := context.Background()
	s.Do(t, "SET", "with-ttl", "5", "EX", "100")
	s.Do(t, "SET", "no-ttl", "5")

	obs, err := c.Incr(ctx, "with-ttl", allowFloat(t, "2.5"), model.WindowUnknown)
	if err != nil || obs.Raw != "7.5" {
		t.Fatalf("Incr of a key with a TTL: %+v, %v", obs, err)
	}
	checkTTL(t, "kept", pttl(t, s, "with-ttl"), 100*time.Second)

	for key, want := range map[string]string{
		"no-ttl":  "INCRBY no-ttl 1 was not sent: no-ttl has no TTL and no window is known to give it one",
		"missing": "INCRBY missing 1 was not sent: missing does not exist and no window is known to give it one",
	} {
		t.Run(key, func(t *testing.T) {
			_, err := c.Incr(ctx, key, by(t, "1"), model.WindowUnknown)
			checkSentence(t, err, want, "")
			if !errors.Is(err, model.ErrNeedsWindow) {
				t.Errorf("%s: the error does not wrap ErrNeedsWindow: %v", key, err)
			}
		})
	}
	if s.Do(t, "GET", "no-ttl") != "5" || pttl(t, s, "no-ttl") != -1 || s.Do(t, "EXISTS", "missing") != int64(0) {
		t.Error("an increment with no window known changed a key that has no TTL")
	}
}

func TestIncrBadWindow(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	for _, w := range []time.Duration{-time.Second, time.Microsecond} {
		t.Run(w.String(), func(t *testing.T) {
			_, err := c.Incr(context.Background(), "k", by(t, "1"), w)
			checkSentence(t, err, "is not a TTL: give at least 1ms, or 0 for no expiry", "")
		})
	}
	if s.Do(t, "EXISTS", "k") != int64(0) {
		t.Error("an increment with a bad window was sent")
	}
}

func TestDelete(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.Do(t, "SET", "k", "1")
	for i, want := range []bool{true, false} { // the second time it is already gone, as the user wanted
		existed, err := c.Delete(context.Background(), "k")
		if err != nil {
			t.Fatal(err)
		}
		if existed != want {
			t.Errorf("DEL number %d: existed = %v, want %v", i+1, existed, want)
		}
	}
	if s.Do(t, "EXISTS", "k") != int64(0) {
		t.Error("k still exists")
	}
}

// TestReadOnlySendsNothing checks that a read-only client refuses every
// write with one sentence and that the server never sees one.
func TestReadOnlySendsNothing(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "ratelimit:x", "1")
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL(), ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	before := s.CommandCalls(t)

	_, err = c.Incr(ctx, "ratelimit:x", by(t, "1"), time.Minute)
	checkReadOnly(t, err, "INCRBY ratelimit:x 1")
	_, err = c.Incr(ctx, "ratelimit:x", by(t, "0.5"), 0)
	checkReadOnly(t, err, "INCRBYFLOAT ratelimit:x 0.5")
	_, _, err = c.Expire(ctx, model.Expiry{Key: "ratelimit:x", Window: time.Minute, Shape: model.ShapeCounter})
	checkReadOnly(t, err, "PEXPIRE ratelimit:x 60000 NX (if still a counter without a TTL)")
	_, err = c.Delete(ctx, "ratelimit:x")
	checkReadOnly(t, err, "DEL ratelimit:x")
	_, err = c.Burst(ctx, "ratelimit:x", by(t, "1"), time.Minute, redisclient.BurstOptions{Count: 10, Clients: 2})
	checkReadOnly(t, err, "INCRBY ratelimit:x 1")

	after := s.CommandCalls(t)
	for _, cmd := range []string{"incrby", "incrbyfloat", "eval", "evalsha", "pexpire", "del"} {
		if after[cmd] != before[cmd] {
			t.Errorf("the server saw %d %s call(s) from a read-only client", after[cmd]-before[cmd], cmd)
		}
	}
	if got := s.Do(t, "GET", "ratelimit:x"); got != "1" {
		t.Errorf("ratelimit:x = %q, want it untouched", got)
	}
}

func checkReadOnly(t *testing.T, err error, cmd string) {
	t.Helper()
	checkSentence(t, err, "countertop is read-only (--read-only): "+cmd+" was not sent", "")
	if !errors.Is(err, redisclient.ErrReadOnly) || !redisclient.Refused(err) {
		t.Errorf("%v: want it to wrap ErrReadOnly and count as refused", err)
	}
}

func TestWriteUnreachable(t *testing.T) {
	t.Parallel()
	s, c := startConnected(t)
	s.Stop()
	_, err := c.Incr(context.Background(), "k", by(t, "1"), time.Minute)
	checkSentence(t, err, "INCRBY k 1 failed: ", "")
	if redisclient.Refused(err) {
		t.Errorf("Refused(%v) = true: an unreachable server refused nothing, the write's fate is unknown", err)
	}
}

// An increment whose reply is lost (the connection breaks after Redis ran
// it) counts once: go-redis would send it again on a new connection, and
// the counter would say two where the user fired one. countertop reports
// the broken connection instead.
func TestIncrWhoseReplyIsLostCountsOnce(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "rl:once", "10", "EX", "600")
	p := newCutProxy(t, s.Addr)
	c := connectURL(t, redisclient.Options{URL: "redis://" + p.addr + "/0"})
	// The first increment loads the script (EVALSHA is refused, EVAL runs
	// it): the one whose reply is lost runs with EVALSHA, at once.
	if obs, err := c.Incr(context.Background(), "rl:once", by(t, "1"), time.Minute); err != nil || obs.Raw != "11" {
		t.Fatalf("Incr = %+v, %v; want 11", obs, err)
	}

	p.cutNextReply()
	_, err := c.Incr(context.Background(), "rl:once", by(t, "1"), time.Minute)
	if want := "INCRBY rl:once 1 failed: the connection to " + p.addr + " broke before Redis answered, so it may have counted or not — look at the value before you fire again"; err == nil || err.Error() != want {
		t.Errorf("Incr whose reply was cut off: %v\nwant %s", err, want)
	}
	if got := s.Do(t, "GET", "rl:once"); got != "12" {
		t.Errorf("after one increment whose reply was lost, the counter is %v; want 12", got)
	}
	if obs, err := c.Incr(context.Background(), "rl:once", by(t, "1"), time.Minute); err != nil || obs.Raw != "13" {
		t.Errorf("the next Incr = %+v, %v; want 13", obs, err)
	}
}

// cutProxy relays TCP between its clients and a Redis, and can drop the
// next reply Redis sends, closing that client's connection instead, as a
// network that breaks after the request went through.
type cutProxy struct {
	addr string
	cut  chan struct{} // holds a token while the next reply is to be cut
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	p := &cutProxy{cut: make(chan struct{}, 1)}
	p.addr = redistest.Serve(t, func(client net.Conn) {
		server, err := net.Dial("tcp", target)
		if err != nil {
			client.Close()
			return
		}
		go func() { _, _ = io.Copy(server, client); server.Close() }()
		defer client.Close()
		defer server.Close()
		buf := make([]byte, 64<<10)
		for {
			n, err := server.Read(buf)
			if n > 0 {
				select {
				case <-p.cut:
					return // the reply is lost with the connection
				default:
				}
				if _, err := client.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	})
	return p
}

func (p *cutProxy) cutNextReply() { p.cut <- struct{}{} }

// A whole amount on a decimal counter needs INCRBYFLOAT: a user who may
// INCRBY but not INCRBYFLOAT is told so, and nothing changes.
func TestIncrOfADecimalCounterNeedsINCRBYFLOAT(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	s.Do(t, "SET", "decimal", "3.5")
	s.Do(t, "ACL", "SETUSER", "intonly", "on", ">pw", "~*", "+@all", "-incrbyfloat")
	c := connectURL(t, redisclient.Options{URL: s.URL(), Username: "intonly", Password: "pw"})
	_, err := c.Incr(context.Background(), "decimal", by(t, "1"), time.Minute)
	checkSentence(t, err, "INCRBY decimal 1 failed: the Redis user may not do this", "")
	checkSentence(t, err, "NOPERM this user has no permissions to run the 'incrbyfloat' command on this key, which a decimal value needs", "")
	if !redisclient.Refused(err) || s.Do(t, "GET", "decimal") != "3.5" || pttl(t, s, "decimal") != -1 {
		t.Errorf("the refused increment changed the key, or is not a refusal: %v", err)
	}
}
