package model

import (
	"fmt"
	"time"
)

// Note returns what c's readings suggest beyond its status, in a sentence
// without a final stop, or "": the likely cause of a negative counter
// without a TTL, and a TTL more than twice window (the key's rule's),
// which is likely an expiry set with the wrong number or unit. Only
// counters and window counters get notes: a log's or a bucket's TTL
// says nothing of its window.
func Note(c *Counter, window time.Duration) string {
	if !spec(c.Layout).WindowTTL {
		return ""
	}
	n, isNum := c.Value.Number()
	switch {
	case !isNum:
		return ""
	case n < 0 && c.PTTL < 0:
		return "negative and without a TTL: likely a decrement after the key expired, which DECR starts again from 0 without a TTL"
	case window > 0 && c.PTTL >= 0 && PTTLDuration(c.PTTL) > 2*window:
		return fmt.Sprintf("TTL %s is more than twice its rule's window of %s: likely an expiry set with the wrong number or unit",
			FormatDuration(PTTLDuration(c.PTTL)), FormatDuration(window))
	}
	return ""
}
