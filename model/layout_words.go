package model

import "fmt"

// writesCounters ends a refusal of a key the dashboard's writes do not
// apply to, which its own limiter writes otherwise.
const writesCounters = "; countertop writes counters only."

// refuseCount is a counter's Refusal: the writes add to a string counter
// or a hash's field (HINCRBY), and to nothing else read as a count.
func refuseCount(c *Counter, command string) string {
	if c.Type != "string" && (c.Type != "hash" || c.Field == "") {
		return fmt.Sprintf("holds a %s, and %s adds only to a string counter or a hash field.", Printable(c.Type), command)
	}
	return ""
}

// refuseLog is a log's Refusal: its limiter adds an entry per hit.
func refuseLog(c *Counter, _ string) string {
	add := "ZADD"
	if c.Type == "list" {
		add = "LPUSH"
	}
	return "is a log: its limiter adds one " + add + " per hit" + writesCounters
}

// refuseBucket is a bucket's Refusal: its limiter sets tokens and a time.
func refuseBucket(c *Counter, _ string) string {
	how := "sets the tokens left and when it refilled (HSET)"
	if c.Type == "string" {
		how = "sets the tokens left and its timestamp key (SET)"
	}
	return "is a token bucket: its limiter " + how + " on each hit" + writesCounters
}

// refuseFixed is a Refusal that says why whatever the key's type.
func refuseFixed(why string) func(*Counter, string) string {
	return func(*Counter, string) string { return why }
}

// refuseOther is the Refusal of a key that holds no count: pick another.
func refuseOther(c *Counter, command string) string {
	if c.Type != "string" {
		return fmt.Sprintf("holds a %s, and %s adds only to a string: pick a counter.", Printable(c.Type), command)
	}
	return fmt.Sprintf("holds text, not a number, and %s adds only to a number: pick a counter.", command)
}

// checkNeverFreed is check's no-expiry reason for a key with no count to
// reset: a GCRA key, a time, opaque state.
func checkNeverFreed(string) string {
	return "no TTL: the key is never freed, though nothing reads it once its time has passed"
}
