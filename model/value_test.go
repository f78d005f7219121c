package model

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// parseCases are checked here, and were checked against a real Redis 7.0
// (INCR and INCRBYFLOAT on each string, x86-64) when they were written;
// but for values beyond float64, which Redis's long double holds and
// countertop does not count (see ParseValue).
var parseCases = []struct {
	raw  string
	kind Kind
	num  float64 // Float (for KindInt, the int is checked against raw)
}{
	// INCR's integers: canonical decimal int64 only.
	{"0", KindInt, 0},
	{"1", KindInt, 1},
	{"-1", KindInt, -1},
	{"42", KindInt, 42},
	{"9223372036854775807", KindInt, 9223372036854775807},
	{"-9223372036854775808", KindInt, -9223372036854775808},
	// Numbers INCR refuses but INCRBYFLOAT takes.
	{"9223372036854775808", KindFloat, 9223372036854775808},
	{"-9223372036854775809", KindFloat, -9223372036854775809},
	{"007", KindFloat, 7},
	{"3.5", KindFloat, 3.5},
	{"-0", KindFloat, 0},
	{"+1", KindFloat, 1},
	{"+1.5", KindFloat, 1.5},
	{".5", KindFloat, 0.5},
	{"5.", KindFloat, 5},
	{"1e3", KindFloat, 1000},
	{"1E+3", KindFloat, 1000},
	{"+.5e-3", KindFloat, 0.0005},
	{"0.1", KindFloat, 0.1},
	{"0x10", KindFloat, 16},
	{"0X1P-2", KindFloat, 0.25},
	{"0x1p3", KindFloat, 8},
	{"0x.8", KindFloat, 0.5},
	{"0x1.", KindFloat, 1},
	{"-0x1e3", KindFloat, -0x1e3}, // 'e' is a hex digit here
	// The ends of float64.
	{"1.7976931348623157e308", KindFloat, math.MaxFloat64},
	{"-0x1.fffffffffffffp1023", KindFloat, -math.MaxFloat64},
	{"5e-324", KindFloat, math.SmallestNonzeroFloat64},
	// Too small for float64 but inside a long double: Redis counts on
	// them, and they are 0 here.
	{"1e-400", KindFloat, 0},
	{"1.9e-4951", KindFloat, 0},  // rounds to the smallest subnormal long double
	{"0x1p-16445", KindFloat, 0}, // the smallest subnormal long double itself
	// Infinite: strtold reads them, but Redis refuses to increment them
	// ("increment would produce NaN or Infinity"), so they count nothing.
	{"inf", KindNone, 0},
	{"+inf", KindNone, 0},
	{"-inf", KindNone, 0},
	{"INF", KindNone, 0},
	{"infinity", KindNone, 0},
	{"-Infinity", KindNone, 0},
	{"+INFINITY", KindNone, 0},
	// Too large for float64: Redis's long double holds them, and INCRBYFLOAT
	// goes on counting there, but here they would be ±Inf (no JSON number,
	// no limit to compare): a counter is a finite float64.
	{"1e400", KindNone, 0},
	{"-1e400", KindNone, 0},
	{"1.7976931348623159e308", KindNone, 0}, // rounds up past the largest float64
	{"0x1p1024", KindNone, 0},
	{"1.18973149535723176502e4932", KindNone, 0}, // the largest long double
	// Beyond a long double: strtold's ERANGE, which Redis refuses.
	{"1.2e4932", KindNone, 0},
	{"1.8e-4951", KindNone, 0},
	{"0x1p-16446", KindNone, 0}, // half the smallest subnormal: a tie, rounded to 0
	{"0x1p16384", KindNone, 0},
	{"1e999999999999999999999", KindNone, 0},
	{"1e-999999999999999999999", KindNone, 0},
	// Not numbers.
	{"", KindNone, 0},
	{"hello", KindNone, 0},
	{" 1", KindNone, 0},
	{"1 ", KindNone, 0},
	{"\t1", KindNone, 0},
	{"1\n", KindNone, 0},
	{"1\x00", KindNone, 0},
	{"-", KindNone, 0},
	{"+", KindNone, 0},
	{".", KindNone, 0},
	{"e3", KindNone, 0},
	{"1e", KindNone, 0},
	{"1e+", KindNone, 0},
	{"--1", KindNone, 0},
	{"1_000", KindNone, 0}, // Go's ParseFloat takes this; strtold does not
	{"0x1_0", KindNone, 0},
	{"0x", KindNone, 0},
	{"0x.", KindNone, 0},
	{"0xp1", KindNone, 0},
	{"0x1p", KindNone, 0},
	{"00x1", KindNone, 0},
	{"0b101", KindNone, 0},
	{"nan", KindNone, 0},
	{"-NaN", KindNone, 0},
	{"+nan", KindNone, 0},
	{"NAN", KindNone, 0},
	{"nan(123)", KindNone, 0},
	{"infin", KindNone, 0},
	{"infinityy", KindNone, 0},
	{"1,5", KindNone, 0},
	{"١", KindNone, 0}, // an Arabic-Indic digit
	{strings.Repeat("1", 5*1024), KindNone, 0},
}

func TestParseValue(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(caseName(tc.raw), func(t *testing.T) {
			v := ParseValue(tc.raw)
			if v.Kind != tc.kind {
				t.Errorf("ParseValue(%.40q).Kind = %d, want %d", tc.raw, v.Kind, tc.kind)
				return
			}
			switch tc.kind {
			case KindInt:
				if strconv.FormatInt(v.Int, 10) != tc.raw || v.Float != float64(v.Int) {
					t.Errorf("ParseValue(%q) = %+v", tc.raw, v)
				}
			case KindFloat:
				if v.Float != tc.num {
					t.Errorf("ParseValue(%q).Float = %v, want %v", tc.raw, v.Float, tc.num)
				}
			case KindNone: // no number: its kind is all there is to compare
			}
		})
	}
}

func TestParseValueLongestFloat(t *testing.T) {
	// string2ld takes up to 5*1024-1 bytes.
	long := "1." + strings.Repeat("0", 5*1024-3)
	if v := ParseValue(long); v.Kind != KindFloat || v.Float != 1 {
		t.Errorf("a %d-byte float: got %+v", len(long), v)
	}
}

func TestValueNumber(t *testing.T) {
	if n, ok := ParseValue("-12").Number(); !ok || n != -12 {
		t.Errorf("int: %v %v", n, ok)
	}
	if n, ok := ParseValue("2.5").Number(); !ok || n != 2.5 {
		t.Errorf("float: %v %v", n, ok)
	}
	for _, raw := range []string{"x", "inf", "-inf", "nan", "1e400"} {
		t.Run(raw, func(t *testing.T) {
			if n, ok := ParseValue(raw).Number(); ok {
				t.Errorf("%q is the number %v", raw, n)
			}
		})
	}
}

func FuzzParseValue(f *testing.F) {
	for _, tc := range parseCases {
		f.Add(tc.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		v := ParseValue(raw)
		switch v.Kind {
		case KindInt:
			if strconv.FormatInt(v.Int, 10) != raw {
				t.Fatalf("%q is KindInt %d, which is written differently", raw, v.Int)
			}
			if v.Float != float64(v.Int) {
				t.Fatalf("%q: Float %v for Int %d", raw, v.Float, v.Int)
			}
		case KindFloat:
			if math.IsNaN(v.Float) || math.IsInf(v.Float, 0) {
				t.Fatalf("%q is KindFloat %v: a counter is a finite float64", raw, v.Float)
			}
		case KindNone: // checked below, against what Go reads
		}
		if n, ok := v.Number(); ok && (math.IsNaN(n) || math.IsInf(n, 0)) {
			t.Fatalf("%q is the number %v", raw, n)
		}
		// What Go reads as infinite or NaN ("inf", "Infinity", "nan", or
		// beyond float64: "1e400") is no number here, in any case.
		if f, err := strconv.ParseFloat(raw, 64); (err == nil || errors.Is(err, strconv.ErrRange)) &&
			(math.IsInf(f, 0) || math.IsNaN(f)) && v.Kind != KindNone {
			t.Fatalf("%q reads as %v but is Kind %d", raw, f, v.Kind)
		}
		if v.Kind != KindNone && raw != strings.TrimLeftFunc(raw, unicode.IsSpace) {
			t.Fatalf("%q starts with a space but is a number", raw)
		}
		if n, err := strconv.ParseInt(raw, 10, 64); err == nil && strconv.FormatInt(n, 10) == raw && v.Kind != KindInt {
			t.Fatalf("%q is a canonical integer but Kind %d", raw, v.Kind)
		}
		// Where Go and strtold read the same syntax, in float64's range,
		// they agree on the value.
		if f, err := strconv.ParseFloat(raw, 64); err == nil && f != 0 && !math.IsInf(f, 0) &&
			!strings.ContainsAny(raw, "_xXnN") && v.Float != f {
			t.Fatalf("%q: Float %v, ParseFloat %v", raw, v.Float, f)
		}
	})
}

func BenchmarkParseValue(b *testing.B) {
	for _, raw := range []string{"12345", "3.25", "ratelimit"} {
		b.Run(raw, func(b *testing.B) {
			for b.Loop() {
				ParseValue(raw)
			}
		})
	}
}
