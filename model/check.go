package model

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// WriteProblems writes one line per problem counter (see Status.Problem),
// for `countertop check`: status, printable key, and why, in words an
// on-call engineer can act on; the most severe first (stuck counters
// block clients over their limit now, those without expiry will), each
// status in the order given.
func WriteProblems(w io.Writer, rows []*Counter, rules *Rules) error {
	for status := range NumStatuses { // most severe first
		if !status.Problem() {
			continue
		}
		for _, c := range rows {
			if c.Status != status {
				continue
			}
			if _, err := fmt.Fprintf(w, "%-9s  %s  %s\n", c.Status, Printable(c.Key), problemReason(c, rules)); err != nil {
				return err
			}
		}
	}
	return nil
}

func problemReason(c *Counter, rules *Rules) string {
	rule := rules.At(int(c.Rule))
	window := rules.WindowOf(rule)
	value := Printable(c.Raw)
	fix := "it will never reset"
	switch {
	case window > 0 && window%time.Second == 0:
		fix += "; fix: countertop repair (EXPIRE " + strconv.FormatInt(int64(window/time.Second), 10) + " NX)"
	case window > 0:
		fix += "; fix: countertop repair (PEXPIRE " + strconv.FormatInt(window.Milliseconds(), 10) + " NX)"
	case c.Rule < 0: // no rule matched: the fallback's window is --window
		fix += "; fix: pass --window (or give it a [[rule]] with a window), then countertop repair"
	default:
		fix += "; fix: give its [[rule]] a window (or pass --window), then countertop repair"
	}
	if c.Status == StatusStuck {
		return fmt.Sprintf("value %s >= limit %s and no TTL: blocked forever, %s", value, strconv.FormatFloat(rule.Limit, 'f', -1, 64), fix)
	}
	return fmt.Sprintf("value %s, no TTL: %s", value, fix)
}
