package model

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// Kind says what a stored value is, read the way Redis reads it.
type Kind uint8

const (
	KindNone  Kind = iota // not a number (text, or a key of another type)
	KindInt               // a canonical signed 64-bit integer: INCR works on it
	KindFloat             // a number INCRBYFLOAT accepts, but INCR does not
)

// Value is a parsed counter value.
type Value struct {
	Kind  Kind
	Int   int64   // when Kind == KindInt
	Float float64 // when Kind == KindFloat (and Int's value as float64 when KindInt)
}

// ParseValue reads raw exactly as Redis does: a canonical signed 64-bit
// integer (no sign '+', no leading zeros, no spaces, "-0" refused: Redis's
// string2ll) is KindInt; otherwise a string INCRBYFLOAT accepts (Redis's
// string2ld: strtold with no leading space, nothing trailing, not NaN, at
// most 5*1024 bytes) is KindFloat; anything else is KindNone.
//
// strtold reads more than Go's ParseFloat does and Go reads some things
// strtold does not, so the syntax is checked here: an optional sign, then
// decimal digits with an optional point and e-exponent ("1.5", ".5", "5.",
// "1e3"), hexadecimal digits after 0x with an optional point and
// p-exponent ("0x10", "0x1.8p3"), or "inf"/"infinity" in any case. Redis
// keeps the number in an x86-64 long double, whose range is far wider than
// float64's: a value such as 1e400 is a valid counter there, and its Float
// is ±Inf here; a value such as 1e-400 is too, and its Float is 0. Only
// values that overflow or underflow the long double itself are refused, as
// strtold's ERANGE makes Redis refuse them.
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
	neg      bool
	inf      bool
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
// skips but Redis refuses, is refused; NaN, which Redis refuses, is too.
func scanNumeral(s string) (n numeral, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		n.neg = s[i] == '-'
		i++
	}
	rest := s[i:]
	if equalFoldASCII(rest, "inf") || equalFoldASCII(rest, "infinity") {
		n.inf = true
		return n, true
	}
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

// parseLongDouble is Redis's string2ld (what INCRBYFLOAT accepts), with the
// result rounded to float64.
func parseLongDouble(s string) (float64, bool) {
	if len(s) == 0 || len(s) >= maxLongDoubleChars {
		return 0, false
	}
	n, ok := scanNumeral(s)
	if !ok {
		return 0, false
	}
	if n.inf {
		if n.neg {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	}
	text := s
	if n.hex && !n.hasExp {
		text += "p0" // Go wants a binary exponent after hexadecimal digits
	}
	// The syntax is checked, so the only error left is ErrRange, with f ±Inf.
	f, _ := strconv.ParseFloat(text, 64)
	if math.IsInf(f, 0) || (f == 0 && !n.isZero()) {
		// Beyond float64, but perhaps not beyond a long double.
		return f, n.fitsLongDouble()
	}
	return f, true
}

func (n numeral) isZero() bool {
	return strings.Trim(n.intPart, "0") == "" && strings.Trim(n.fracPart, "0") == ""
}

// Limits of the x86-64 long double (x87 extended precision: a 64-bit
// significand; exponents down to -16382 for normal numbers, -16445 for
// subnormal ones) under glibc strtold's rounding to nearest, ties to even:
//   - a value overflows to ±HUGE_VALL when it is at least halfway between
//     the largest finite long double, (2^64-1)·2^16320, and 2^16384;
//   - it underflows to zero when it is at most half the smallest subnormal
//     long double, 2^-16445.
var (
	longDoubleOverflow = new(big.Int).Lsh(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 65), big.NewInt(1)), 16319)
	longDoubleZeroExp  = uint(16446) // values up to 2^-16446 round to zero
)

// fitsLongDouble reports whether the finite, nonzero value of n is rounded
// neither to infinity nor to zero in an x86-64 long double.
func (n numeral) fitsLongDouble() bool {
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
	case lo > 16400 || lo < -16460:
		return false
	case lo < 16380 && lo > -16440:
		return true
	}

	// Near a limit: compare value = num/den exactly with each bound.
	num, den := mant, big.NewInt(1)
	pow := new(big.Int).Exp(big.NewInt(expBase), big.NewInt(max(scale, -scale)), nil)
	if scale >= 0 {
		num.Mul(num, pow)
	} else {
		den = pow
	}
	if num.Cmp(new(big.Int).Mul(den, longDoubleOverflow)) >= 0 {
		return false
	}
	return new(big.Int).Lsh(num, longDoubleZeroExp).Cmp(den) > 0
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isHexDigit(c byte) bool {
	return isDigit(c) || ('a' <= c|0x20 && c|0x20 <= 'f')
}

// equalFoldASCII reports whether s equals the lower-case ASCII word lower,
// ignoring ASCII case.
func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i]|0x20 != lower[i] {
			return false
		}
	}
	return true
}
