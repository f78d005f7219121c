package model

import (
	"strings"
	"time"
)

// A token bucket kept in two strings: the tokens left, and the bucket's
// clock (its last refill), in keys of one name with two suffixes
// (mennanov/limiters writes `{prefix}available` and `{prefix}last`, in ns).
// Read alone, the first is a counter of hits and the second a GCRA time;
// the Store pairs them by what they hold, whatever the suffixes: a small
// count beside a fresh epoch time.
//
// A key of one reading cannot know its neighbour, so the pairing is the
// Store's. It keeps the clocks it has seen, by the name they share (a few
// keys in most keyspaces, none in most: the map stays nil and a count
// costs nothing more), and pairs a count with a clock at the count's
// reading. A clock seen after its count looks for it under the suffixes
// limiters use; under others, the count pairs at its next reading.

// clockKey is a string holding a fresh epoch time whose name splits into a
// stem and a suffix (pairName): a bucket's clock, once a count beside it
// pairs with it.
type clockKey struct {
	key    string
	at     int64 // the time it holds, ns since 1970
	paired bool  // a count beside it is read as its bucket's tokens
}

// maxPairCount is the largest count that pairs: tokens left fit a bucket's
// capacity, and a number larger is more likely a time or an id.
const maxPairCount = 1_000_000

// tokenSuffixes are the suffixes a clock seen after its count looks for it
// under: the names limiters give a two-string bucket's tokens.
var tokenSuffixes = []string{"available", "tokens", "tokens_left", "tokensleft", "remaining"}

// versionSuffixes name a count that is no bucket's tokens, though it sits
// beside its clock: mennanov/limiters' raceCheck keeps {prefix}version.
var versionSuffixes = []string{"version", "ver", "revision", "seq"}

// isVersion reports whether suffix names a version (versionSuffixes).
func isVersion(suffix string) bool {
	for _, v := range versionSuffixes {
		if strings.EqualFold(suffix, v) {
			return true
		}
	}
	return false
}

// pairName splits key into the stem two keys of a bucket share (up to and
// including the last separator, '}' among them) and a suffix of letters
// and '_' after it; ok is false for a key that ends otherwise (digits: an
// id or a window).
func pairName(key string) (stem, suffix string, ok bool) {
	for i := len(key) - 1; i >= 0; i-- {
		c := key[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', c == '_':
			continue
		case c == '}' || isWindowSep(c):
			if i == 0 || i == len(key)-1 || key[i+1] == '_' {
				return "", "", false
			}
			return key[:i+1], key[i+1:], true
		}
		return "", "", false
	}
	return "", "", false
}

// pairCount reports whether r, a string's reading, is a count that may be
// a bucket's tokens: a whole number from 0 to maxPairCount, read as a
// counter because nothing else was known of it.
func pairCount(r *Reading) bool {
	return r.Layout == LayoutCounter && r.why == whyCounter && r.Value.Kind == KindInt &&
		r.Value.Int >= 0 && r.Value.Int <= maxPairCount
}

// pairClock returns the time r holds when it is a string's epoch time near
// now, which Read took for a GCRA time or a timestamp.
func pairClock(o *Observation, r *Reading, now time.Time) (int64, bool) {
	if o.Type != "string" || r.At.IsZero() {
		return 0, false
	}
	if w := r.why; w == whyGCRANanos || w == whyTimestampValue || w == whyTimestampName {
		ns := r.At.UnixNano()
		return ns, nearNow(ns, now)
	}
	return 0, false
}

// pair reads o's reading r again as half of a two-string bucket when it
// is one: a count beside a known clock is the bucket's tokens (with the
// clock's time), a clock beside a count its clock; it keeps the Store's
// clocks up to date, and returns the status of the reading it gives.
// Only a rule that leaves the layout to Read (auto) pairs.
func (s *Store) pair(o *Observation, r *Reading, st Status, rule int16) Status {
	ns, isClock := pairClock(o, r, o.At)
	if !isClock && (len(s.clocks) == 0 || !pairCount(r)) {
		return st // most readings, at the cost of a few compares
	}
	if s.rules.layoutAt(int(rule)) != LayoutAuto {
		return st
	}
	stem, suffix, ok := pairName(o.Key)
	if !ok {
		return st
	}
	key := rowKey(o) // the clock and the count are on one server
	stem = ServerKey(o.Server, stem)
	if isClock {
		c, known := s.clocks[stem]
		if known && c.key != key {
			return st // a third key of the stem: the first clock stands
		}
		if s.clocks == nil {
			s.clocks = map[string]clockKey{}
		}
		c.key, c.at = key, ns
		s.clocks[stem] = c
		if !c.paired {
			if count, found := s.countBeside(stem, suffix); found {
				c.paired = true
				s.clocks[stem] = c
				s.reread(count) // the count is the bucket's tokens from now on
			}
		}
		if c.paired {
			*r = Reading{Layout: LayoutTimestamp, At: r.At, why: whyBucketClock}
			return clockStatus(r, o.PTTL, s.rules.Effective(int(rule)), o.At)
		}
		return st
	}
	c, known := s.clocks[stem]
	if !known || c.key == key || isVersion(suffix) {
		return st
	}
	r.Layout, r.At, r.why = LayoutBucket, unixUTC(c.at), whyBucketPair
	if !c.paired {
		c.paired = true
		s.clocks[stem] = c
		s.reread(c.key) // the clock is the bucket's from now on
	}
	eff := s.rules.Effective(int(rule))
	r.Remaining, r.HasRemaining = remaining(r.Layout, r.Value, r.At, eff, o.At)
	return Evaluate(r, o.PTTL, eff, o.At)
}

// clockStatus is Evaluate for a bucket's clock: a time, always past, but
// one its limiter reads again at the next hit, so without a TTL it is no
// leak (a time nobody reads again) but a key that is never freed.
func clockStatus(r *Reading, pttl int64, rule Rule, now time.Time) Status {
	undated := *r
	undated.At = time.Time{}
	return Evaluate(&undated, pttl, rule, now)
}

// countBeside returns the key of a count held beside a clock of stem
// under one of tokenSuffixes, read as a counter so far.
func (s *Store) countBeside(stem, clockSuffix string) (string, bool) {
	for _, suf := range tokenSuffixes {
		if suf == clockSuffix {
			continue
		}
		if i, ok := s.index.find(s.besideKey(stem, suf), s.entries); ok && s.entries[i].why == whyCounter {
			return s.besideKey(stem, suf), true
		}
	}
	return "", false
}

// besideKey is the key suffix makes of stem, a ServerKey's stem on a
// Store of several servers: the stem's server goes after the suffix.
func (s *Store) besideKey(stem, suffix string) string {
	if !s.named {
		return stem + suffix
	}
	name, server := splitServer(stem)
	return ServerKey(server, name+suffix)
}

// reread reads a held string key again from what the Store holds of it,
// as of its last reading, so that a pairing made by its neighbour's
// reading shows at once.
func (s *Store) reread(key string) {
	i, ok := s.index.find(key, s.entries)
	if !ok || !s.entries[i].isString {
		return
	}
	c := s.counter(i)
	o := Observation{Key: c.Key, Server: c.Server, Type: "string", Raw: c.Raw, PTTL: c.PTTL, At: c.ObservedAt, InWindow: -1}
	s.observe(&o)
}

// dropClock forgets key if it is a clock.
func (s *Store) dropClock(key string) {
	if len(s.clocks) == 0 {
		return
	}
	name, server := key, ""
	if s.named {
		name, server = splitServer(key)
	}
	if stem, _, ok := pairName(name); ok {
		stem = ServerKey(server, stem)
		if c, known := s.clocks[stem]; known && c.key == key {
			delete(s.clocks, stem)
		}
	}
}

// PairBuckets reads the two-string buckets among cs, counters in key order
// as one pass reads them (check without --watch), as the Store does: a
// count beside a clock of the same stem becomes the bucket's tokens, the
// clock its clock. Keys of one stem are neighbours in key order, so it
// looks no further than each run of them.
func PairBuckets(cs []*Counter, rules *Rules) {
	for i := 0; i < len(cs); {
		stem, _, ok := pairName(cs[i].Key)
		j := i + 1
		for ok && j < len(cs) && strings.HasPrefix(cs[j].Key, stem) {
			j++
		}
		if j-i >= 2 {
			pairRun(cs[i:j], stem, rules)
		}
		i = j
	}
}

// pairRun pairs the counts of run, keys that start with stem, with the
// first clock among them whose stem it is.
func pairRun(run []*Counter, stem string, rules *Rules) {
	var clock *Counter
	var clockNS int64
	for _, c := range run {
		if ns, ok := counterClock(c, stem, rules); ok {
			clock, clockNS = c, ns
			break
		}
	}
	if clock == nil {
		return
	}
	paired := false
	for _, c := range run {
		st, suffix, ok := pairName(c.Key)
		if !ok || st != stem || c == clock || isVersion(suffix) || rules.layoutAt(int(c.Rule)) != LayoutAuto || c.Type != "string" {
			continue
		}
		o := Observation{Key: c.Key, Type: "string", Raw: c.Raw, PTTL: c.PTTL, At: c.ObservedAt, InWindow: -1}
		eff := rules.Effective(int(c.Rule))
		r := Read(&o, eff, o.At)
		if !pairCount(&r) {
			continue
		}
		r.Layout, r.At, r.why = LayoutBucket, unixUTC(clockNS), whyBucketPair
		r.Remaining, r.HasRemaining = remaining(r.Layout, r.Value, r.At, eff, o.At)
		r.Clue, r.Guess = r.why.text("string"), r.why.guess()
		c.Status = Evaluate(&r, c.PTTL, eff, o.At)
		c.setReading(&r)
		paired = true
	}
	if paired {
		r := Reading{Layout: LayoutTimestamp, At: unixUTC(clockNS), why: whyBucketClock}
		r.Clue, r.Guess = r.why.text("string"), r.why.guess()
		clock.Status = clockStatus(&r, clock.PTTL, rules.Effective(int(clock.Rule)), clock.ObservedAt)
		clock.setReading(&r)
	}
}

// counterClock returns the time c holds when it is a clock of stem: a
// string, read alone as a time near now, named stem and a suffix.
func counterClock(c *Counter, stem string, rules *Rules) (int64, bool) {
	if c.Type != "string" || rules.layoutAt(int(c.Rule)) != LayoutAuto {
		return 0, false
	}
	if st, _, ok := pairName(c.Key); !ok || st != stem {
		return 0, false
	}
	o := Observation{Key: c.Key, Type: "string", Raw: c.Raw, PTTL: c.PTTL, At: c.ObservedAt, InWindow: -1}
	r := Read(&o, rules.Effective(int(c.Rule)), o.At)
	return pairClock(&o, &r, o.At)
}
