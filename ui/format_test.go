package ui

import (
	"strings"
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
		if got := formatDuration(d); got != want {
			t.Errorf("formatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestGauge(t *testing.T) {
	for frac, want := range map[float64]string{
		0: "░░░░░░", 0.5: "███░░░", 0.58: "███▌░░", 1: "██████", 2.5: "██████",
	} {
		if got := gauge(frac, 6); got != want {
			t.Errorf("gauge(%v) = %q, want %q", frac, got, want)
		}
	}
}

func TestCountdownNeverGoesNegative(t *testing.T) {
	c := &clock{testNow()}
	m := newModel(t, nil, 120, 40, str("ratelimit:api:1", "5", 3_000))
	m.now = c.now
	for _, step := range []struct {
		after time.Duration
		want  string
	}{{0, "1.5s"}, {time.Second, "0.5s"}, {2 * time.Second, "expired"}, {time.Hour, "expired"}} {
		c.t = testNow().Add(step.after)
		if line := selectedLine(t, m); !strings.Contains(line, " "+step.want+" ") {
			t.Errorf("%v later the TTL should read %q: %q", step.after, step.want, line)
		}
	}
}
