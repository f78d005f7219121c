package redisclient

import (
	"context"
	"fmt"
	"time"

	"github.com/countertop/countertop/model"
)

// fieldIncrScript is the atomic increment of a hash field: HINCRBY or
// HINCRBYFLOAT, then PEXPIRE of the key when it has no TTL, as incrScript
// does for a string (a limiter that counts per field expires the whole
// hash). It checks, in the same step, that the key is still a hash or does
// not exist: a key written again as a string since it was read is left
// alone.
//
// KEYS[1] is the hash; ARGV[1] is HINCRBY or HINCRBYFLOAT, ARGV[2] the
// field, ARGV[3] the amount, ARGV[4] the window as incrScript takes it
// (milliseconds, "0" or "?") and ARGV[5] the decimal consent. It returns
// {the field's HGET, PTTL, code, the command that ran, TYPE}, code as
// incrScript's (0, 1, 2; -1 and -2 when nothing was sent) and -3 when
// nothing was sent because the key holds TYPE, not a hash.
var fieldIncrScript = newScript(fieldIncrSource)

const fieldIncrSource = `
local key, cmd, field, by, window, mayFloat = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
if cmd ~= 'HINCRBY' and cmd ~= 'HINCRBYFLOAT' then
  return redis.error_reply('ERR countertop: ' .. tostring(cmd) .. ' is not HINCRBY or HINCRBYFLOAT')
end
if (field or '') == '' then
  return redis.error_reply('ERR countertop: a hash increment needs the field to add to')
end
` + incrPrelude + `
local no = refused({{cmd, key, field, by}, {'HGET', key, field}, {'PTTL', key}, {'TYPE', key}})
if no then
  return no
end

local typ = redis.call('TYPE', key)['ok']
local ttl = redis.call('PTTL', key)
if typ ~= 'hash' and typ ~= 'none' then
  return {false, ttl, -3, '', typ}
end
if cmd == 'HINCRBYFLOAT' and mayFloat == '0' then
  local value = redis.call('HGET', key, field)
  if not value or isint(value) then
    return {value, ttl, -2, '', typ}
  end
end
if not known and ttl < 0 then
  return {redis.call('HGET', key, field), ttl, -1, '', typ}
end
local ran = cmd
local reply = redis.pcall(cmd, key, field, by)
if cmd == 'HINCRBY' and failed(reply) and string.find(reply.err, 'not an integer', 1, true) then
  if denied({'HINCRBYFLOAT', key, field, by}) then
    return redis.error_reply("NOPERM this user has no permissions to run the 'hincrbyfloat' command on this key, which a decimal value needs")
  end
  local again = redis.pcall('HINCRBYFLOAT', key, field, by)
  if not failed(again) then
    reply, ran = again, 'HINCRBYFLOAT'
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
return {redis.call('HGET', key, field), redis.call('PTTL', key), started, ran, 'hash'}
`

// IncrField adds by to field of the hash key and, in the same atomic step,
// gives the key window as its TTL when it has none, as Incr does for a
// string counter (window 0: no expiry; model.WindowUnknown: only a key
// with a TTL already, else model.ErrNeedsWindow; a decimal amount on an
// integer field needs by.AllowFloat, else model.ErrMakesDecimal). A key
// that holds another type than a hash when the script runs is left alone:
// the error wraps model.ErrNotHash. A missing key is created, as the
// limiter's own HINCRBY would.
//
// The result's Observation is the hash as Fetch reads it afterwards (its
// type and PTTL only, with the field, when that read fails); FieldValue is
// the field's value the script read.
func (c *Client) IncrField(ctx context.Context, key, field string, by model.Amount, window time.Duration) (model.Incremented, error) {
	r, _, err := c.incrField(ctx, c.rdb, key, field, by, window)
	if err != nil {
		return r, err
	}
	if read, err := c.Fetch(ctx, []string{key}); err == nil && read[0].Type == "hash" {
		read[0].At = r.At
		r.Observation = read[0]
	} else {
		r.Fields, r.Len = []model.Field{{Name: field, Value: r.FieldValue}}, 1
	}
	return r, nil
}

// incrField runs IncrField's script on rdb, which may be a connection of
// its own (see Burst), and returns the hash as the script left it (type and
// PTTL, with the field). started is as incr's.
func (c *Client) incrField(ctx context.Context, rdb processor, key, field string, by model.Amount, window time.Duration) (r model.Incremented, started bool, err error) {
	shown := fieldIncrCommand(key, field, by)
	if err := c.writable(shown); err != nil {
		return r, false, err
	}
	if field == "" {
		return r, false, explained(fmt.Sprintf("%s was not sent: no field is named to add to", shown), nil)
	}
	ms, mayFloat, err := incrArgs(window, by)
	if err != nil {
		return r, false, err
	}
	reply, err := c.sendIncr(ctx, rdb, fieldIncrScript, shown, key, by.CommandOn(field), field, by.String(), ms, mayFloat)
	if err != nil {
		return r, false, err
	}
	value, pttl, code, ran, typ, ok := fieldIncrReply(reply)
	if !ok {
		return r, false, explained(fmt.Sprintf("%s: Redis answered the increment script with %d values of unexpected types", shown, len(reply)), nil)
	}
	name := model.Printable(key)
	r = model.Incremented{
		Observation: model.Observation{Key: key, Type: typ, PTTL: pttl, At: time.Now()},
		Command:     ran, GaveTTL: code == 1, Field: field, FieldValue: value,
	}
	switch code {
	case -1:
		what := "has no TTL"
		if pttl == model.PTTLMissing {
			what = "does not exist"
		}
		return model.Incremented{}, false, explained(fmt.Sprintf("%s was not sent: %s %s and no window is known to give it one", shown, name, what), model.ErrNeedsWindow)
	case -2:
		r.Command = ""
		holds := fmt.Sprintf("field %s of %s holds %s, an integer", model.Printable(field), name, model.Printable(value))
		if value == "" {
			holds = fmt.Sprintf("%s has no field %s yet", name, model.Printable(field))
		}
		return r, false, explained(fmt.Sprintf("%s was not sent: %s, and HINCRBYFLOAT would leave a decimal there, on which the application's HINCRBY fails with 'hash value is not an integer'", shown, holds), model.ErrMakesDecimal)
	case -3:
		return r, false, explained(fmt.Sprintf("%s was not sent: %s holds a %s, not a hash whose field %s counts, so nothing changed", shown, name, model.Printable(typ), model.Printable(field)), model.ErrNotHash)
	}
	r.Fields, r.Len = []model.Field{{Name: field, Value: value}}, 1
	return r, code > 0, nil
}

// fieldIncrCommand returns the increment of field of key by by, as people
// would type it.
func fieldIncrCommand(key, field string, by model.Amount) string {
	return fmt.Sprintf("%s %s %s %s", by.CommandOn(field), model.Printable(key), model.Printable(field), by)
}

// fieldIncrReply unpacks fieldIncrScript's {value, PTTL, code, command,
// type}. The value is "" when the field does not exist.
func fieldIncrReply(reply []any) (value string, pttl, code int64, ran, typ string, ok bool) {
	if len(reply) != 5 {
		return "", 0, 0, "", "", false
	}
	value, ok0 := reply[0].(string)
	pttl, ok1 := reply[1].(int64)
	code, ok2 := reply[2].(int64)
	ran, ok3 := reply[3].(string)
	typ, ok4 := reply[4].(string)
	ok0 = ok0 || code < 0 && reply[0] == nil // HGET of a field, or a key, that does not exist
	ok3 = ok3 && (ran == "HINCRBY" || ran == "HINCRBYFLOAT" || code < 0 && ran == "")
	ok2 = ok2 && code >= -3 && code <= 2
	return value, pttl, code, ran, typ, ok0 && ok1 && ok2 && ok3 && ok4
}
