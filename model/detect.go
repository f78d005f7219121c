package model

import (
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// readString is Read for a string.
func readString(o *Observation, rule Rule, now time.Time) Reading {
	if o.RawCut {
		// Longer than MaxRaw: no number, only text or binary.
		switch {
		case rule.Layout == LayoutOpaque:
			return Reading{Layout: LayoutOpaque, why: whyRuleOpaqueCut}
		case !isText(o.Raw, true):
			return Reading{Layout: LayoutOpaque, why: javaOr(o.Raw, whyJavaCut, whyBinaryCut)}
		}
		return Reading{Layout: LayoutOther, why: whyTextCut}
	}
	v := ParseValue(o.Raw)
	switch rule.Layout {
	case LayoutOpaque:
		return Reading{Layout: LayoutOpaque, why: whyRule + why(LayoutOpaque)}
	case LayoutBlock:
		return blockReading(o, whyRule+why(LayoutBlock))
	case LayoutAuto, LayoutCounter, LayoutWindow, LayoutLog, LayoutBucket, LayoutGCRA, LayoutTimestamp, LayoutOther:
		// read by what the string holds, below
	}
	if _, isNum := v.Number(); !isNum {
		if r, ok := readDecoded(o, rule, now); ok {
			return r
		}
		switch {
		case !isText(o.Raw, false):
			return Reading{Layout: LayoutOpaque, why: javaOr(o.Raw, whyJava, whyBinary)}
		case rule.Layout != LayoutAuto:
			return Reading{Layout: LayoutOther, why: whyRuleMismatch + why(rule.Layout)}
		}
		return Reading{Layout: LayoutOther, why: whyText}
	}
	switch rule.Layout {
	case LayoutAuto:
		if isBlock(o.Key, v, now) {
			return blockReading(o, whyBlockName)
		}
		return detectNumber(o.Key, v, rule, now)
	case LayoutCounter, LayoutBucket:
		return Reading{Layout: rule.Layout, Value: v, why: whyRule + why(rule.Layout)}
	case LayoutWindow:
		w, _, ok := parseWindowName(o.Key, rule.Window, now, true)
		if !ok {
			return Reading{Layout: LayoutWindow, Value: v, Window: WindowName{Identity: o.Key}, why: whyRuleNoPart}
		}
		return Reading{Layout: LayoutWindow, Value: v, Window: w, why: whyRule + why(LayoutWindow)}
	case LayoutGCRA, LayoutTimestamp:
		if ns, ok := anyTime(v); ok {
			return Reading{Layout: rule.Layout, At: unixUTC(ns), why: whyRule + why(rule.Layout)}
		}
	case LayoutLog, LayoutOpaque, LayoutOther, LayoutBlock: // a string holding a number is none of these (opaque and block returned above)
	}
	return Reading{Layout: LayoutOther, why: whyRuleMismatch + why(rule.Layout)}
}

// detectNumber is Read for a string holding a number when no rule says
// its layout. Names that say what the number is come first, then numbers
// only a time near now has, then a window in the name; anything else is a
// counter.
func detectNumber(key string, v Value, rule Rule, now time.Time) Reading {
	// A bucket kept in two strings writes `….tokens` (Spring Cloud Gateway,
	// the scripts after Stripe's); `…:tokens` holding an integer is as
	// likely a count of tokens used (an LLM's quota), which a bucket's
	// reading would turn upside down, so it takes a fraction to say bucket.
	if nameEndsAfter(key, bucketSuffixes, ".") || v.Kind == KindFloat && nameEnds(key, bucketSuffixes) {
		return Reading{Layout: LayoutBucket, Value: v, why: whyBucketName}
	}
	if ns, _, ok := epochNanos(v); ok && nameEnds(key, timeSuffixes) && ns <= now.UnixNano()+int64(nearFuture) {
		return Reading{Layout: LayoutTimestamp, At: unixUTC(ns), why: whyTimestampName}
	}
	n, _ := v.Number()
	if (v.Kind == KindFloat || n >= 1e9) && hasNamePart(key, "tat") {
		if ns, ok := anyTime(v); ok && nearNow(ns, now) {
			return Reading{Layout: LayoutGCRA, At: unixUTC(ns), why: whyGCRAName}
		}
	}
	if v.Kind == KindFloat {
		if ns, ok := since2017Nanos(n); ok && nearNow(ns, now) {
			return Reading{Layout: LayoutGCRA, At: unixUTC(ns), why: whyGCRA2017}
		}
	}
	if ns, u, ok := epochNanos(v); ok && nearNow(ns, now) {
		if u == unitNanos && v.Kind == KindInt {
			return Reading{Layout: LayoutGCRA, At: unixUTC(ns), why: whyGCRANanos}
		}
		return Reading{Layout: LayoutTimestamp, At: unixUTC(ns), why: whyTimestampValue}
	}
	if w, form, ok := parseWindowName(key, rule.Window, now, false); ok {
		return Reading{Layout: LayoutWindow, Value: v, Window: w, why: whyWindowFloor + why(form)}
	}
	return Reading{Layout: LayoutCounter, Value: v, why: whyCounter}
}

// readDecoded is Read for a string that is no number but may be a JSON
// object or a msgpack map holding a count (see decodeCount), under a rule
// whose layout reads one (Decodes). ok is false when raw is neither, and
// when it holds no count and no rule named its field: other JSON stays
// text, other msgpack binary.
func readDecoded(o *Observation, rule Rule, now time.Time) (Reading, bool) {
	enc := encodingOf(o.Raw)
	if enc == encodedNot || !spec(rule.Layout).Decodes || enc == encodedJSON && !isText(o.Raw, false) {
		return Reading{}, false
	}
	d, ok := decodeCount(o.Raw, enc, rule.JSONField)
	switch {
	case !ok && rule.JSONField == "":
		return Reading{}, false
	case !ok && enc == encodedJSON:
		return Reading{Layout: LayoutOther, why: whyJSONNoField}, true
	case !ok:
		return Reading{Layout: LayoutOpaque, why: whyMsgpackNoField}, true
	}
	r := Reading{Layout: rule.Layout, Value: d.value, Field: d.field, why: whyJSON}
	if enc == encodedMsgpack {
		r.why = whyMsgpack
	}
	if r.Layout == LayoutAuto {
		r.Layout = LayoutCounter
		if d.left {
			r.Layout = LayoutBucket
		}
	}
	if r.Layout == LayoutWindow || r.Layout == LayoutCounter && rule.Layout == LayoutAuto {
		forced := rule.Layout == LayoutWindow
		if w, _, ok := parseWindowName(o.Key, rule.Window, now, forced); ok {
			r.Layout, r.Window, r.why = LayoutWindow, w, r.why+1 // whyJSONWindow, whyMsgpackWindow
		} else if forced {
			r.Window, r.why = WindowName{Identity: o.Key}, whyRuleNoPart
		}
	}
	return r, true
}

// Name parts that say a key is a flag that refuses a client while it
// exists (ASCII case ignored); rate-limiter-flexible's ExpressBruteFlexible
// writes its own as `{prefix}block:…`, a first part ending in block.
var blockWords = []string{
	"block", "blocked", "blocklist", "blocklisted", "blacklist", "blacklisted", "denylist", "denylisted",
	"ban", "banned", "lockout", "lockedout", "locked", "jail", "jailed",
}

// isBlock reports whether a string key holding v is a block flag: its name
// has a part that says so (blockPart), and it holds 1 or a time (when the
// block began or ends), not one a name like `…:blocked_until` says is the
// time a limiter compares with the clock, which is a timestamp.
func isBlock(key string, v Value, now time.Time) bool {
	n, _ := v.Number()
	switch {
	case v.Kind == KindInt && v.Int == 1:
	case n < 1e9: // no time since 2001 is smaller: a count, which no name makes a flag
		return false
	default:
		ns, _, isTime := epochNanos(v)
		if !isTime || ns > now.UnixNano()+int64(nearFuture) || nameEnds(key, timeSuffixes) {
			return false
		}
	}
	_, _, ok := blockPart(key)
	return ok
}

// blockPart finds the part of key that says it is a block flag: key[i:j]
// is one of blockWords between separators, or a first part that ends in
// "block" before a ':'.
func blockPart(key string) (i, j int, ok bool) {
	for i < len(key) {
		j = i
		for j < len(key) && !isNamePartSep(key[j]) {
			j++
		}
		if isBlockWord(key[i:j]) {
			return i, j, true
		}
		if i == 0 && j < len(key) && key[j] == ':' && j >= len("block") && strings.EqualFold(key[j-len("block"):j], "block") {
			return i, j, true
		}
		i = j + 1
	}
	return 0, 0, false
}

// isBlockWord reports whether part is one of blockWords, comparing only
// the words of its length and first letter: every counter holding 1 has
// its name's parts looked at.
func isBlockWord(part string) bool {
	if len(part) < len("ban") || len(part) > len("blacklisted") {
		return false
	}
	c := toLowerASCII(part[0])
	for _, w := range blockWords {
		if len(w) == len(part) && w[0] == c && strings.EqualFold(part, w) {
			return true
		}
	}
	return false
}

// blockReading is a block flag's reading: At is when its TTL ends, when
// it has one (the key was read at o.At), as long as its client is refused.
func blockReading(o *Observation, w why) Reading {
	r := Reading{Layout: LayoutBlock, why: w}
	if o.PTTL >= 0 {
		at, left := o.At.UnixNano(), int64(PTTLDuration(o.PTTL))
		if at > math.MaxInt64-left {
			at = math.MaxInt64
		} else {
			at += left
		}
		if at > 0 {
			r.At = unixUTC(at)
		}
	}
	return r
}

// anyTime reads a number a rule says is a time: seconds since 2017-01-01
// below 1e9 (as redis_rate counts; no epoch time since 2001 is that
// small), else an epoch time in the unit its magnitude gives.
func anyTime(v Value) (int64, bool) {
	n, _ := v.Number()
	if ns, ok := since2017Nanos(n); ok {
		return ns, true
	}
	ns, _, ok := epochNanos(v)
	return ns, ok
}

// javaOr is java when raw starts as Java's serialisation does (0xACED,
// the stream magic), else other.
func javaOr(raw string, java, other why) why {
	if strings.HasPrefix(raw, "\xac\xed") {
		return java
	}
	return other
}

// isText reports whether s is text: valid UTF-8 without control bytes but
// tab, newline and carriage return. A string cut short may end in part of
// a character, which is not held against it.
func isText(s string, cut bool) bool {
	if cut {
		for i := len(s) - 1; i >= 0 && i >= len(s)-utf8.UTFMax; i-- {
			if utf8.RuneStart(s[i]) {
				if !utf8.FullRuneInString(s[i:]) {
					s = s[:i]
				}
				break
			}
		}
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\t' && c != '\n' && c != '\r' || c == 0x7f {
			return false
		}
	}
	return utf8.ValidString(s)
}

// Name suffixes that say what a string's number is, after a separator.
var (
	bucketSuffixes = []string{"tokens", "tokens_left", "tokensleft"}
	timeSuffixes   = []string{
		"timestamp", "ts", "time", "last", "reset", "reset_at", "resetat", "until",
		"expires", "expires_at", "expiresat", "updated_at", "last_refill", "refilled_at",
	}
)

// nameEnds reports whether key ends in one of the suffixes (ASCII case
// ignored), after a separator (or as the whole key).
func nameEnds(key string, suffixes []string) bool {
	for _, s := range suffixes {
		i := len(key) - len(s)
		if i >= 0 && strings.EqualFold(key[i:], s) && (i == 0 || isWindowSep(key[i-1])) {
			return true
		}
	}
	return false
}

// nameEndsAfter reports whether key ends in one of the suffixes (ASCII
// case ignored) right after one of the bytes of seps.
func nameEndsAfter(key string, suffixes []string, seps string) bool {
	for _, s := range suffixes {
		i := len(key) - len(s)
		if i >= 1 && strings.EqualFold(key[i:], s) && strings.IndexByte(seps, key[i-1]) >= 0 {
			return true
		}
	}
	return false
}

// hasNamePart reports whether part (lower case) is one of key's parts
// between separators, ASCII case ignored: "tat" in "rl:tat:42", not in
// "stats".
func hasNamePart(key, part string) bool {
	for i := 0; i+len(part) <= len(key); i++ {
		if (i == 0 || isNamePartSep(key[i-1])) && strings.EqualFold(key[i:i+len(part)], part) &&
			(i+len(part) == len(key) || isNamePartSep(key[i+len(part)])) {
			return true
		}
	}
	return false
}

func isNamePartSep(c byte) bool { return c == '{' || c == '}' || isWindowSep(c) }

// Hash field names, as limiters spell them; fieldIs compares them with
// case, '_' and '-' ignored.
var (
	tokenFields = []string{"tokens", "tokensleft", "value", "remaining"}
	timeFields  = []string{"refilledat", "last", "lastrefill", "ts", "timestamp", "updatedat"}
	// knownHashFields is what HMGET asks a hash too large for HGETALL:
	// each of the names above in the spellings limiters use.
	knownHashFields = []string{
		"tokens", "tokens_left", "tokensLeft", "value", "remaining",
		"refilledAt", "refilled_at", "last", "last_refill", "lastRefill", "ts", "timestamp", "updated_at", "updatedAt",
		"tat",
	}
)

// KnownHashFields is the fields redisclient asks (HMGET) of a hash of more
// than MaxHashFields fields: the rule's field when it names one, then
// those Read knows. The slice is shared: do not modify it.
func KnownHashFields(field string) []string {
	if field == "" {
		return knownHashFields[:len(knownHashFields):len(knownHashFields)]
	}
	return append([]string{field}, knownHashFields...)
}

// fieldIs reports whether name is canon (lower case, no '_' or '-') once
// case, '_' and '-' are ignored.
func fieldIs(name, canon string) bool {
	j := 0
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c == '_' || c == '-' {
			continue
		}
		if j == len(canon) || toLowerASCII(c) != canon[j] {
			return false
		}
		j++
	}
	return j == len(canon)
}

// findField is the first field of fs named as one of canons (in the
// canons' order), or nil.
func findField(fs []Field, canons ...string) *Field {
	for _, c := range canons {
		for i := range fs {
			if fieldIs(fs[i].Name, c) {
				return &fs[i]
			}
		}
	}
	return nil
}

// readHash is Read for a hash.
func readHash(o *Observation, rule Rule, now time.Time) Reading {
	switch {
	case rule.Layout == LayoutOpaque:
		return Reading{Layout: LayoutOpaque, why: whyRule + why(LayoutOpaque)}
	case !spec(rule.Layout).HashField: // as config refuses a field with it
		return Reading{Layout: LayoutOther, why: whyRuleMismatch + why(rule.Layout)}
	}
	var named *Field
	if rule.Field != "" {
		for i := range o.Fields {
			if o.Fields[i].Name == rule.Field {
				named = &o.Fields[i]
				break
			}
		}
		if rule.Layout == LayoutAuto || rule.Layout == LayoutCounter {
			if named == nil {
				return Reading{Layout: LayoutCounter, Value: Value{Kind: KindInt}, Field: rule.Field, why: whyHashFieldMissing}
			}
			w := whyHashField
			if o.Field != "" { // a field's row (Rows), not the rule's field
				w = whyHashFieldTTL
			}
			return Reading{Layout: LayoutCounter, Value: ParseValue(named.Value), Field: rule.Field, why: w}
		}
	}
	if tat := pick(named, findField(o.Fields, "tat")); tat != nil && (rule.Layout == LayoutAuto || rule.Layout == LayoutGCRA) {
		if ns, ok := anyTime(ParseValue(tat.Value)); ok {
			return Reading{Layout: LayoutGCRA, At: unixUTC(ns), Field: tat.Name, why: ruleOr(rule, whyHashGCRA)}
		}
	}
	if tokens := pick(named, findField(o.Fields, tokenFields...)); tokens != nil && (rule.Layout == LayoutAuto || rule.Layout == LayoutBucket) {
		v := ParseValue(tokens.Value)
		last := findField(o.Fields, timeFields...)
		if _, isNum := v.Number(); isNum && (last != nil || rule.Layout == LayoutBucket) {
			r := Reading{Layout: LayoutBucket, Value: v, Field: tokens.Name, why: ruleOr(rule, whyHashBucket)}
			if last != nil {
				if ns, ok := anyTime(ParseValue(last.Value)); ok {
					r.At = unixUTC(ns)
				}
			}
			return r
		}
	}
	if rule.Layout == LayoutAuto || rule.Layout == LayoutCounter {
		if o.Len > MaxHashFields {
			return Reading{Layout: LayoutOther, why: ruleMismatchOr(rule, whyHashTooMany)}
		}
		if f, v, ok := largestField(o.Fields); ok {
			return Reading{Layout: LayoutCounter, Value: v, Field: f, why: ruleOr(rule, whyHashLargest)}
		}
		return Reading{Layout: LayoutOther, why: ruleMismatchOr(rule, whyHashUnknown)}
	}
	return Reading{Layout: LayoutOther, why: whyRuleMismatch + why(rule.Layout)}
}

// pick is the rule's field when there is one, else the field found.
func pick(named, found *Field) *Field {
	if named != nil {
		return named
	}
	return found
}

// ruleOr is the reason for a layout the rule set, or w when it is detected.
func ruleOr(rule Rule, w why) why {
	if rule.Layout != LayoutAuto {
		return whyRule + why(rule.Layout)
	}
	return w
}

// ruleMismatchOr is the reason a key is no layout: that it is not the
// rule's, or w when no rule set one.
func ruleMismatchOr(rule Rule, w why) why {
	if rule.Layout != LayoutAuto {
		return whyRuleMismatch + why(rule.Layout)
	}
	return w
}

// largestField is the field with the largest value when every field holds
// an integer (ties to the first name in byte order).
func largestField(fs []Field) (name string, v Value, ok bool) {
	for i := range fs {
		fv := ParseValue(fs[i].Value)
		if fv.Kind != KindInt {
			return "", Value{}, false
		}
		if !ok || fv.Int > v.Int || fv.Int == v.Int && fs[i].Name < name {
			name, v, ok = fs[i].Name, fv, true
		}
	}
	return name, v, ok
}

// readLog is Read for a sorted set or a list: a log of hits when its
// newest and oldest entries are epoch times of one unit.
func readLog(o *Observation, rule Rule, now time.Time) Reading {
	switch rule.Layout {
	case LayoutOpaque:
		return Reading{Layout: LayoutOpaque, why: whyRule + why(LayoutOpaque)}
	case LayoutAuto, LayoutLog:
	case LayoutCounter, LayoutWindow, LayoutBucket, LayoutGCRA, LayoutTimestamp, LayoutOther, LayoutBlock:
		return Reading{Layout: LayoutOther, why: whyRuleMismatch + why(rule.Layout)}
	}
	newest, oldest := max(o.Newest, o.Oldest), min(o.Newest, o.Oldest)
	u, isTime := unitOf(newest)
	if ou, ok := unitOf(oldest); !ok || ou != u {
		isTime = false
	}
	if isTime {
		ns, _, _ := epochNanos(Value{Kind: KindFloat, Float: newest})
		isTime = notFuture(ns, now)
	}
	if !isTime && rule.Layout == LayoutAuto || o.Len <= 0 {
		return Reading{Layout: LayoutOther, why: ruleMismatchOr(rule, whyNotTimes)}
	}
	r := Reading{Layout: LayoutLog, Value: Value{Kind: KindInt, Int: o.Len, Float: float64(o.Len)}}
	switch {
	case o.InWindow >= 0:
		r.Value = Value{Kind: KindInt, Int: o.InWindow, Float: float64(o.InWindow)}
		r.why = whyLogCounted + why(u)
	case rule.Window > 0:
		r.why = whyLogUncounts + why(u)
	default:
		r.why = whyLogAll + why(u)
	}
	if rule.Layout != LayoutAuto {
		r.why = whyRule + why(LayoutLog)
	}
	return r
}
