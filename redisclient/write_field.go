package redisclient

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/countertop/countertop/model"
)

// fieldIncrScript is the atomic increment of a hash field: HINCRBY or
// HINCRBYFLOAT, then the window: for a hash that counts per field, each
// field with a TTL of its own (Redis 7.4 and later), HPEXPIRE of that
// field with NX, every time (NX keeps a TTL it has); for any other, as
// incrScript does for a string, PEXPIRE of the key when it has no TTL (a
// limiter that counts per field expires the whole hash). A hash counts
// per field when its rule says so (ARGV[6] "1"), or when the field, or,
// where the key would get a TTL, one of its other fields (up to
// maxRepairFields, as a repair checks them; a larger hash without a TTL
// is taken to count per field, whose TTL ends no other field), has a TTL
// of its own: a key's TTL on such a hash would end every field at once,
// and it is never sent one. It checks, in the same step, that the key is
// still a hash or does not exist: a key written again as a string since
// it was read is left alone.
//
// KEYS[1] is the hash; ARGV[1] is HINCRBY or HINCRBYFLOAT, ARGV[2] the
// field, ARGV[3] the amount, ARGV[4] the window as incrScript takes it
// (milliseconds, "0" or "?"), ARGV[5] the decimal consent and ARGV[6] "1"
// when the rule says the hash counts per field (model.Rule.FieldTTLs),
// else "0". It returns {the field's HGET, PTTL, code, the command that
// ran, TYPE, the field's HPTTL or false, 1 when HPEXPIRE was sent else
// 0}: the field's HPTTL for a hash that counts per field, whose code then
// says what became of the field's TTL, not the key's. code is as
// incrScript's (0, 1, 2; -1 and -2 when nothing was sent) and -3 when
// nothing was sent because the key holds TYPE, not a hash. A user who may
// not run HPTTL, where it decides where the window goes, or HPEXPIRE,
// where it would be sent, gets NOPERM and one sentence why.
var fieldIncrScript = newScript(fieldIncrSource)

var fieldIncrSource = `
local key, cmd, field, by, window, mayFloat, asks = KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6]
if cmd ~= 'HINCRBY' and cmd ~= 'HINCRBYFLOAT' then
  return redis.error_reply('ERR countertop: ' .. tostring(cmd) .. ' is not HINCRBY or HINCRBYFLOAT')
end
if (field or '') == '' then
  return redis.error_reply('ERR countertop: a hash increment needs the field to add to')
end
if asks ~= '0' and asks ~= '1' then
  return redis.error_reply('ERR countertop: whether the hash counts per field must be 0 or 1, not ' .. tostring(asks))
end
` + incrPrelude + `
local no = refused({{cmd, key, field, by}, {'HGET', key, field}, {'PTTL', key}, {'TYPE', key}})
if no then
  return no
end

local typ = redis.call('TYPE', key)['ok']
local ttl = redis.call('PTTL', key)
if typ ~= 'hash' and typ ~= 'none' then
  return {false, ttl, -3, '', typ, false, 0}
end
-- Where the window goes is asked only when one may be given.
local asked = expire or not known
local perField, fttl = false, -2
local probe = redis.pcall('HPTTL', key, 'FIELDS', 1, field)
if failed(probe) then
  -- Unknown before Redis 7.4 and in Valkey 8: no field has a TTL there.
  if not string.find(string.lower(probe.err), 'unknown') and asked and (asks == '1' or typ == 'hash' and ttl < 0) then
    return noperm('hpttl', ', which tells whether the window goes to the field, whose TTL is its own, or to the hash')
  end
else
  fttl = probe[1]
  perField = asks == '1' or fttl >= 0
  local no = refused({{'HLEN', key}, {'HKEYS', key}}, ", which tells whether the hash's other fields carry TTLs of their own")
  if no and asked and not perField and typ == 'hash' then
    return no
  end
  if not perField and typ == 'hash' and not no then
    if redis.call('HLEN', key) > ` + strconv.Itoa(maxRepairFields) + ` then
      perField = ttl < 0
    else
      local names = redis.call('HKEYS', key)
      for _, t in ipairs(redis.call('HPTTL', key, 'FIELDS', #names, unpack(names))) do
        if t >= 0 then
          perField = true
          break
        end
      end
    end
  end
end
-- cur is the TTL the window is for: the field's, or the key's.
local cur = ttl
if perField then
  cur = fttl
end
local function fieldTTL()
  if perField then
    return redis.call('HPTTL', key, 'FIELDS', 1, field)[1]
  end
  return false
end
if expire then
  local no
  if perField then
    no = refused({{'HPEXPIRE', key, window, 'NX', 'FIELDS', '1', field}}, ', which gives the field its own TTL in the same step')
  else
    no = refused({{'PEXPIRE', key, window}})
  end
  if no then
    return no
  end
end

if cmd == 'HINCRBYFLOAT' and mayFloat == '0' then
  local value = redis.call('HGET', key, field)
  if not value or isint(value) then
    return {value, ttl, -2, '', typ, fieldTTL(), 0}
  end
end
if not known and cur < 0 then
  return {redis.call('HGET', key, field), ttl, -1, '', typ, fieldTTL(), 0}
end
local ran = cmd
local reply = redis.pcall(cmd, key, field, by)
if cmd == 'HINCRBY' and failed(reply) and string.find(reply.err, 'not an integer', 1, true) then
  local no = refused({{'HINCRBYFLOAT', key, field, by}}, ', which a decimal value needs')
  if no then
    return no
  end
  local again = redis.pcall('HINCRBYFLOAT', key, field, by)
  if not failed(again) then
    reply, ran = again, 'HINCRBYFLOAT'
  end
end
if failed(reply) then
  return reply
end
local started, sent = 0, 0
if expire and perField then
  redis.call('HPEXPIRE', key, window, 'NX', 'FIELDS', 1, field)
  sent = 1
  if cur < 0 then
    started = cur == -1 and 1 or 2
  end
elseif expire and ttl < 0 then
  redis.call('PEXPIRE', key, window)
  started = ttl == -1 and 1 or 2
end
return {redis.call('HGET', key, field), redis.call('PTTL', key), started, ran, 'hash', fieldTTL(), sent}
`

// IncrField adds by to field of the hash key and, in the same atomic step,
// gives the key window as its TTL when it has none, as Incr does for a
// string counter; or, to a hash that counts per field (one of its fields
// has a TTL of its own, or its rule's field_ttls says so, on a server
// that has field TTLs), gives the field window with HPEXPIRE ... NX,
// never the key, which would end every field at once: the result's
// FieldTTL, FieldPTTL and Expire say so (window 0: no expiry; model.WindowUnknown: only a key
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
		r.Fields, r.Len = []model.Field{{Name: field, Value: r.FieldValue, PTTL: r.FieldPTTL}}, 1
		r.FieldTTLs = r.FieldTTL
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
	perField := 0
	if c.ruleFor(key).FieldTTLs {
		perField = 1
	}
	reply, err := c.sendIncr(ctx, rdb, fieldIncrScript, shown, key, by.CommandOn(field), field, by.String(), ms, mayFloat, perField)
	if err != nil {
		return r, false, err
	}
	got, ok := fieldIncrReply(reply)
	if !ok {
		return r, false, explained(fmt.Sprintf("%s: Redis answered the increment script with %d values of unexpected types", shown, len(reply)), nil)
	}
	value, pttl, code, typ := got.value, got.pttl, got.code, got.typ
	name := model.Printable(key)
	r = model.Incremented{
		Observation: model.Observation{Key: key, Type: typ, PTTL: pttl, At: time.Now()},
		Command:     got.ran, GaveTTL: code == 1, Field: field, FieldValue: value,
		FieldTTL: got.fieldTTL, FieldPTTL: got.fieldPTTL,
	}
	if got.expired {
		r.Expire = model.Expiry{Key: key, Window: window, Field: field}.Command()
	}
	switch code {
	case -1:
		what, left := name, pttl
		if r.FieldTTL { // the window would be the field's
			what, left = fmt.Sprintf("field %s of %s", model.Printable(field), name), r.FieldPTTL
		}
		if left == model.PTTLMissing {
			what += " does not exist"
		} else {
			what += " has no TTL"
		}
		r.Command = ""
		return r, false, explained(fmt.Sprintf("%s was not sent: %s and no window is known to give it one", shown, what), model.ErrNeedsWindow)
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
	r.Fields, r.Len = []model.Field{{Name: field, Value: value, PTTL: r.FieldPTTL}}, 1
	r.FieldTTLs = r.FieldTTL
	return r, code > 0, nil
}

// fieldIncrCommand returns the increment of field of key by by, as people
// would type it.
func fieldIncrCommand(key, field string, by model.Amount) string {
	return model.IncrText(by.CommandOn(field), key, field, by)
}

// fieldIncrAnswer is fieldIncrScript's answer.
type fieldIncrAnswer struct {
	value      string // the field's value; "" when it does not exist
	pttl, code int64
	ran, typ   string
	fieldTTL   bool  // the hash counts per field: fieldPTTL is the field's HPTTL
	fieldPTTL  int64 //
	expired    bool  // HPEXPIRE was sent
}

// fieldIncrReply unpacks fieldIncrScript's {value, PTTL, code, command,
// type, the field's HPTTL or false, whether HPEXPIRE was sent}.
func fieldIncrReply(reply []any) (a fieldIncrAnswer, ok bool) {
	if len(reply) != 7 {
		return a, false
	}
	var ok0, ok1, ok2, ok3, ok4, ok5, ok6 bool
	a.value, ok0 = reply[0].(string)
	a.pttl, ok1 = reply[1].(int64)
	a.code, ok2 = reply[2].(int64)
	a.ran, ok3 = reply[3].(string)
	a.typ, ok4 = reply[4].(string)
	a.fieldPTTL, a.fieldTTL = reply[5].(int64)
	ok5 = a.fieldTTL || reply[5] == nil // Lua's false comes as a nil reply
	sent, ok6 := reply[6].(int64)
	a.expired = sent == 1
	ok0 = ok0 || a.code < 0 && reply[0] == nil // HGET of a field, or a key, that does not exist
	ok3 = ok3 && (a.ran == "HINCRBY" || a.ran == "HINCRBYFLOAT" || a.code < 0 && a.ran == "")
	ok2 = ok2 && a.code >= -3 && a.code <= 2
	ok6 = ok6 && (sent == 0 || sent == 1 && a.fieldTTL)
	return a, ok0 && ok1 && ok2 && ok3 && ok4 && ok5 && ok6
}
