package model

import (
	"strconv"
	"time"
)

// FormatDuration is a time left (or past) the way countertop shows it
// everywhere, in the dashboard, the status line and the CLI: tenths of a
// second under 10s, then "43s", "2m05s", "1h02m", "2d02h", from a year
// (365 days) "2y045d", and past a hundred years "> 100y": Redis takes TTLs
// of millions of years, which a count of days would show as a wall of
// digits. Negative durations read as zero.
func FormatDuration(d time.Duration) string {
	var buf [24]byte
	return string(AppendDuration(buf[:0], d))
}

// AppendDuration appends FormatDuration(d) to dst, for callers that write
// a hundred thousand of them.
func AppendDuration(dst []byte, d time.Duration) []byte {
	big, small, units := durationParts(d)
	switch units {
	case tenths:
		dst = strconv.AppendInt(dst, big/10, 10)
		return append(dst, '.', byte('0'+big%10), 's')
	case seconds:
		return append(strconv.AppendInt(dst, big, 10), 's')
	case years:
		dst = strconv.AppendInt(dst, big, 10)
		return append(dst, 'y', byte('0'+small/100), byte('0'+small/10%10), byte('0'+small%10), 'd')
	case centuries:
		return append(dst, centuries...)
	}
	dst = strconv.AppendInt(dst, big, 10)
	return append(dst, units[0], byte('0'+small/10), byte('0'+small%10), units[1])
}

// DurationWidth returns len(FormatDuration(d)) without writing it: the
// snapshot table (internal/report) measures every row's TTL before it
// writes any.
func DurationWidth(d time.Duration) int {
	big, _, units := durationParts(d)
	switch units {
	case tenths:
		return digits(big/10) + len(".0s")
	case seconds:
		return digits(big) + len("s")
	case years:
		return digits(big) + len("y000d")
	case centuries:
		return len(centuries)
	}
	return digits(big) + len("m00s")
}

// The units of durationParts under a minute, and from a year.
const (
	tenths, seconds  = ".", "s"
	years, centuries = "yd", "> 100y"
)

// durationDay and durationYear are the units of long TTLs: a year is 365
// days, as a TTL set as a number of days would count them.
const (
	durationDay  = 24 * time.Hour
	durationYear = 365 * durationDay
)

// durationParts is how FormatDuration writes d: under 10 s, big tenths of
// a second (units tenths); under a minute, big seconds (units seconds);
// else big of the larger unit and small of the smaller, units naming both
// ("ms", "hm", "dh", years); past a hundred years, units centuries alone.
func durationParts(d time.Duration) (big, small int64, units string) {
	d = max(d, 0)
	switch {
	case d < 10*time.Second:
		return int64(d / (100 * time.Millisecond)), 0, tenths
	case d < time.Minute:
		return int64(d / time.Second), 0, seconds
	case d < time.Hour:
		return int64(d / time.Minute), int64(d % time.Minute / time.Second), "ms"
	case d < durationDay:
		return int64(d / time.Hour), int64(d % time.Hour / time.Minute), "hm"
	case d < durationYear:
		return int64(d / durationDay), int64(d % durationDay / time.Hour), "dh"
	case d <= 100*durationYear:
		return int64(d / durationYear), int64(d % durationYear / durationDay), years
	}
	return 0, 0, centuries
}

// digits is how many decimal digits n >= 0 has.
func digits(n int64) int {
	d := 1
	for ; n >= 10; n /= 10 {
		d++
	}
	return d
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
