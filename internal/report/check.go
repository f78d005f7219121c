package report

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/countertop/countertop/model"
)

// WriteProblems writes one line per problem counter (model.Status.Problem)
// for `countertop check`: status, printable key, and why in words an
// on-call engineer can act on, the most severe status first.
func WriteProblems(w io.Writer, rows []*model.Counter, rules *model.Rules) error {
	for status := range model.NumStatuses { // most severe first
		if !status.Problem() {
			continue
		}
		for _, c := range rows {
			if c.Status != status {
				continue
			}
			if _, err := fmt.Fprintf(w, "%-9s  %s  %s\n", c.Status, model.Printable(c.Key), problemReason(c, rules)); err != nil {
				return err
			}
		}
	}
	return nil
}

// problemReason returns why c is a problem and how to fix it.
func problemReason(c *model.Counter, rules *model.Rules) string {
	rule := rules.At(int(c.Rule))
	window := rules.WindowOf(rule)
	value := model.Printable(c.Raw)
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
	if c.Status == model.StatusStuck {
		return fmt.Sprintf("value %s >= limit %s and no TTL: blocked forever, %s", value, strconv.FormatFloat(rule.Limit, 'f', -1, 64), fix)
	}
	return fmt.Sprintf("value %s, no TTL: %s", value, fix)
}
