package redisclient

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/countertop/countertop/model"
)

// expireScript is a repair: it gives a key its expiry only if the key still
// holds what it was chosen as and still has no TTL, in one atomic step.
// Sent as a bare EXPIRE NX, a repair would land on whatever the key holds
// when it arrives: a counter another client has turned into a hash since
// it was read would be deleted a window later.
//
// KEYS[1] is the key; ARGV[1] the TYPE it must have and ARGV[2] "1" when
// it must hold a number (model.Shape); the rest is the command to run,
// model.Expiry.Command without its key. It returns {outcome, TYPE, PTTL,
// the value (strings only) or false}, as found, PTTL read again after a
// write; outcome is "set", "changed", "gone", "ttl" (it had one
// already) or "fields" (a hash whose fields carry TTLs), the first that
// applies. For HPEXPIRE (a field's repair: ARGV[8] the field), the value
// and PTTL are the field's, and "gone" says the field is.
//
// A number is one as model.ParseValue reads it: the syntax strtold takes
// (checked here, since Lua's tonumber takes spaces around it too), finite,
// under Redis's 5 KiB for a number. (A nonzero number too small even for a
// long double, which model reads as none, passes: no counter holds one.)
// The command runs last and is the only write, so an error (NOPERM,
// READONLY) changes nothing.
var expireScript = newScript(expireSource)

// maxRepairFields is the most fields a key's repair of a hash checks for
// TTLs of their own, on a server that has them, in its one atomic step: a
// larger hash is left alone ("fields") rather than hold Redis up.
const maxRepairFields = 1000

var expireSource = `
local key, want, number, cmd = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
if cmd ~= 'PEXPIRE' and cmd ~= 'HPEXPIRE' then
  return redis.error_reply('ERR countertop: ' .. tostring(cmd) .. ' is neither PEXPIRE nor HPEXPIRE')
end
if (want or '') == '' or (number ~= '0' and number ~= '1') then
  return redis.error_reply('ERR countertop: a repair needs the type the key must have and 0 or 1 for a number, not ' .. tostring(want) .. ' and ' .. tostring(number))
end
local function isnumber(s)
  if not s or #s == 0 or #s >= 5120 then
    return false
  end
  local body = string.gsub(s, '^[+-]', '', 1)
  local digit, mark = '%d', '[eE]'
  local hex = string.match(body, '^0[xX](.+)$')
  if hex then
    body, digit, mark = hex, '%x', '[pP]'
  end
  local mantissa = string.match(body, '^(.-)' .. mark .. '[+-]?%d+$') or body
  if not string.match(mantissa, '^' .. digit .. '*%.?' .. digit .. '*$') or not string.match(mantissa, digit) then
    return false
  end
  local n = tonumber(s)
  return n ~= nil and n == n and n ~= math.huge and n ~= -math.huge
end
local typ = redis.call('TYPE', key)['ok']
if typ == 'none' then
  return {'gone', typ, -2, false}
end
if cmd == 'HPEXPIRE' then
  local field = ARGV[8]
  if typ ~= 'hash' then
    return {'changed', typ, redis.call('PTTL', key), false}
  end
  local raw = redis.call('HGET', key, field)
  if not raw then
    return {'gone', typ, -2, false}
  end
  local ttl = redis.call('HPTTL', key, 'FIELDS', 1, field)[1]
  if number == '1' and not isnumber(raw) then
    return {'changed', typ, ttl, raw}
  end
  if ttl ~= -1 then
    return {'ttl', typ, ttl, raw}
  end
  redis.call(cmd, key, unpack(ARGV, 4))
  return {'set', typ, redis.call('HPTTL', key, 'FIELDS', 1, field)[1], raw}
end
if typ == 'hash' then
  -- A key's TTL on a hash whose fields carry their own would end every
  -- field at once. Where HPTTL is unknown no field has one; a hash too
  -- large to check in one step is left alone too.
  local probe = redis.pcall('HPTTL', key, 'FIELDS', 1, '')
  if type(probe) == 'table' and probe.err and not string.find(string.lower(probe.err), 'unknown') then
    -- HPTTL is there but this user may not run it: the fields cannot be
    -- checked, so the hash is left alone.
    return {'fields', typ, redis.call('PTTL', key), false}
  end
  if type(probe) == 'table' and not probe.err then
    if redis.call('HLEN', key) > ` + strconv.Itoa(maxRepairFields) + ` then
      return {'fields', typ, redis.call('PTTL', key), false}
    end
    local names = redis.call('HKEYS', key)
    for _, t in ipairs(redis.call('HPTTL', key, 'FIELDS', #names, unpack(names))) do
      if t >= 0 then
        return {'fields', typ, redis.call('PTTL', key), false}
      end
    end
  end
end
local raw = false
if typ == 'string' then
  raw = redis.call('GETRANGE', key, 0, ` + strconv.Itoa(model.MaxRaw-1) + `)
end
local ttl = redis.call('PTTL', key)
if typ ~= want or number == '1' and not isnumber(raw) then
  return {'changed', typ, ttl, raw}
end
if ttl ~= -1 then
  return {'ttl', typ, ttl, raw}
end
redis.call(cmd, key, unpack(ARGV, 4))
return {'set', typ, redis.call('PTTL', key), raw}
`

// expireOutcomes are the script's outcomes, by the name it returns.
var expireOutcomes = map[string]model.ExpiryOutcome{
	"set":     model.ExpirySet,
	"changed": model.ExpiryChanged,
	"gone":    model.ExpiryGone,
	"ttl":     model.ExpiryHadTTL,
	"fields":  model.ExpiryFieldTTLs,
}

// Expire runs the repair e: in one atomic step, it sends e.Command only
// while e.Key still holds e.Shape and has no TTL. It returns what it did
// and the key as it is afterwards (Type "none", PTTL model.PTTLMissing,
// when it is gone; a key of another type than string, as Fetch reads it,
// or with its type and PTTL only when that read fails); a key that
// changed or is gone is no error. The error,
// when Redis could not be asked or refused, names e as it is shown.
func (c *Client) Expire(ctx context.Context, e model.Expiry) (model.ExpiryOutcome, model.Observation, error) {
	shown := e.String()
	if err := c.writable(shown); err != nil {
		return model.ExpiryFailed, model.Observation{}, err
	}
	if e.Window < time.Millisecond {
		return model.ExpiryFailed, model.Observation{}, explained(fmt.Sprintf("the window %v is not a TTL: give at least 1ms", e.Window), nil)
	}
	number := "0"
	if e.Shape.Number {
		number = "1"
	}
	args := []any{e.Shape.Type, number}
	for i, a := range e.Command() {
		if i != 1 { // the key, which goes as KEYS[1]
			args = append(args, a)
		}
	}
	reply, err := evalOnce(ctx, c.rdb, expireScript, []string{e.Key}, args...).Slice()
	if err = c.afterWrite(ctx, err); err != nil {
		return model.ExpiryFailed, model.Observation{}, c.writeError(shown, err)
	}
	outcome, obs, ok := expireReply(e.Key, reply)
	if !ok {
		return model.ExpiryFailed, model.Observation{}, explained(fmt.Sprintf("%s: Redis answered the repair script with %d values of unexpected types", shown, len(reply)), nil)
	}
	if e.Field != "" {
		// What the script read is the field's row, as Rows makes it.
		obs.Field, obs.Fields, obs.Len, obs.Raw = e.Field, []model.Field{{Name: e.Field, Value: obs.Raw, PTTL: obs.PTTL}}, 1, ""
		return outcome, obs, nil
	}
	if obs.Type != "string" && obs.Type != "none" {
		// The script says what it did; what the key holds beyond its type
		// (fields, entries) takes the reader's own, bounded, read.
		read, err := c.Fetch(ctx, []string{e.Key})
		if err != nil {
			return outcome, model.Observation{Key: e.Key, Type: obs.Type, PTTL: obs.PTTL, At: obs.At}, nil
		}
		obs = read[0]
	}
	return outcome, obs, nil
}

// expireReply unpacks expireScript's {outcome, type, PTTL, value}.
func expireReply(key string, reply []any) (model.ExpiryOutcome, model.Observation, bool) {
	if len(reply) != 4 {
		return 0, model.Observation{}, false
	}
	name, ok0 := reply[0].(string)
	outcome, ok1 := expireOutcomes[name]
	typ, ok2 := reply[1].(string)
	pttl, ok3 := reply[2].(int64)
	raw, ok4 := reply[3].(string)
	ok4 = ok4 || reply[3] == nil && typ != "string"
	obs := model.Observation{Key: key, Type: typ, Raw: raw, PTTL: pttl, At: time.Now()}
	return outcome, obs, ok0 && ok1 && ok2 && ok3 && ok4
}
