package model

import (
	"slices"
	"strings"
)

// WindowSiblings returns the other window keys of identity on server (the
// keys a limiter writes for one client, one per window: a sliding window's
// current and previous key, the past ones a leak left), up to n of them,
// newest window first, and how many more there are. key, the one asked
// about, is not among them; nor is a key of the same name on another
// server, which is another limiter's (a region's) or another shard's.
//
// It walks every key once, as EachProblem does (BenchmarkWindowSiblings,
// figures in BENCHMARKS.md): the detail screen calls it when it opens and
// now and then after, never once per frame.
func (s *Store) WindowSiblings(server, key, identity string, n int) (siblings []Counter, more int) {
	if identity == "" || n <= 0 {
		return nil, 0
	}
	var top []int32 // the newest n, newest first
	total := 0
	keyAt := func(j int32) string { k, _ := s.keyOn(&s.entries[j], server); return k }
	for i := range s.entries {
		e := &s.entries[i]
		if !spec(e.layout).NamedWindow {
			continue
		}
		k, on := s.keyOn(e, server)
		if !on || k == key || !isWindowOf(k, identity) {
			continue
		}
		total++
		if len(top) == n && CompareKeys(k, keyAt(top[n-1])) <= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, k, func(j int32, k string) int { return -CompareKeys(keyAt(j), k) })
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

// keyOn is the key of e's row and whether that row is on server: with one
// server (a Store that never held a named row) every row is on "", and
// among several a row's ID is its key and its server's mark and name
// (ServerKey). It allocates nothing, as it runs once a row in the walks
// of the detail screen's look-ups.
func (s *Store) keyOn(e *entry, server string) (string, bool) {
	if !s.named {
		return e.key, server == ""
	}
	k, ok := strings.CutSuffix(e.key, server)
	if !ok || k == "" || k[len(k)-1] != serverMark {
		return "", false
	}
	return k[:len(k)-1], true
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
