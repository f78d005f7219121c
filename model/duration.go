package model

import (
	"fmt"
	"time"
)

// FormatDuration is a time left (or past) the way countertop shows it
// everywhere, in the dashboard, the status line and the CLI: tenths of a
// second under 10s, then "43s", "2m05s", "1h02m", "2d02h". Negative
// durations read as zero.
func FormatDuration(d time.Duration) string {
	d = max(d, 0)
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Truncate(100*time.Millisecond).Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
	}
	return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
}
