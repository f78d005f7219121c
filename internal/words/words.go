// Package words spells the bits of English that countertop's messages
// share, so that config's errors and the command line's say them alike.
package words

import "strings"

// And returns words as a list: "a", "a and b", "a, b and c".
func And(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// Flag returns a flag's name as typed: -h for one letter, as redis-cli
// spells them, --url for more.
func Flag(name string) string {
	if len(name) == 1 {
		return "-" + name
	}
	return "--" + name
}
