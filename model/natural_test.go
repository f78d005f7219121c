package model

import (
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
