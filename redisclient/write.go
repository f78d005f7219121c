package redisclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"github.com/countertop/countertop/model"
	"github.com/redis/go-redis/v9"
)

// ErrReadOnly is the cause of the error every write returns on a client
// connected with Options.ReadOnly. Nothing was sent.
var ErrReadOnly = errors.New("countertop is read-only")

// incrScript is the atomic increment: INCRBY or INCRBYFLOAT, then PEXPIRE
// when the key has no TTL, in one step no crash can split. (INCR then
// EXPIRE as two commands is the bug countertop exists to expose: a client
// that dies between them leaves a counter that never resets.)
//
// KEYS[1] is the counter; ARGV[1] is INCRBY or INCRBYFLOAT, ARGV[2] the
// amount, ARGV[3] the window in milliseconds, "0" for no expiry, "?" when
// none is known, and ARGV[4] "1" when INCRBYFLOAT may turn an integer, or
// no key, into a decimal, else "0". It returns {value, PTTL, what became of
// the TTL, the command that ran}: 0 left as it was, 1 given to a key that
// had none, 2 given to the key it created. The value comes from GET, never
// from the increment's reply: Lua numbers are doubles, which round integers
// above 2^53.
//
// Where nothing is sent, the reply is {the key's GET, its PTTL, code, ""}:
// code -1 for "?" and a key that has no TTL (or no value), for which the
// caller must find a window; -2 for INCRBYFLOAT, with ARGV[4] "0", of a key
// holding an integer or nothing, after which the application's INCR would
// fail.
//
// A whole amount goes to a key holding a number INCRBY refuses ("3.5",
// "007") as INCRBYFLOAT, which takes it: the ui's + and the CLI's incr so
// treat such a key alike, by what Redis holds when the script runs.
//
// A script is not rolled back when a later command fails, so everything
// that can fail is checked before the first write: the arguments, and (on
// Redis 7+) that the user may run each command — a user allowed INCRBY but
// not PEXPIRE would otherwise create the very counter without a TTL that
// this script prevents. The increment runs with pcall and its error reply
// (overflow, not an integer, WRONGTYPE, READONLY, ...) is returned as
// Redis wrote it; an increment writes nothing when it fails.
var incrScript = newScript(incrSource)

// incrPrelude is what the increment scripts (incrScript, fieldIncrScript)
// share: the checks of window and mayFloat, which they declare first, and
// the helpers noperm, refused, isint and failed.
const incrPrelude = `local known = window ~= '?'
if known and (#window > 15 or not string.match(window, '^%d+$')) then
  return redis.error_reply('ERR countertop: the window must be a whole number of milliseconds, not ' .. window)
end
if mayFloat ~= '0' and mayFloat ~= '1' then
  return redis.error_reply('ERR countertop: the decimal consent must be 0 or 1, not ' .. tostring(mayFloat))
end
local expire = known and tonumber(window) > 0
local function denied(call)
  return redis.acl_check_cmd and not redis.acl_check_cmd(unpack(call))
end
-- noperm is the refusal of command name on the key, in the words of
-- Redis 7.0's own; why, when given, says what that command is for.
local function noperm(name, why)
  return redis.error_reply("NOPERM this user has no permissions to run the '" .. string.lower(name) .. "' command on this key" .. (why or ''))
end
-- refused returns the error of the first of calls the user may not run,
-- or nil.
local function refused(calls, why)
  for _, call in ipairs(calls) do
    if denied(call) then
      return noperm(call[1], why)
    end
  end
end

-- A canonical signed 64-bit integer, as Redis's string2ll reads it: INCR works on it.
local function isint(v)
  if v == '0' then return true end
  local digits = string.match(v, '^-?([1-9]%d*)$')
  if not digits or #digits > 19 then return false end
  return #digits < 19 or digits <= (string.sub(v, 1, 1) == '-' and '9223372036854775808' or '9223372036854775807')
end
local function failed(reply) return type(reply) == 'table' and reply.err ~= nil end
`

const incrSource = `
local key, cmd, by, window, mayFloat = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4]
if cmd ~= 'INCRBY' and cmd ~= 'INCRBYFLOAT' then
  return redis.error_reply('ERR countertop: ' .. cmd .. ' is not INCRBY or INCRBYFLOAT')
end
` + incrPrelude + `
local calls = {{cmd, key, by}, {'GET', key}, {'PTTL', key}}
if expire then
  table.insert(calls, {'PEXPIRE', key, window})
end
local no = refused(calls)
if no then
  return no
end

local ttl = redis.call('PTTL', key)
if cmd == 'INCRBYFLOAT' and mayFloat == '0' then
  local value = redis.pcall('GET', key)
  if not failed(value) and (not value or isint(value)) then
    return {value, ttl, -2, ''}
  end
end
if not known and ttl < 0 then
  return {redis.call('GET', key), ttl, -1, ''}
end
local ran = cmd
local reply = redis.pcall(cmd, key, by)
if cmd == 'INCRBY' and failed(reply) and string.find(reply.err, 'not an integer', 1, true) then
  local no = refused({{'INCRBYFLOAT', key, by}}, ', which a decimal value needs')
  if no then
    return no
  end
  local again = redis.pcall('INCRBYFLOAT', key, by)
  if not failed(again) then
    reply, ran = again, 'INCRBYFLOAT'
  end
end
if failed(reply) then
  return reply
end
local started = 0
if expire and ttl < 0 then
  redis.call('PEXPIRE', key, window)
  started = ttl == -1 and 1 or 2
end
return {redis.call('GET', key), redis.call('PTTL', key), started, ran}
`

// Incr adds by to key and, in the same atomic step, gives the key window as
// its TTL when it has none (EXPIRE NX semantics: an existing TTL is neither
// shortened nor extended). A whole amount is sent with INCRBY, or with
// INCRBYFLOAT to a key holding a number INCRBY refuses ("3.5", "007"); a
// decimal one with INCRBYFLOAT, which is not sent to a key that holds an
// integer or does not exist unless by.AllowFloat says so: the error then
// wraps model.ErrMakesDecimal, and the result holds the key as it is.
//
// window 0 sends a plain increment with no expiry: for keys that live
// forever, and to reproduce the immortal-counter bug on purpose.
// model.WindowUnknown increments only a key that has a TTL already; for any
// other it writes nothing and returns an error wrapping
// model.ErrNeedsWindow. It returns the key as it is afterwards, the command
// that ran and whether it gave an existing key its first TTL. A missing key
// is created.
//
// The script runs with EVALSHA and falls back to EVAL when the server lost
// its script cache (SCRIPT FLUSH, a restart, a failover).
func (c *Client) Incr(ctx context.Context, key string, by model.Amount, window time.Duration) (model.Incremented, error) {
	r, _, err := c.incr(ctx, c.rdb, key, by, window)
	return r, err
}

// incr runs Incr on rdb, which may be a connection of its own (see Burst).
// started reports whether this increment gave the key its TTL, created or
// not.
func (c *Client) incr(ctx context.Context, rdb processor, key string, by model.Amount, window time.Duration) (r model.Incremented, started bool, err error) {
	cmd := incrCommand(key, by)
	if err := c.writable(cmd); err != nil {
		return r, false, err
	}
	ms, mayFloat, err := incrArgs(window, by)
	if err != nil {
		return r, false, err
	}
	reply, err := c.sendIncr(ctx, rdb, incrScript, cmd, key, by.Command(), by.String(), ms, mayFloat)
	if err != nil {
		return r, false, err
	}
	raw, pttl, code, ran, ok := incrReply(reply)
	if !ok {
		return r, false, explained(fmt.Sprintf("%s: Redis answered the increment script with %d values of unexpected types", cmd, len(reply)), nil)
	}
	r = model.Incremented{Observation: model.Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: time.Now()}, Command: ran, GaveTTL: code == 1}
	switch {
	case code == -1:
		what := "has no TTL"
		if pttl == model.PTTLMissing {
			what = "does not exist"
		}
		return model.Incremented{}, false, explained(fmt.Sprintf("%s was not sent: %s %s and no window is known to give it one", cmd, model.Printable(key), what), model.ErrNeedsWindow)
	case code == -2:
		r.Command = ""
		if pttl == model.PTTLMissing {
			r.Type = "none"
		}
		return r, false, explained(fmt.Sprintf("%s was not sent: %s, and INCRBYFLOAT would leave a decimal there, on which the application's INCR fails with 'value is not an integer'", cmd, holding(r.Observation)), model.ErrMakesDecimal)
	}
	return r, code > 0, nil
}

// incrArgs returns the window (milliseconds, or "?" for
// model.WindowUnknown) and the decimal consent as the increment scripts take
// them, or the sentence that refuses a window that is no TTL.
func incrArgs(window time.Duration, by model.Amount) (ms any, mayFloat int, err error) {
	if window < 0 && window != model.WindowUnknown || 0 < window && window < time.Millisecond {
		return nil, 0, explained(fmt.Sprintf("the window %v is not a TTL: give at least 1ms, or 0 for no expiry", window), nil)
	}
	ms = window.Milliseconds()
	if window == model.WindowUnknown {
		ms = "?"
	}
	if by.AllowFloat {
		mayFloat = 1
	}
	return ms, mayFloat, nil
}

// sendIncr runs an increment script on rdb, shown being the command it
// stands for. A connection that broke after the script was sent may have
// counted or not, and the sentence says so; other failures read as
// writeError's "CMD failed: ...", which the ui and the CLI show as it is.
func (c *Client) sendIncr(ctx context.Context, rdb processor, s luaScript, shown, key string, args ...any) ([]any, error) {
	reply, err := evalOnce(ctx, rdb, s, []string{key}, args...).Slice()
	err = c.afterWrite(ctx, err)
	if err != nil && brokeAfterSending(err) {
		where := c.hostPort
		if op := as[*net.OpError](err); op != nil && op.Addr != nil {
			where = op.Addr.String()
		}
		return nil, explained(fmt.Sprintf("%s failed: the connection to %s broke before Redis answered, so it may have counted or not — look at the value before you fire again", shown, where), err)
	}
	if err != nil {
		return nil, c.writeError(shown, err)
	}
	return reply, nil
}

// holding says what an integer counter, or a key that does not exist,
// holds: "k holds 151, an integer", "k does not exist yet".
func holding(o model.Observation) string {
	if o.PTTL == model.PTTLMissing {
		return model.Printable(o.Key) + " does not exist yet"
	}
	return fmt.Sprintf("%s holds %s, an integer", model.Printable(o.Key), model.Printable(o.Raw))
}

// processor runs a command: a client of one server, or of a cluster.
type processor interface {
	Process(ctx context.Context, cmd redis.Cmder) error
}

// once runs the command args on rdb and returns it, never sending it a
// second time: go-redis sends a command again when its connection broke
// after it was written (a reset, a read that timed out), and an increment
// sent twice would count twice. The error then says the connection broke;
// whether the increment landed, only a read can tell.
func once(ctx context.Context, rdb processor, args ...any) *redis.Cmd {
	cmd := redis.NewCmd(ctx, args...)
	_ = rdb.Process(ctx, noRetry{cmd})
	return cmd
}

// brokeAfterSending reports whether err is a connection that broke (or a
// reply that did not come in time) once the command was sent: unlike a
// failed dial, the command may have run.
func brokeAfterSending(err error) bool {
	return !unreachable(err) && (is(io.EOF, io.ErrUnexpectedEOF, syscall.ECONNRESET, syscall.EPIPE)(err) || isTimeout(err))
}

// noRetry is a command go-redis must not send again.
type noRetry struct{ *redis.Cmd }

func (noRetry) NoRetry() bool { return true }

// incrCommand returns the increment of key by by, as people would type it.
func incrCommand(key string, by model.Amount) string {
	return model.IncrText(by.Command(), key, "", by)
}

// incrReply unpacks incrScript's {value, PTTL, code, command}.
func incrReply(reply []any) (raw string, pttl, code int64, ran string, ok bool) {
	if len(reply) != 4 {
		return "", 0, 0, "", false
	}
	raw, ok0 := reply[0].(string)
	pttl, ok1 := reply[1].(int64)
	code, ok2 := reply[2].(int64)
	ran, ok3 := reply[3].(string)
	ok0 = ok0 || code < 0 && reply[0] == nil // the key's GET when nothing was sent: nil when it does not exist
	ok3 = ok3 && (ran == "INCRBY" || ran == "INCRBYFLOAT" || code < 0 && ran == "")
	return raw, pttl, code, ran, ok0 && ok1 && ok2 && ok3
}

// Delete removes key. A key that is already gone is not an error (the user
// wanted it gone), but existed says so.
func (c *Client) Delete(ctx context.Context, key string) (existed bool, err error) {
	cmd := "DEL " + model.Printable(key)
	if err := c.writable(cmd); err != nil {
		return false, err
	}
	n, err := c.rdb.Del(ctx, key).Result()
	if err := c.afterWrite(ctx, err); err != nil {
		return false, c.writeError(cmd, err)
	}
	return n > 0, nil
}

// Refused reports whether err says that a write was refused, so nothing
// changed: by Redis (overflow, not a number, wrong type, READONLY, NOPERM:
// an error reply), by --read-only, or by an increment's own check (a hash
// field's key that is a hash no more). Other errors (Redis could not be
// reached or did not answer) leave it unknown whether the write happened.
func Refused(err error) bool {
	var reply redis.Error
	return errors.Is(err, ErrReadOnly) || errors.Is(err, model.ErrNotHash) || errors.As(err, &reply)
}

// RefusesEveryKey reports whether err is a refusal that every write to
// the server would meet alike, whatever its key: a read-only replica
// (READONLY), one that lost its master (MASTERDOWN), a server loading its
// data, refusing writes after a failed save (MISCONF), short of replicas
// (NOREPLICAS), out of memory (OOM), busy with a script (BUSY), a cluster
// that is down (CLUSTERDOWN), or --read-only. A write of many keys stops
// at the first such error rather than meet it once a key. (NOPERM is not
// one: an ACL may allow some keys and not others.)
func RefusesEveryKey(err error) bool {
	return errors.Is(err, ErrReadOnly) || reply("READONLY", "MASTERDOWN", "LOADING", "MISCONF", "NOREPLICAS", "OOM ", "BUSY ", "CLUSTERDOWN")(err)
}

// RefusesEveryKey is the function RefusesEveryKey, for the ui, which asks
// it through an interface without importing this package.
func (e *Error) RefusesEveryKey() bool { return RefusesEveryKey(e) }

// writable returns the error for cmd (as people would write it) on a
// read-only client, and nil otherwise.
func (c *Client) writable(cmd string) error {
	if c.readOnly {
		return explained(fmt.Sprintf("countertop is read-only (--read-only): %s was not sent", cmd), ErrReadOnly)
	}
	return nil
}

// writeError explains err from cmd as one sentence that names the command
// and its key, wrapping err.
func (c *Client) writeError(cmd string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return explained(fmt.Sprintf("%s failed: %v", cmd, c.explain(err)), err)
}
