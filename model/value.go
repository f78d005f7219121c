package model

import (
	"encoding/json"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Kind says what a stored value is, read the way Redis reads it.
type Kind uint8

const (
	KindNone  Kind = iota // not a number: text, inf, beyond float64, or a key of another type
	KindInt               // a canonical signed 64-bit integer: INCR works on it
	KindFloat             // a finite number INCRBYFLOAT accepts, but INCR does not
)

// Value is a parsed counter value.
type Value struct {
	Kind  Kind
	Int   int64   // when Kind == KindInt
	Float float64 // when Kind == KindFloat (and Int's value as float64 when KindInt); never ±Inf or NaN
}

// ParseValue reads raw as Redis does: a canonical signed 64-bit integer
// (no sign '+', no leading zeros, no spaces, "-0" refused: Redis's
// string2ll) is KindInt; otherwise a finite number INCRBYFLOAT accepts
// (Redis's string2ld: strtold with no leading space, nothing trailing, not
// NaN, at most 5*1024 bytes) that float64 holds is KindFloat; anything else
// is KindNone.
//
// strtold reads more than Go's ParseFloat does and Go reads some things
// strtold does not, so the syntax is checked here: an optional sign, then
// decimal digits with an optional point and e-exponent ("1.5", ".5", "5.",
// "1e3"), or hexadecimal digits after 0x with an optional point and
// p-exponent ("0x10", "0x1.8p3").
//
// A counter holds a finite float64, so that it compares with a limit, has a
// rate and is a JSON number:
//   - "inf" and "infinity" (any case, either sign), which strtold reads,
//     are KindNone: Redis refuses to increment them ("increment would
//     produce NaN or Infinity"), so they count nothing, and a key holding
//     one is not-counter, not stuck. "nan" Redis refuses outright.
//   - A value beyond float64, such as 1e400, is KindNone too. Redis keeps
//     the number in an x86-64 long double, whose range is far wider, and
//     INCRBYFLOAT goes on counting there; but here it would be ±Inf, which
//     no limit, rate or JSON number can take, and no rate limiter counts
//     that high.
//   - A value too small for float64 but not for a long double, such as
//     1e-400, is a counter to Redis, and its Float is 0. One too small for
//     a long double is refused, as strtold's ERANGE makes Redis refuse it.
func ParseValue(raw string) Value {
	if n, ok := parseInt(raw); ok {
		return Value{Kind: KindInt, Int: n, Float: float64(n)}
	}
	if f, ok := parseLongDouble(raw); ok {
		return Value{Kind: KindFloat, Float: f}
	}
	return Value{}
}

// Number reports the value as a float64 and whether it is a number at all.
func (v Value) Number() (float64, bool) {
	switch v.Kind {
	case KindInt:
		return float64(v.Int), true
	case KindFloat:
		return v.Float, true
	case KindNone:
	}
	return 0, false
}

// parseInt is Redis's string2ll: it accepts exactly the strings that
// strconv.FormatInt produces.
func parseInt(s string) (int64, bool) {
	if s == "0" {
		return 0, true
	}
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	// 19 digits hold every int64 and cannot overflow a uint64.
	if len(s) == 0 || len(s) > 19 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	var u uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true // -(1<<63) wraps to math.MinInt64, as wanted
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// maxLongDoubleChars is Redis's MAX_LONG_DOUBLE_CHARS: string2ld refuses
// strings this long or longer.
const maxLongDoubleChars = 5 * 1024

// numeral is a number as strtold reads it: ±mant·base^exp, where mant is
// the digits of intPart and fracPart read as one integer in base 10 or 16
// and exp is the written exponent (a power of ten for decimal numerals, of
// two for hexadecimal ones), not yet corrected for the digits after the
// point.
type numeral struct {
	hex      bool
	intPart  string
	fracPart string
	exp      int64 // clamped to ±maxExp: beyond that, only its sign matters
	hasExp   bool
}

// maxExp bounds written exponents: with at most maxLongDoubleChars digits,
// any exponent past it over- or underflows a long double whatever the
// digits are.
const maxExp = 1 << 30

// scanNumeral parses s as glibc's strtold does in the C locale, and reports
// whether strtold would consume all of s. Leading whitespace, which strtold
// skips but Redis refuses, is refused; NaN, which Redis refuses, is too, and
// so are "inf" and "infinity", which are no counter (see ParseValue).
func scanNumeral(s string) (n numeral, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := s[i:]
	digit, expChar := isDigit, byte('e')
	if len(rest) > 2 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') {
		// strtold reads "0x" as a hexadecimal prefix only when a hex digit
		// follows it (possibly after the point); otherwise it reads the
		// "0" alone and stops at the "x", which leaves text unread.
		n.hex = true
		digit, expChar = isHexDigit, 'p'
		i += 2
	}
	start := i
	for i < len(s) && digit(s[i]) {
		i++
	}
	n.intPart = s[start:i]
	if i < len(s) && s[i] == '.' {
		i++
		start = i
		for i < len(s) && digit(s[i]) {
			i++
		}
		n.fracPart = s[start:i]
	}
	if n.intPart == "" && n.fracPart == "" {
		return n, false
	}
	if i < len(s) && (s[i]|0x20) == expChar {
		i++
		negExp := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			negExp = s[i] == '-'
			i++
		}
		if i == len(s) {
			return n, false // an exponent marker with no digits: strtold stops before it
		}
		for ; i < len(s) && isDigit(s[i]); i++ {
			if n.exp < maxExp {
				n.exp = n.exp*10 + int64(s[i]-'0')
			}
		}
		n.exp = min(n.exp, maxExp)
		if negExp {
			n.exp = -n.exp
		}
		n.hasExp = true
	}
	return n, i == len(s)
}

// parseLongDouble is Redis's string2ld (what INCRBYFLOAT accepts) with the
// result rounded to float64, for finite numbers that float64 holds (see
// ParseValue): infinities and values beyond float64 are refused.
func parseLongDouble(s string) (float64, bool) {
	if len(s) == 0 || len(s) >= maxLongDoubleChars {
		return 0, false
	}
	n, ok := scanNumeral(s)
	if !ok {
		return 0, false
	}
	text := s
	if n.hex && !n.hasExp {
		text += "p0" // Go wants a binary exponent after hexadecimal digits
	}
	// The syntax is checked, so the only error left is ErrRange: f is ±Inf
	// for a value beyond float64, or 0 for one too small for it.
	f, _ := strconv.ParseFloat(text, 64)
	switch {
	case math.IsInf(f, 0):
		return 0, false
	case f == 0 && !n.isZero():
		// Too small for float64, but perhaps not for a long double.
		return 0, !n.underflowsLongDouble()
	}
	return f, true
}

func (n numeral) isZero() bool {
	return strings.Trim(n.intPart, "0") == "" && strings.Trim(n.fracPart, "0") == ""
}

// longDoubleZeroExp is where the x86-64 long double (x87 extended
// precision: exponents down to -16382 for normal numbers, -16445 for
// subnormal ones) ends under glibc strtold's rounding to nearest, ties to
// even: a value of at most 2^-16446, half the smallest subnormal, rounds to
// zero with ERANGE.
const longDoubleZeroExp = 16446

// underflowsLongDouble reports whether the nonzero value of n, too small
// for a float64, is rounded to zero in an x86-64 long double as well.
func (n numeral) underflowsLongDouble() bool {
	// value = mant·expBase^scale, mant being the digits without the point.
	digitBase, expBase, log2ExpBase := 10, int64(10), math.Log2(10)
	scale := n.exp - int64(len(n.fracPart))
	if n.hex {
		digitBase, expBase, log2ExpBase = 16, 2, 1
		scale = n.exp - 4*int64(len(n.fracPart))
	}
	mant, _ := new(big.Int).SetString(n.intPart+n.fracPart, digitBase)

	// log2(value) lies in [lo, lo+1): settle the clear cases without big
	// powers (the exponent may be in the billions).
	lo := float64(mant.BitLen()-1) + float64(scale)*log2ExpBase
	switch {
	case lo < -16460:
		return true
	case lo > -16440:
		return false
	}

	// Near the limit: compare value = num/den exactly with 2^-16446.
	num, den := mant, big.NewInt(1)
	pow := new(big.Int).Exp(big.NewInt(expBase), big.NewInt(max(scale, -scale)), nil)
	if scale >= 0 {
		num.Mul(num, pow)
	} else {
		den = pow
	}
	return num.Lsh(num, longDoubleZeroExp).Cmp(den) <= 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// MaxDecoded is the most bytes of a string Read decodes as JSON or
// msgpack: a limiter's state is a few fields, and a larger value is no
// count worth the parse.
const MaxDecoded = 4 << 10

// encoding is how a string holds an object that may carry a count.
type encoding uint8

const (
	encodedNot     encoding = iota // neither a JSON object nor a msgpack map
	encodedJSON                    // starts as a JSON object does
	encodedMsgpack                 // starts with a msgpack map header
)

// Field names of a decoded object that hold its count, or what is left
// (a bucket's tokens), compared as fieldIs does, in the order they are
// looked for: gofiber's limiter writes currHits (its prevHits is the
// window before), and mennanov/limiters' buckets available.
var (
	countFields = []string{"count", "hits", "currhits", "current", "totalhits", "requests", "requestcount", "hitcount", "used"}
	leftFields  = []string{"tokens", "tokensleft", "available", "remaining"}
)

// decodedCount is the count a JSON object or msgpack map holds.
type decodedCount struct {
	field string // the field's name as written
	value Value
	left  bool // a field of leftFields: what is left, not what was used
}

// encodingOf is how raw is encoded, from its first bytes: a JSON object
// when it is text starting with '{' (after white space), a msgpack map
// when its first byte is a map header. Neither when it is longer than
// MaxDecoded.
func encodingOf(raw string) encoding {
	if len(raw) == 0 || len(raw) > MaxDecoded {
		return encodedNot
	}
	switch c := raw[0]; {
	case c >= 0x80 && c <= 0x8f, c == 0xde, c == 0xdf: // fixmap, map 16, map 32
		return encodedMsgpack
	case c == '{' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
		if strings.HasPrefix(strings.TrimLeft(raw, " \t\n\r"), "{") {
			return encodedJSON
		}
	}
	return encodedNot
}

// decodeCount reads raw, encoded as enc, for its count: the field named
// field when one is given (exactly as written), else the first of
// countFields, then of leftFields, that holds a finite number (of two
// spellings of one name, the first in byte order). ok is false when raw
// does not decode whole, or holds no such field.
func decodeCount(raw string, enc encoding, field string) (d decodedCount, ok bool) {
	var fields map[string]Value
	switch enc {
	case encodedJSON:
		fields, ok = jsonNumbers(raw, field)
	case encodedMsgpack:
		fields, ok = msgpackNumbers(raw, field)
	case encodedNot: // ok stays false: nothing to decode
	}
	if !ok {
		return decodedCount{}, false
	}
	if field != "" {
		v, ok := fields[field]
		return decodedCount{field: field, value: v}, ok
	}
	for i, canon := range append(countFields[:len(countFields):len(countFields)], leftFields...) {
		found := false
		for name, v := range fields {
			if fieldIs(name, canon) && (!found || name < d.field) {
				d, found = decodedCount{field: name, value: v, left: i >= len(countFields)}, true
			}
		}
		if found {
			return d, true
		}
	}
	return decodedCount{}, false
}

// wantedField reports whether a decoded field named name may be the
// count: the one the rule names, else one of the known names.
func wantedField(name, field string) bool {
	if field != "" {
		return name == field
	}
	for _, canon := range countFields {
		if fieldIs(name, canon) {
			return true
		}
	}
	for _, canon := range leftFields {
		if fieldIs(name, canon) {
			return true
		}
	}
	return false
}

// jsonNumbers is the fields of the JSON object raw that wantedField
// takes and that hold a finite number; ok is false when raw is no JSON
// object.
func jsonNumbers(raw, field string) (map[string]Value, bool) {
	var object map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &object) != nil || object == nil {
		return nil, false
	}
	fields := map[string]Value{}
	for name, v := range object {
		if !wantedField(name, field) {
			continue
		}
		// A JSON number is a number Redis would read (ParseValue), and
		// its other values (a string, true, an object) none.
		if n := ParseValue(string(v)); n.Kind != KindNone {
			fields[name] = n
		}
	}
	return fields, true
}

// msgpackNumbers is the fields of the msgpack map raw that wantedField
// takes and that hold a finite number; ok is false when raw is not one
// map with string keys, read to its last byte. Other fields are skipped,
// not decoded, and every length the decoder meets is bounded by the
// library's own limit on what it allocates before it reads.
func msgpackNumbers(raw, field string) (map[string]Value, bool) {
	r := strings.NewReader(raw)
	dec := msgpack.NewDecoder(r)
	n, err := dec.DecodeMapLen()
	if err != nil || n < 0 {
		return nil, false
	}
	fields := map[string]Value{}
	for range n {
		name, err := dec.DecodeString()
		if err != nil {
			return nil, false
		}
		c, err := dec.PeekCode()
		if err != nil {
			return nil, false
		}
		if !wantedField(name, field) || !isMsgpackNumber(c) {
			if dec.Skip() != nil {
				return nil, false
			}
			continue
		}
		x, err := dec.DecodeInterfaceLoose()
		if err != nil {
			return nil, false
		}
		if v := msgpackValue(x); v.Kind != KindNone {
			fields[name] = v
		}
	}
	return fields, r.Len() == 0
}

// isMsgpackNumber reports whether c starts a msgpack integer or float.
func isMsgpackNumber(c byte) bool {
	switch c {
	case msgpcode.Uint8, msgpcode.Uint16, msgpcode.Uint32, msgpcode.Uint64,
		msgpcode.Int8, msgpcode.Int16, msgpcode.Int32, msgpcode.Int64,
		msgpcode.Float, msgpcode.Double:
		return true
	}
	return msgpcode.IsFixedNum(c)
}

// msgpackValue is a number DecodeInterfaceLoose decoded as a Value: an
// integer that int64 holds is KindInt, others and floats KindFloat when
// finite.
func msgpackValue(x any) Value {
	switch n := x.(type) {
	case int64:
		return Value{Kind: KindInt, Int: n, Float: float64(n)}
	case uint64:
		if n <= math.MaxInt64 {
			return Value{Kind: KindInt, Int: int64(n), Float: float64(n)}
		}
		return Value{Kind: KindFloat, Float: float64(n)}
	case float64:
		if !math.IsInf(n, 0) && !math.IsNaN(n) {
			return Value{Kind: KindFloat, Float: n}
		}
	}
	return Value{}
}
