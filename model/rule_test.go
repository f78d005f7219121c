package model

import (
	"strings"
	"testing"
)

// globCases are checked here, and were checked against a real Redis 7.0
// (KEYS pattern) when they were written.
var globCases = []struct {
	pattern, key string
	want         bool
}{
	{"ratelimit:*", "ratelimit:ip:203.0.113.5", true},
	{"ratelimit:*", "ratelimit:", true},
	{"ratelimit:*", "views:home", false},
	{"*", "anything", true},
	{"*", "", true}, // SCAN and KEYS let the lone "*" through unmatched
	{"**", "", false},
	{"", "", true},
	{"", "a", false},
	{"?", "", false},
	{"a*", "a", true},
	{"a**", "a", true},
	{"*a", "a", true},
	{"*a", "ba", true},
	{"*a", "ab", false},
	{"a*b*c", "axxbyyc", true},
	{"a*b*c", "axxbyy", false},
	{"*ab", "aab", true},
	{"user:?", "user:1", true},
	{"user:?", "user:12", false},
	{"user:?", "user:", false},
	{"h?llo", "héllo", false}, // '?' is one byte, and é is two
	{"h??llo", "héllo", true},
	{"[abc]", "b", true},
	{"[abc]", "d", false},
	{"[^abc]", "d", true},
	{"[^abc]", "a", false},
	{"[a-z]", "m", true},
	{"[a-z]", "M", false},
	{"[z-a]", "m", true}, // reversed ranges are swapped
	{"[0-9]x", "5x", true},
	{"[]", "]", false},  // "[]" is an empty class, which nothing matches,
	{"[]]", "]", false}, // not the start of a class holding ']'
	{"[]]", "]]", false},
	{"[\\]]", "]", true},
	{"[\\^a]", "^", true},
	{"[a-]", "-", false}, // "a-]" is the range ']'..'a', and the class runs on
	{"[a-]", "_", true},
	{"[a-]x", "_", true}, // ... to the end of the pattern, taking "x" with it
	{"[ab", "b", true},   // an unterminated class ends the pattern
	{"[ab", "bc", false},
	{"[", "[", false},
	{"[^", "x", true},
	{"[\\", "\\", true},
	{"a\\*b", "a*b", true},
	{"a\\*b", "axb", false},
	{"a\\?", "a?", true},
	{"a\\[b", "a[b", true},
	{"\\\\", "\\", true},
	{"a\\", "a\\", true}, // a trailing backslash is itself
	{"\\a", "a", true},
	{"[a-\xff]", "\x80", false}, // signed bytes: "a-\xff" is the range -1..'a'
	{"[a-\xff]", "\xff", true},
	{"[a-\xff]", "A", true},
	{"[\x80-\xff]", "\x90", true},
	{"\xe4\xbd\xa0*", "\xe4\xbd\xa0\xe5\xa5\xbd", true},
	// Redis gives up past 1000 nested '*': the 1001st may only end the pattern.
	{strings.Repeat("*a", 1000) + "*", strings.Repeat("a", 1001), true},
	{strings.Repeat("*a", 1000) + "*a", strings.Repeat("a", 1001), false},
	{strings.Repeat("*a", 999) + "*a", strings.Repeat("a", 1001), true},
}

func TestGlobMatch(t *testing.T) {
	for _, tc := range globCases {
		t.Run(caseName(tc.pattern)+" "+caseName(tc.key), func(t *testing.T) {
			if got := GlobMatch(tc.pattern, tc.key); got != tc.want {
				t.Errorf("GlobMatch(%.40q, %.40q) = %v, want %v", tc.pattern, tc.key, got, tc.want)
			}
		})
	}
}

// A backtracking matcher takes exponential time here; this one must not.
func TestGlobMatchPathological(t *testing.T) {
	key := strings.Repeat("a", 20000)
	for _, pattern := range []string{
		strings.Repeat("*a", 30) + "*b",
		"*a*a*a*a*a*a*a*a*a*a*b",
		strings.Repeat("?", 19999) + "*b",
	} {
		t.Run(caseName(pattern), func(t *testing.T) {
			if GlobMatch(pattern, key) {
				t.Errorf("%.20q... matched a key without b", pattern)
			}
		})
	}
}

func TestRulesMatch(t *testing.T) {
	rules := Rules{List: []Rule{
		{Pattern: "ratelimit:login:*", Limit: 5},
		{Pattern: "ratelimit:*", Limit: 100},
		{Pattern: "views:*"},
	}, Fallback: Rule{Limit: 7, ExpectTTL: true}}
	for key, want := range map[string]int{
		"ratelimit:login:bob": 0, // the first match wins over the wider rule
		"ratelimit:ip:1":      1,
		"views:home":          2,
		"other":               -1,
	} {
		t.Run(key, func(t *testing.T) {
			if got := rules.Match(key); got != want {
				t.Errorf("Match(%q) = %d, want %d", key, got, want)
			}
		})
	}
	if got := rules.At(-1); got != rules.Fallback {
		t.Errorf("At(-1) = %+v, want the fallback", got)
	}
	if got := rules.At(1).Limit; got != 100 {
		t.Errorf("At(1).Limit = %v", got)
	}
}

// globReference is a plain dynamic program for patterns of '*', '?' and
// literal bytes, with Redis's rule for the empty key.
func globReference(pattern, key string) bool {
	if key == "" {
		return pattern == "" || pattern == "*"
	}
	// m[j]: pattern[:i] matches key[:j].
	m := make([]bool, len(key)+1)
	m[0] = true
	for i := 0; i < len(pattern); i++ {
		next := make([]bool, len(key)+1)
		for j := 0; j <= len(key); j++ {
			switch pattern[i] {
			case '*':
				next[j] = m[j] || (j > 0 && next[j-1])
			case '?':
				next[j] = j > 0 && m[j-1]
			default:
				next[j] = j > 0 && m[j-1] && key[j-1] == pattern[i]
			}
		}
		m = next
	}
	return m[len(key)]
}

func FuzzGlobMatch(f *testing.F) {
	for _, tc := range globCases {
		if len(tc.pattern) < 100 {
			f.Add(tc.pattern, tc.key)
		}
	}
	f.Add("*a*b?c*", "xxaybzcc")
	f.Fuzz(func(t *testing.T, pattern, key string) {
		got := GlobMatch(pattern, key)
		if !strings.ContainsAny(pattern, "[\\") && strings.Count(pattern, "*") <= maxGlobStars {
			if want := globReference(pattern, key); got != want {
				t.Fatalf("GlobMatch(%q, %q) = %v, reference %v", pattern, key, got, want)
			}
		}
		if key != "" && !strings.ContainsAny(key, "*?[\\") && !GlobMatch(key, key) {
			t.Fatalf("%q does not match itself", key)
		}
	})
}
