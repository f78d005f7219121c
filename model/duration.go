package model

import (
	"strconv"
	"time"
)

// FormatDuration is a time left (or past) the way countertop shows it
// everywhere, in the dashboard, the status line and the CLI: tenths of a
// second under 10s, then "43s", "2m05s", "1h02m", "2d02h". Negative
// durations read as zero.
func FormatDuration(d time.Duration) string {
	var buf [24]byte
	return string(AppendDuration(buf[:0], d))
}

// AppendDuration appends FormatDuration(d) to dst, for callers that write
// a hundred thousand of them.
func AppendDuration(dst []byte, d time.Duration) []byte {
	d = max(d, 0)
	var big, small int64 // the larger unit, then the smaller in two digits
	var units string
	switch {
	case d < 10*time.Second:
		tenths := int64(d / (100 * time.Millisecond))
		dst = strconv.AppendInt(dst, tenths/10, 10)
		return append(dst, '.', byte('0'+tenths%10), 's')
	case d < time.Minute:
		dst = strconv.AppendInt(dst, int64(d/time.Second), 10)
		return append(dst, 's')
	case d < time.Hour:
		big, small, units = int64(d/time.Minute), int64(d%time.Minute/time.Second), "ms"
	case d < 24*time.Hour:
		big, small, units = int64(d/time.Hour), int64(d%time.Hour/time.Minute), "hm"
	default:
		big, small, units = int64(d/(24*time.Hour)), int64(d%(24*time.Hour)/time.Hour), "dh"
	}
	dst = strconv.AppendInt(dst, big, 10)
	return append(dst, units[0], byte('0'+small/10), byte('0'+small%10), units[1])
}

// TTLPhrase is a PTTL read just now, as a write's result is reported in the
// status line and by the CLI: "TTL 1m00s" or "no TTL". It is rounded, not
// cut like a countdown: a 60s window read back a millisecond later as
// 59999 ms is "TTL 1m00s", as the user set it.
func TTLPhrase(pttl int64) string {
	if pttl < 0 {
		return "no TTL"
	}
	return "TTL " + FormatDuration(PTTLDuration(pttl).Round(100*time.Millisecond))
}
