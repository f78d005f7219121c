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

// TTLPhrase is a PTTL read just now, as a write's result is reported in the
// status line and by the CLI: "TTL 1m00s" or "no TTL". It is rounded, not
// cut like a countdown: a 60s window read back a millisecond later as
// 59999 ms is "TTL 1m00s", as the user set it.
func TTLPhrase(pttl int64) string {
	if pttl < 0 {
		return "no TTL"
	}
	return "TTL " + FormatDuration((time.Duration(pttl) * time.Millisecond).Round(100*time.Millisecond))
}
