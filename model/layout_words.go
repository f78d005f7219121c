package model

import "fmt"

// writesCounters ends a refusal of a key the dashboard's writes do not
// apply to, which its own limiter writes otherwise.
const writesCounters = "; countertop writes counters only."

// refuseCount is a counter's Refusal: the writes add to a string counter
// or a hash's field (HINCRBY), and to nothing else read as a count: not
// to a count read out of a string's JSON or msgpack (a string's field).
func refuseCount(typ, field, command string) string {
	switch {
	case typ == "string" && field != "":
		return fmt.Sprintf("holds %s: its limiter rewrites it whole, and %s adds only to a number%s", decodedState, command, writesCounters)
	case typ != "string" && (typ != "hash" || field == ""):
		return fmt.Sprintf("holds a %s, and %s adds only to a string counter or a hash field.", Printable(typ), command)
	}
	return ""
}

// decodedState is what a string read with a field holds.
const decodedState = "a JSON object or msgpack map"

// refuseLog is a log's Refusal: its limiter adds an entry per hit.
func refuseLog(typ, _, _ string) string {
	add := "ZADD"
	if typ == "list" {
		add = "LPUSH"
	}
	return "is a log: its limiter adds one " + add + " per hit" + writesCounters
}

// refuseBucket is a bucket's Refusal: its limiter sets tokens and a time.
func refuseBucket(typ, field, _ string) string {
	how := "sets the tokens left and when it refilled (HSET)"
	switch {
	case typ == "string" && field != "":
		how = "rewrites " + decodedState + " of its tokens left"
	case typ == "string":
		how = "sets the tokens left and its timestamp key (SET)"
	}
	return "is a token bucket: its limiter " + how + " on each hit" + writesCounters
}

// refuseFixed is a Refusal that says why whatever the key's type.
func refuseFixed(why string) func(string, string, string) string {
	return func(string, string, string) string { return why }
}

// refuseOther is the Refusal of a key that holds no count: pick another.
func refuseOther(typ, _, command string) string {
	if typ != "string" {
		return fmt.Sprintf("holds a %s, and %s adds only to a string: pick a counter.", Printable(typ), command)
	}
	return fmt.Sprintf("holds text, not a number, and %s adds only to a number: pick a counter.", command)
}

// checkNeverFreed is check's no-expiry reason for a key with no count to
// reset: a GCRA key, a time, opaque state.
func checkNeverFreed(string) string {
	return "no TTL: the key is never freed, though nothing reads it once its time has passed"
}
