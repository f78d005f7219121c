package model

import (
	"slices"
	"strings"
)

// WindowSiblings returns the other window keys of identity (the keys a
// limiter writes for one client, one per window: a sliding window's
// current and previous key, the past ones a leak left), up to n of them,
// newest window first, and how many more there are. key, the one asked
// about, is not among them.
//
// It walks every key once, as EachProblem does (BenchmarkWindowSiblings,
// figures in BENCHMARKS.md): the detail screen calls it when it opens and
// now and then after, never once per frame.
func (s *Store) WindowSiblings(key, identity string, n int) (siblings []Counter, more int) {
	if identity == "" || n <= 0 {
		return nil, 0
	}
	var top []int32 // the newest n, newest first
	total := 0
	for i := range s.entries {
		e := &s.entries[i]
		if !spec(e.layout).NamedWindow || e.key == key || !isWindowOf(e.key, identity) {
			continue
		}
		total++
		if len(top) == n && CompareKeys(e.key, s.entries[top[n-1]].key) <= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, e.key, func(j int32, k string) int { return -CompareKeys(s.entries[j].key, k) })
		top = slices.Insert(top, at, int32(i))
		if len(top) > n {
			top = top[:n]
		}
	}
	siblings = make([]Counter, len(top))
	for j, i := range top {
		siblings[j] = s.counter(i)
	}
	return siblings, total - len(top)
}

// isWindowOf reports whether key is identity, a separator and a window
// part as parseWindowName splits one off (digits, or a dashed stamp
// `2026-12-01T14:05`): a key of one of identity's windows, not of a longer
// identity that starts the same (`rl:a:b:29936001` is not one of `rl:a`'s).
func isWindowOf(key, identity string) bool {
	if len(key) < len(identity)+2 || !strings.HasPrefix(key, identity) {
		return false
	}
	part := key[len(identity):]
	switch {
	case isWindowSep(part[0]):
		part = part[1:]
	case !strings.HasSuffix(identity, "}"): // a hash tag's '}' ends identity: `{prefix}1764979200000000000`
		return false
	}
	if !isDigit(part[len(part)-1]) {
		return false
	}
	if w, ok := parseDashedStamp(key); ok && w.Identity == identity {
		return true
	}
	for i := 0; i < len(part); i++ {
		if !isDigit(part[i]) {
			return false
		}
	}
	return true
}
