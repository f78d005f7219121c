package model

import (
	"slices"
	"strings"
)

// BlockHits returns the keys beside a block flag that count its client's
// hits, up to n in key order, and how many more there are: the flag's name
// without its block part (`rl:user42` beside `rl:user42:blocked`) and that
// name's windows, or the same name with another part in the block part's
// place (`free:…` and `counter:…` beside ExpressBruteFlexible's
// `block:…`). Only keys of a layout that holds state, and no other flag,
// count, and only on server: a key of the same name on another server is
// another limiter's (a region's) or another shard's.
//
// It walks every key once, as WindowSiblings does: the detail screen calls
// it when it opens and now and then after, never once per frame.
func (s *Store) BlockHits(server, key string, n int) (hits []Counter, more int) {
	i, j, ok := blockPart(key)
	if !ok || n <= 0 {
		return nil, 0
	}
	// The part is at the start or after a separator, and at the end or
	// before one: bare is the name without it and one separator.
	before, after := key[:i], key[j:]
	bare := before
	if after != "" {
		bare += after[1:]
	} else if before != "" {
		bare = before[:len(before)-1]
	}
	var found []int32
	for e := range s.entries {
		sp := spec(s.entries[e].layout)
		if !sp.State || sp.Refuses {
			continue
		}
		k, on := s.keyOn(&s.entries[e], server)
		if !on || k == key {
			continue
		}
		if k == bare || bare != "" && isWindowOf(k, bare) || beside(k, before, after) {
			found = append(found, int32(e))
		}
	}
	keyAt := func(j int32) string { k, _ := s.keyOn(&s.entries[j], server); return k }
	slices.SortFunc(found, func(a, b int32) int { return CompareKeys(keyAt(a), keyAt(b)) })
	for _, e := range found[:min(n, len(found))] {
		hits = append(hits, s.counter(e))
	}
	return hits, max(len(found)-n, 0)
}

// beside reports whether k is before, one name part other than a block
// word, and after: a key of the same client as the block flag whose part
// between them is a block word.
func beside(k, before, after string) bool {
	if len(k) <= len(before)+len(after) || !strings.HasPrefix(k, before) || !strings.HasSuffix(k, after) {
		return false
	}
	part := k[len(before) : len(k)-len(after)]
	for i := 0; i < len(part); i++ {
		if isNamePartSep(part[i]) {
			return false
		}
	}
	_, _, isBlock := blockPart(part)
	return !isBlock
}
