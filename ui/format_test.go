package ui

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

func TestGauge(t *testing.T) {
	for frac, want := range map[float64]string{
		0: "░░░░░░", 0.5: "███░░░", 0.58: "███▌░░", 1: "██████", 2.5: "██████",
	} {
		t.Run(fmt.Sprint(frac), func(t *testing.T) {
			if got := gauge(frac, 6); got != want {
				t.Errorf("gauge(%v) = %q, want %q", frac, got, want)
			}
		})
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
		t.Run(step.after.String(), func(t *testing.T) {
			c.t = testNow().Add(step.after)
			if line := selectedLine(t, m); !strings.Contains(line, " "+step.want+" ") {
				t.Errorf("%v later the TTL should read %q: %q", step.after, step.want, line)
			}
		})
	}
}

func TestWrapWordsKeepsFlagsWhole(t *testing.T) {
	got := wrapWords("run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe'", 20)
	want := []string{"run with", "--enable-events or", "CONFIG SET", "notify-keyspace-events", "'K$gxe'"}
	if !slices.Equal(got, want) {
		t.Errorf("wrapWords = %q, want %q", got, want)
	}
}

// The LIMIT column's percentage is whole percents, cut, not rounded (99.9%
// is not yet the limit), and never one short because of floating point:
// 29 of 100 is 29%, 201 of 100 is 201%.
func TestFormatPercent(t *testing.T) {
	for _, tc := range []struct {
		value, limit float64
		want         string
	}{
		{29, 100, "29%"}, {201, 100, "201%"}, {57, 100, "57%"}, {7, 7, "100%"},
		{999, 1000, "99%"}, {1, 3, "33%"}, {2, 3, "66%"}, {0, 100, "0%"}, {10_000, 1, ">999%"},
	} {
		t.Run(fmt.Sprintf("%v of %v", tc.value, tc.limit), func(t *testing.T) {
			if got := formatPercent(tc.value / tc.limit); got != tc.want {
				t.Errorf("%v of %v: %q, want %q", tc.value, tc.limit, got, tc.want)
			}
		})
	}
}

// A float counter can jump by any amount: its rate fits the RATE column
// whatever it is, and never reads as a wrapped integer.
func TestFormatRateFitsItsColumn(t *testing.T) {
	for r, want := range map[float64]string{
		0: "0/s", 0.04: "0/s", -0.01: "0/s", 0.25: "+0.2/s", -3: "-3.0/s", 9.94: "+9.9/s", 9.96: "+10/s", 42: "+42/s",
		999.4: "+999/s", 999.6: "+1k/s", 4100: "+4k/s", 2.5e6: "+2.5M/s",
		99_949_999: "+99.9M/s", 1.5e8: "+2e8/s", 1e20: "+1e20/s", -1e300: "-1e300/s", math.Inf(1): "+∞/s", math.Inf(-1): "-∞/s", math.NaN(): "?/s",
	} {
		t.Run(fmt.Sprint(r), func(t *testing.T) {
			got := formatRate(r)
			if got != want {
				t.Errorf("formatRate(%g) = %q, want %q", r, got, want)
			}
			if w := lipgloss.Width(got); w > rateWidth {
				t.Errorf("formatRate(%g) = %q is %d cells, the column %d", r, got, w, rateWidth)
			}
		})
	}
}

// A number too long for the VALUE column keeps its magnitude, rounded to
// three digits at most, and never has its end cut off (it would read as a
// smaller number); text is cut with an ellipsis.
func TestValueCellNeverCutsANumber(t *testing.T) {
	rules := testRules()
	for _, tc := range []struct {
		raw   string
		width int
		want  string
	}{
		{"17", 5, "17"},
		{"12345678901234567", 20, "12345678901234567"},
		{"12345678901234567", 10, "1.23e16"},
		{"-12345678901234567", 10, "-1.23e16"},
		{"9223372036854775807", 8, "9.22e18"},
		{"9223372036854775807", 6, "9.2e18"},
		{"9223372036854775807", 5, "9e18"},
		{"1234567", 6, "1.23e6"},
		{"0.30000000000000004", 8, "0.3"},
		{"0.000000123456789", 9, "1.23e-7"},
		{"1.000000000000000000000001", 6, "1"},
		{"not a number", 3, "te…"}, // "text"
	} {
		t.Run(fmt.Sprintf("%s in %d", tc.raw, tc.width), func(t *testing.T) {
			o := str("k", tc.raw, 1000)
			c := model.NewCounter(&o, rules)
			got := valueCell(&c, tc.width, time.Now())
			if got != tc.want {
				t.Errorf("valueCell(%s, %d) = %q, want %q", tc.raw, tc.width, got, tc.want)
			}
			if w := lipgloss.Width(got); w > tc.width {
				t.Errorf("valueCell(%s, %d) = %q is %d cells", tc.raw, tc.width, got, w)
			}
		})
	}
}

// A note's command to run is not broken across lines where it fits on one
// of its own, at no cost in lines; and the wrapped text is the text.
func TestWrapKeepsACommandWhole(t *testing.T) {
	// As redisclient's notificationsNote writes it.
	note := `polling: keyspace notifications are off on the server (notify-keyspace-events=""); run with --enable-events or CONFIG SET notify-keyspace-events 'K$gxe' to get live updates`
	const command = "CONFIG SET notify-keyspace-events 'K$gxe'"
	for width := 62; width < cells(note); width++ {
		lines := wrapLines(note, width, 3)
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, command) }) {
			t.Errorf("at %d columns the command is broken:\n%s", width, strings.Join(lines, "\n"))
		}
		if words := wrapWords(note, width); len(lines) > len(words) {
			t.Errorf("at %d columns: %d lines, where breaking at any space takes %d", width, len(lines), len(words))
		}
		for _, l := range lines {
			if cells(l) > width {
				t.Errorf("at %d columns, a line of %d: %q", width, cells(l), l)
			}
		}
		if got := strings.Join(lines, " "); got != note {
			t.Errorf("at %d columns the lines say %q", width, got)
		}
	}
	// Too long for a line of its own, a phrase breaks at its words.
	got := wrapLines("short: "+strings.Repeat("word ", 10)+"end", 16, 9)
	want := []string{"short: word word", "word word word", "word word word", "word word end"}
	if !slices.Equal(got, want) {
		t.Errorf("a long phrase: %q, want %q", got, want)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1024: "1,024", 1_000_000: "1,000,000", -12345: "-12,345"} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			if got := thousands(n); got != want {
				t.Errorf("thousands(%d) = %q, want %q", n, got, want)
			}
		})
	}
}
