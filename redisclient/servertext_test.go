package redisclient_test

import (
	"regexp"
	"strings"
)

// Servers word the same refusal differently: Redis 7.0 says "NOPERM this
// user has no permissions to run the 'evalsha' command", Redis 8 and
// Valkey 8 "NOPERM User no-eval has no permissions to run the 'evalsha'
// command"; "access one of the keys used as arguments" is "access a key".
// So a test's want may hold "…" for words that vary, and spells out what
// every server says (the error code, the command) and what countertop adds.

// says reports whether got holds want, each "…" in it standing for any words.
func says(got, want string) bool {
	return sentence(want).MatchString(got)
}

// saysExactly is says for all of got.
func saysExactly(got, want string) bool {
	return regexp.MustCompile("^(?:" + sentence(want).String() + ")$").MatchString(got)
}

func sentence(want string) *regexp.Regexp {
	parts := strings.Split(want, "…")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(strings.Join(parts, ".*"))
}
