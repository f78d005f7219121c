package model

import (
	"fmt"
	"math"
	"testing"
	"time"
)

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		-time.Second:                               "0.0s",
		400 * time.Millisecond:                     "0.4s",
		9*time.Second + 990*time.Millisecond:       "9.9s",
		43 * time.Second:                           "43s",
		2*time.Minute + 5*time.Second:              "2m05s",
		time.Hour + 2*time.Minute + 59*time.Second: "1h02m",
		50 * time.Hour:                             "2d02h",
		364*24*time.Hour + 23*time.Hour:            "364d23h",
		365 * 24 * time.Hour:                       "1y000d",
		(2*365 + 45) * 24 * time.Hour:              "2y045d",
		100 * 365 * 24 * time.Hour:                 "100y000d",
		100*365*24*time.Hour + time.Millisecond:    "> 100y",
		math.MaxInt64:                              "> 100y",
	} {
		t.Run(d.String(), func(t *testing.T) {
			if got := FormatDuration(d); got != want {
				t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
			}
		})
	}
}

// AppendDuration writes what fmt would, from sub-second to centuries.
func TestAppendDurationIsTheFmtForm(t *testing.T) {
	viaFmt := func(d time.Duration) string {
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
		case d < 365*24*time.Hour:
			return fmt.Sprintf("%dd%02dh", int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour))
		case d <= 100*365*24*time.Hour:
			return fmt.Sprintf("%dy%03dd", int(d/(365*24*time.Hour)), int(d%(365*24*time.Hour)/(24*time.Hour)))
		}
		return "> 100y"
	}
	check := func(d time.Duration) {
		if got, want := string(AppendDuration([]byte("TTL "), d)), "TTL "+viaFmt(d); got != want {
			t.Errorf("AppendDuration(%v) = %q, want %q", d, got, want)
		}
	}
	for d := -time.Second; d < 100*time.Second; d += 7 * time.Millisecond {
		check(d)
	}
	for d := time.Duration(0); d < math.MaxInt64/5; d = d*5/4 + time.Second + 13*time.Millisecond {
		check(d)
	}
	for _, years := range []time.Duration{1, 99, 100} {
		year := years * 365 * 24 * time.Hour
		check(year - time.Millisecond)
		check(year)
		check(year + time.Millisecond)
	}
	check(math.MaxInt64)
}

func TestTTLPhraseRoundsToWhatTheUserSet(t *testing.T) {
	for pttl, want := range map[int64]string{-1: "no TTL", 59_999: "TTL 1m00s", 9_999: "TTL 10s", 9_940: "TTL 9.9s", 450: "TTL 0.5s",
		// Redis takes TTLs past what a time.Duration holds (292 years):
		// they read as more than a century, not as 0.0s, a wrapped value
		// or the 106751d23h that is the longest Duration.
		3_153_600_000_000: "TTL 100y000d", 10_000_000_000_000: "TTL > 100y", 20_000_000_000_000: "TTL > 100y",
		9_200_000_000_000_000_000: "TTL > 100y", math.MaxInt64: "TTL > 100y"} {
		t.Run(fmt.Sprint(pttl), func(t *testing.T) {
			if got := TTLPhrase(pttl); got != want {
				t.Errorf("TTLPhrase(%d) = %q, want %q", pttl, got, want)
			}
		})
	}
}
