package model

import (
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
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestTTLPhraseRoundsToWhatTheUserSet(t *testing.T) {
	for pttl, want := range map[int64]string{-1: "no TTL", 59_999: "TTL 1m00s", 9_999: "TTL 10s", 9_940: "TTL 9.9s", 450: "TTL 0.5s"} {
		if got := TTLPhrase(pttl); got != want {
			t.Errorf("TTLPhrase(%d) = %q, want %q", pttl, got, want)
		}
	}
}
