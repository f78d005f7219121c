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
