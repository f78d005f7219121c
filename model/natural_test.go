package model

import (
	"cmp"
	"math/big"
	"slices"
	"strings"
	"testing"
)

func TestCompareKeys(t *testing.T) {
	// Each name sorts before the next.
	ordered := []string{
		"",
		"01", // the same number as 1: the bytes decide
		"1",
		"2",
		"10",
		"18446744073709551616", // past what a uint64 holds
		"100000000000000000000000000000",
		"A",
		"a",
		"a0",
		"a00",
		"a01",
		"a1",
		"a1b",
		"a2",
		"a10",
		"a10x",
		"a12",
		"a012x",
		"a:",
		"b",
		"user:1",
		"user:1:login",
		"user:2",
		"user:10",
		"user:10:a",
		"user:10:b",
		"user:100",
		"user:99999999",
		"user:00000000000000000000000100000000",
		"user\xff",
		"Ünï",
	}
	for i, a := range ordered {
		for j, b := range ordered {
			if got, want := CompareKeys(a, b), strings.Compare(strings.Repeat("x", i), strings.Repeat("x", j)); got != want {
				t.Errorf("CompareKeys(%q, %q) = %d, want %d", a, b, got, want)
			}
		}
	}
}

// FuzzCompareKeys checks CompareKeys against the plain model of it and
// that it is an order: antisymmetric, 0 only for equal names, transitive.
func FuzzCompareKeys(f *testing.F) {
	for _, seed := range [][3]string{
		{"user:2", "user:10", "user:100"},
		{"a01", "a1", "a001b"},
		{"x12y", "x1z", "x12"},
		{"0", "00", ""},
		{"ratelimit:user:00001234:login", "ratelimit:user:00001235:login", "ratelimit:user:1234:login"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		for _, p := range [][2]string{{a, b}, {b, c}, {a, c}} {
			x, y := p[0], p[1]
			got := CompareKeys(x, y)
			if want := modelCompareKeys(x, y); got != want {
				t.Fatalf("CompareKeys(%q, %q) = %d, the model says %d", x, y, got, want)
			}
			if back := CompareKeys(y, x); back != -got {
				t.Fatalf("CompareKeys(%q, %q) = %d but the other way %d", x, y, got, back)
			}
			if (got == 0) != (x == y) {
				t.Fatalf("CompareKeys(%q, %q) = %d", x, y, got)
			}
		}
		s := []string{a, b, c}
		slices.SortFunc(s, CompareKeys)
		if CompareKeys(s[0], s[1]) > 0 || CompareKeys(s[1], s[2]) > 0 || CompareKeys(s[0], s[2]) > 0 {
			t.Fatalf("not transitive: %q", s)
		}
	})
}

// KeyPrefix never contradicts CompareKeys, whatever the bytes the names
// share (from), so that a radix sort by it, with CompareKeys among equal
// prefixes, is CompareKeys's order.
func FuzzKeyPrefix(f *testing.F) {
	for _, seed := range [][3]string{
		{"user:", "1", "10"},
		{"user:1", "", "0"},
		{"user:1", "0", ":"},
		{"a", "01", "1"},
		{"a", "012x", "12"},
		{"", "a\x00", "a0"},
		{"", "a", "a\x00"},
		{"rl:", strings.Repeat("9", 300), strings.Repeat("1", 301)},
		{"rl:", strings.Repeat("9", 254), strings.Repeat("1", 255)},
		{"ratelimit:user:000", "01234:login", "1235:login"},
		{"", "Ünï", "user\xff"},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	f.Fuzz(func(t *testing.T, shared, a, b string) {
		x, y := shared+a, shared+b
		for _, from := range []int{0, len(shared) / 2, len(shared)} {
			px, py := KeyPrefix(x, from), KeyPrefix(y, from)
			if c := CompareKeys(x, y); px < py && c >= 0 || px > py && c <= 0 {
				t.Fatalf("from %d: KeyPrefix(%q) = %#x, KeyPrefix(%q) = %#x, but CompareKeys = %d", from, x, px, y, py, c)
			}
		}
	})
}

// Names that differ in their first 8 bytes (a number counting as its
// digits, its length and '0') have different prefixes: the radix sort
// orders them with no compare.
func TestKeyPrefixTellsNamesApart(t *testing.T) {
	for _, p := range [][2]string{{"user:2", "user:10"}, {"a", "b"}, {"u:1", "u:1:"}, {"x9", "x:"}} {
		t.Run(p[0]+" < "+p[1], func(t *testing.T) {
			if KeyPrefix(p[0], 0) >= KeyPrefix(p[1], 0) {
				t.Errorf("KeyPrefix(%q) = %#x, not below KeyPrefix(%q) = %#x", p[0], KeyPrefix(p[0], 0), p[1], KeyPrefix(p[1], 0))
			}
		})
	}
}

func TestCompareKeysDoesNotAllocate(t *testing.T) {
	a, b := "ratelimit:user:00001234:login", "ratelimit:user:1235:login"
	if n := testing.AllocsPerRun(100, func() { CompareKeys(a, b) }); n != 0 {
		t.Errorf("CompareKeys allocates %v times", n)
	}
}

// BenchmarkCompareKeys is one compare of two names of a large keyspace,
// as placing a key by name (or a tie of any sort) makes about twenty.
func BenchmarkCompareKeys(b *testing.B) {
	pairs := [][2]string{
		{benchKey(123456), benchKey(123457)},
		{benchKey(123456), benchKey(923456)},
		{"user:2", "user:10"},
		{"ratelimit:api:login", "ratelimit:api:logout"},
	}
	for b.Loop() {
		for _, p := range pairs {
			CompareKeys(p[0], p[1])
		}
	}
}

// BenchmarkKeyPrefix is the prefix of a name of a large keyspace past
// what all share, as a snapshot notes it for each key as it arrives.
func BenchmarkKeyPrefix(b *testing.B) {
	keys := []string{"ratelimit:user:00012345:login", "ratelimit:user:00099999:login", "ratelimit:api:login", "user:2"}
	for b.Loop() {
		for _, k := range keys {
			KeyPrefix(k, 15)
		}
	}
}

// modelCompareKeys is CompareKeys written out plainly: the names cut into
// runs of digits and single other bytes, runs compared as numbers.
func modelCompareKeys(a, b string) int {
	parts := func(s string) []string {
		var out []string
		for i := 0; i < len(s); {
			j := i + 1
			for '0' <= s[i] && s[i] <= '9' && j < len(s) && '0' <= s[j] && s[j] <= '9' {
				j++
			}
			out = append(out, s[i:j])
			i = j
		}
		return out
	}
	x, y := parts(a), parts(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		xn, xok := new(big.Int).SetString(x[i], 10)
		yn, yok := new(big.Int).SetString(y[i], 10)
		if xok && yok {
			if c := xn.Cmp(yn); c != 0 {
				return c
			}
		} else if c := strings.Compare(x[i], y[i]); c != 0 {
			return c
		}
	}
	if c := cmp.Compare(len(x), len(y)); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}
