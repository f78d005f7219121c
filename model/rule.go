package model

import (
	"math"
	"time"
)

// DefaultWarnAt is the fraction of the limit from which a counter is "warn".
const DefaultWarnAt = 0.8

// Rule says what the counters matching Pattern are: their limit, their
// window, whether they are expected to expire, and how they are laid out.
type Rule struct {
	Pattern   string        // Redis glob (as SCAN MATCH and KEYS read it)
	Limit     float64       // 0: no limit known
	Window    time.Duration // 0: no window known
	WarnAt    float64       // fraction of Limit; 0 means DefaultWarnAt
	ExpectTTL bool          // false for counters meant to live forever
	Layout    Layout        // LayoutAuto: detected per key (see Read)
	Field     string        // a hash field read as the counter; "": none
	JSONField string        // the field of a JSON object or msgpack map read as the count; "": the known names
	// FieldTTLs says the hashes it matches count per field, each field
	// with a TTL of its own (field_ttls): on a server that has field TTLs
	// they are read field by field (Rows) even before any field has one,
	// and an increment gives its field the window, never the key.
	FieldTTLs bool
}

// Rules is the ordered rule list plus the fallback for keys no rule covers
// (built from --limit and --window). The first rule whose pattern matches wins.
type Rules struct {
	List     []Rule
	Fallback Rule // Pattern is ignored; ExpectTTL normally true
}

// Match returns the index in r.List of the first rule whose pattern matches
// key, or -1 when none does (the Fallback applies).
func (r *Rules) Match(key string) int {
	for i := range r.List {
		if GlobMatch(r.List[i].Pattern, key) {
			return i
		}
	}
	return -1
}

// matchIndex is Match as a Counter's Rule holds it: -1 also past
// math.MaxInt16, which no config reaches.
func (r *Rules) matchIndex(key string) int16 {
	i := r.Match(key)
	if i > math.MaxInt16 {
		return -1
	}
	return int16(i)
}

// At returns the rule for an index Match returned (the Fallback for -1).
func (r *Rules) At(i int) Rule {
	if i < 0 || i >= len(r.List) {
		return r.Fallback
	}
	return r.List[i]
}

// WindowOf is the window of rule, one of r's: its own, else the
// fallback's (--window, or [defaults] window), which rules without one
// take too; 0 when neither has one. It is the TTL a repair gives.
func (r *Rules) WindowOf(rule Rule) time.Duration {
	if rule.Window > 0 {
		return rule.Window
	}
	return r.Fallback.Window
}

// windowAt is WindowOf the rule at index i, without copying the rule: a
// Store asks it of a key at each reading.
func (r *Rules) windowAt(i int) time.Duration {
	if i >= 0 && i < len(r.List) && r.List[i].Window > 0 {
		return r.List[i].Window
	}
	return r.Fallback.Window
}

// layoutAt is the layout of the rule at index i, without copying the rule.
func (r *Rules) layoutAt(i int) Layout {
	if i >= 0 && i < len(r.List) {
		return r.List[i].Layout
	}
	return r.Fallback.Layout
}

// Effective is the rule at index i (as At gives it) with the window its
// keys have (as WindowOf gives it): what Read and Evaluate take.
func (r *Rules) Effective(i int) Rule {
	rule := r.At(i)
	rule.Window = r.WindowOf(rule)
	return rule
}

// GlobMatch reports whether key matches pattern with Redis's glob rules
// (stringmatchlen): '*', '?', '[abc]', '[^a]', '[a-z]', and '\' escapes.
//
// It reads patterns byte for byte as Redis 7 does, quirks included: a range
// may be reversed ("[z-a]" is "[a-z]"); an unterminated class runs to the
// end of the pattern ("[ab" is "[ab]"); a '\' at the very end is a
// literal backslash; an empty key matches only the empty pattern and the
// lone "*" (SCAN and KEYS skip matching for "*"); and, like Redis's guard
// against deep recursion, a pattern whose 1001st run of '*' is followed by
// anything matches nothing. Range ends compare as signed bytes, as Redis
// built for x86-64 compares them.
//
// Unlike Redis's recursive matcher it never revisits a '*' once a later
// one has matched, so it runs in O(len(pattern)·len(key)) time at worst.
func GlobMatch(pattern, key string) bool {
	if key == "" {
		return pattern == "" || pattern == "*"
	}
	p, k := 0, 0
	// Where to resume after a mismatch: the pattern just past the last '*'
	// seen, and the key position that '*' will swallow up to next.
	backP, backK := -1, 0
	stars, lastStar := 0, -1 // runs of '*' reached so far; the start of the furthest one
	for k < len(key) {
		if p < len(pattern) {
			switch c := pattern[p]; c {
			case '*':
				if p > lastStar {
					lastStar = p
					stars++
				}
				for p < len(pattern) && pattern[p] == '*' {
					p++
				}
				if p == len(pattern) {
					return true
				}
				if stars > maxGlobStars {
					return false
				}
				backP, backK = p, k
				continue
			case '?':
				p++
				k++
				continue
			case '[':
				if ok, next := matchClass(pattern, p, key[k]); ok {
					p = next
					k++
					continue
				}
			case '\\':
				if p+1 < len(pattern) {
					c = pattern[p+1]
					p++
				}
				fallthrough
			default:
				if c == key[k] {
					p++
					k++
					continue
				}
			}
		}
		// Mismatch: let the last '*' swallow one more byte, if there is one.
		if backP < 0 {
			return false
		}
		backK++
		p, k = backP, backK
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

// maxGlobStars is Redis's recursion limit for stringmatchlen: each run of
// '*' that still has text after it nests one level deeper, and a match
// that needs more than this many levels fails.
const maxGlobStars = 1000

// matchClass matches c against the class that starts at pattern[i] == '['
// and returns whether it matched and where the pattern continues after it.
func matchClass(pattern string, i int, c byte) (matched bool, next int) {
	i++
	negate := i < len(pattern) && pattern[i] == '^'
	if negate {
		i++
	}
	for {
		switch {
		case i+1 < len(pattern) && pattern[i] == '\\':
			i++
			if pattern[i] == c {
				matched = true
			}
		case i == len(pattern):
			return matched != negate, i // unterminated: the class ends the pattern
		case pattern[i] == ']':
			return matched != negate, i + 1
		case i+2 < len(pattern) && pattern[i+1] == '-':
			// C's char is signed on x86-64, and Redis compares as such.
			lo, hi, b := int8(pattern[i]), int8(pattern[i+2]), int8(c)
			if lo > hi {
				lo, hi = hi, lo
			}
			if lo <= b && b <= hi {
				matched = true
			}
			i += 2
		case pattern[i] == c:
			matched = true
		}
		i++
	}
}
