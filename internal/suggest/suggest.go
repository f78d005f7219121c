// Package suggest guesses what a mistyped word was meant to be, for the
// "did you mean" of an unknown command, flag or config key.
package suggest

import "strings"

// Nearest returns the word of known nearest to typed, ignoring case, if it
// is near enough to be a typo of it (a third of typed's letters wrong, at
// least one); "" if none is.
func Nearest(typed string, known []string) string {
	guess, best := "", max(1, len(typed)/3)+1
	for _, w := range known {
		if d := editDistance(strings.ToLower(typed), w); d < best {
			guess, best = w, d
		}
	}
	return guess
}

// editDistance is the number of bytes to insert, delete or replace, or of
// neighbours to swap, to make a into b: a swap ("mdoe") is as common a typo
// as a wrong letter.
func editDistance(a, b string) int {
	// prev2, prev and cur are rows i-2, i-1 and i of the distances from
	// a[:i] to every b[:j].
	prev2, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
