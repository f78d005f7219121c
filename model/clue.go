package model

import "strconv"

// why is the reason Read gave a key its layout: one byte, which the Store
// keeps in place of the clue's text (clueTexts has every text, built once).
type why uint8

const (
	whyOtherType why = iota // a set, stream or other type: no layout of counts

	// Strings.
	whyCounter        // a number
	whyWindowFloor    // name ends in floor(time / window)
	whyWindowEpoch    // name ends in the window's epoch start
	whyWindowStamp    // name ends in a date or hour stamp
	whyBucketName     // name ends in tokens
	whyBucketPair     // a small count beside a fresh epoch time: a bucket's tokens
	whyBucketClock    // a fresh epoch time beside a small count: a bucket's clock
	whyTimestampName  // name says a time, and the value is one
	whyTimestampValue // the value is an epoch time near now
	whyGCRA2017       // a float near seconds since 2017: redis_rate
	whyGCRANanos      // 19 digits of ns near now: throttled
	whyGCRAName       // name has a tat part, and the value is a time
	whyJava           // binary, a Java-serialised object
	whyBinary         // binary
	whyText           // text
	whyJavaCut        // whyJava, cut at MaxRaw
	whyBinaryCut      // whyBinary, cut at MaxRaw
	whyTextCut        // whyText, cut at MaxRaw
	whyRuleOpaqueCut  // the rule says opaque, cut at MaxRaw
	whyJSON           // a JSON object's count field
	whyJSONWindow     // whyJSON, and the name ends in a window part
	whyMsgpack        // a msgpack map's count field
	whyMsgpackWindow  // whyMsgpack, and the name ends in a window part
	whyJSONNoField    // a JSON object without the rule's json_field
	whyMsgpackNoField // a msgpack map without the rule's json_field
	whyBlockName      // name says block, and the value is 1 or a time

	// Hashes.
	whyHashField        // the rule's field
	whyHashFieldMissing // the rule's field is not there: 0
	whyHashBucket       // a tokens field and a time field
	whyHashGCRA         // a tat field
	whyHashLargest      // all fields integers: the largest
	whyHashUnknown      // fields of no known layout
	whyHashTooMany      // too many fields to read, none of the known names
	whyHashFieldTTL     // a field with a TTL of its own: its own row (Rows)

	// Logs: each of these starts a run of one reason per timeUnit.
	whyLogCounted                                        // hits inside the window counted
	whyLogAll       = whyLogCounted + why(numTimeUnits)  // no window known: every entry counted
	whyLogUncounts  = whyLogAll + why(numTimeUnits)      // window known, entries not counted (a long list)
	whyNotTimes     = whyLogUncounts + why(numTimeUnits) // a zset or list whose entries are no times
	whyRule         = whyNotTimes + 1                    // the rule's layout; + the Layout
	whyRuleNoPart   = whyRule + why(NumLayouts)          // the rule says window; the name has no window part
	whyRuleMismatch = whyRuleNoPart + 1                  // the rule's layout does not fit the key; + the Layout
	numWhys         = whyRuleMismatch + why(NumLayouts)
)

func (w why) cut() bool {
	return w == whyJavaCut || w == whyBinaryCut || w == whyTextCut || w == whyRuleOpaqueCut
}

// guess reports whether a layout given for this reason was inferred, and
// could be wrong. A number read as a count is what the key holds, binary is
// binary, text is text; the rest are guesses from names and magnitudes.
func (w why) guess() bool {
	switch {
	case w == whyCounter, w == whyOtherType, w >= whyJava && w <= whyRuleOpaqueCut, w == whyJSONNoField, w == whyMsgpackNoField,
		w == whyHashField, w == whyHashFieldMissing, w == whyHashUnknown, w == whyHashTooMany, w == whyHashFieldTTL,
		w >= whyNotTimes:
		return false
	}
	return true
}

// text is the clue for a key of type typ read for this reason: the
// commands, then the reason.
func (w why) text(typ string) string {
	if w >= numWhys {
		return ""
	}
	return clueTexts[typeClass(typ)][w]
}

// typeClass indexes clueTexts: how a type is read.
func typeClass(typ string) int {
	switch typ {
	case "string":
		return 0
	case "hash":
		return 1
	case "zset":
		return 2
	case "list":
		return 3
	}
	return 4
}

// clueCommands is what redisclient sends for a key of each class, in its
// round trips: a key that is not a string is found so by GETRANGE's
// WRONGTYPE answer, then TYPE says what it is.
var clueCommands = [5]string{
	"GETRANGE 0 " + strconv.Itoa(MaxRaw-1) + " and PTTL",
	notString + ", then HLEN, then HGETALL (" + strconv.Itoa(MaxHashFields) + " fields or fewer) or HMGET of the known field names",
	notString + ", then ZCARD and the lowest and highest score (ZRANGE WITHSCORES), then ZCOUNT over the window when one is known",
	notString + ", then LLEN and LINDEX 0 and -1, then LRANGE 0 " + strconv.Itoa(MaxListScan-1) + " to count over the window (when one is known, for a list of " + strconv.Itoa(MaxListScan) + " entries or fewer)",
	notString + ", then SCARD or XLEN for a set or stream",
}

const notString = "GETRANGE (answered WRONGTYPE), PTTL and TYPE"

var clueTexts = func() (t [5][numWhys]string) {
	var reasons [numWhys]string
	reasons[whyOtherType] = "a type that holds no rate-limit state countertop reads"
	reasons[whyCounter] = "a number: a counter (INCR, INCRBY or INCRBYFLOAT)"
	reasons[whyWindowFloor] = "the name ends in floor(time / window): a window's counter"
	reasons[whyWindowEpoch] = "the name ends in the window's start in epoch time: a window's counter"
	reasons[whyWindowStamp] = "the name ends in a date or time stamp: a window's counter"
	reasons[whyBucketName] = "the name ends in .tokens (or the value has a fraction): the tokens left in a token bucket kept in two strings (a count of tokens used needs layout = \"counter\")"
	reasons[whyBucketPair] = "a small count beside a key of the same name with another suffix that holds an epoch time near now: the tokens left in a token bucket kept in two strings (as mennanov/limiters writes {prefix}available and {prefix}last)"
	reasons[whyBucketClock] = "an epoch time near now beside a key of the same name with another suffix that holds a small count: the clock (last refill) of a token bucket kept in two strings, not a GCRA deadline"
	reasons[whyTimestampName] = "the name says a time and the value is an epoch time: a timestamp"
	reasons[whyTimestampValue] = "an epoch time near now (10, 13, 16 digits): a timestamp"
	reasons[whyGCRA2017] = "a float near now in seconds since 2017-01-01: a GCRA theoretical arrival time, as go-redis/redis_rate writes it"
	reasons[whyGCRANanos] = "19 digits of nanoseconds since 1970 near now: a GCRA theoretical arrival time, as throttled/throttled writes it"
	reasons[whyGCRAName] = "the name has a tat part and the value is a time: a GCRA theoretical arrival time"
	reasons[whyJava] = "binary, starting 0xAC 0xED: a Java-serialised object, a library's opaque state"
	reasons[whyBinary] = "bytes that are not text: a library's opaque state"
	reasons[whyText] = "text that is not a number"
	cut := strconv.Itoa(MaxRaw) + " bytes or more, of which the first " + strconv.Itoa(MaxRaw) + " are read"
	reasons[whyJavaCut] = reasons[whyJava] + "; " + cut
	reasons[whyBinaryCut] = reasons[whyBinary] + "; " + cut
	reasons[whyTextCut] = "text of " + cut + ": no counter is that long"
	reasons[whyRuleOpaqueCut] = "the rule's layout = \"opaque\"; " + cut
	count := " (count, hits, currHits, current, totalHits, requests, requestCount, hitCount or used; tokens, tokensLeft, available or remaining are tokens left; a rule's json_field names another)"
	reasons[whyJSON] = "a JSON object with a count field" + count + ": its count"
	reasons[whyJSONWindow] = reasons[whyJSON] + ", and the name ends in its window"
	reasons[whyMsgpack] = "a msgpack map with a count field" + count + ": its count (gofiber's limiter: currHits)"
	reasons[whyMsgpackWindow] = reasons[whyMsgpack] + ", and the name ends in its window"
	reasons[whyJSONNoField] = "a JSON object without a number in the rule's json_field"
	reasons[whyMsgpackNoField] = "a msgpack map without a number in the rule's json_field"
	reasons[whyBlockName] = "the name says block (blocked, ban, lockout…) and the value is 1 or a time: a flag that refuses its client while it exists"
	reasons[whyHashField] = "the rule's field, read as a counter (HINCRBY)"
	reasons[whyHashFieldMissing] = "the rule's field is not in the hash: no hits counted yet"
	reasons[whyHashBucket] = "a tokens field and a time field: a token bucket"
	reasons[whyHashGCRA] = "a tat field: a GCRA theoretical arrival time"
	reasons[whyHashLargest] = "every field an integer: the largest is read as the counter (HINCRBY per field; a rule's field = \"NAME\" picks one)"
	reasons[whyHashUnknown] = "fields of no layout countertop knows (a rule's field = \"NAME\" reads one as a counter)"
	reasons[whyHashTooMany] = "more than " + strconv.Itoa(MaxHashFields) + " fields, none of the known names (a rule's field = \"NAME\" reads one as a counter)"
	reasons[whyHashFieldTTL] = "fields with TTLs of their own (HPTTL): each a counter of its own, its window the field's (HINCRBY, then HEXPIRE … FIELDS)"
	for u := range numTimeUnits {
		times := "entries are " + unitNames[u] + " since 1970: a log of hits"
		reasons[whyLogCounted+why(u)] = times + ", counted inside the window"
		reasons[whyLogAll+why(u)] = times + "; no window known: every entry counted"
		reasons[whyLogUncounts+why(u)] = times + "; too many to count inside the window: every entry counted"
	}
	reasons[whyNotTimes] = "entries that are not epoch times: no log of hits"
	for l := range NumLayouts {
		reasons[whyRule+why(l)] = "the rule's layout = \"" + l.String() + "\""
		reasons[whyRuleMismatch+why(l)] = "the rule's layout = \"" + l.String() + "\", which this key does not hold (not of its type, or not its value)"
	}
	reasons[whyRuleNoPart] = "the rule's layout = \"window\", but the name ends in no window part"
	for c, cmds := range clueCommands {
		for w, r := range reasons {
			t[c][w] = cmds + "; " + r
		}
	}
	return t
}()
