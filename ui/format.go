package ui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// parseWindow reads a window a user typed. Redis expires in whole
// milliseconds, so anything finer is refused rather than silently rounded.
func parseWindow(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 || d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q is not a window: give a positive duration in seconds or milliseconds, like 60s, 1m or 1500ms", s) // %q escapes what needs it
	}
	return d, nil
}

// formatValue is the VALUE cell as of now, by layout: integers exactly,
// floats as stored, a bucket's tokens left, when a GCRA key frees, a
// timestamp's time, opaque state's size; for keys that hold no number,
// their type ("text" for a non-numeric string).
func formatValue(c *model.Counter, now time.Time) string {
	spec := c.Layout.Spec()
	switch spec.Shows {
	case model.ShowsNumber: // by its kind, below
	case model.ShowsFreeAt:
		if c.At.IsZero() {
			return "—"
		}
		if left := c.At.Sub(now); left > 0 {
			return "frees in " + model.FormatDuration(left)
		}
		return "free"
	case model.ShowsTime:
		if c.At.IsZero() {
			return "—"
		}
		return formatTime(c.At, now)
	case model.ShowsSize:
		size := formatBytes(len(c.Raw))
		if c.RawCut {
			return "≥" + size
		}
		return size
	}
	switch c.Value.Kind {
	case model.KindInt:
		s := strconv.FormatInt(c.Value.Int, 10)
		if spec.Drains {
			s += " left"
		}
		return s
	case model.KindFloat:
		s := model.Printable(c.Raw)
		if spec.Drains {
			s = strconv.FormatFloat(c.Value.Float, 'f', -1, 64) + " left" // a bucket's tokens may not be its Raw
		}
		return s
	case model.KindNone:
	}
	if c.Type == "string" {
		return "text"
	}
	return model.Printable(c.Type)
}

// formatTime is t in local time: the clock time on the day of now, with
// the date otherwise, as a time a day off reads as the same clock time.
func formatTime(t, now time.Time) string {
	t, now = t.Local(), now.Local()
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}

// formatBytes is a size in B, KiB or MiB.
func formatBytes(n int) string {
	switch {
	case n < 1<<10:
		return strconv.Itoa(n) + " B"
	case n < 1<<20:
		return strconv.FormatFloat(float64(n)/(1<<10), 'f', 1, 64) + " KiB"
	}
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) + " MiB"
}

// valueCell is formatValue in at most width cells. A number too long for
// them is rounded to three significant digits or fewer, with an exponent
// where it needs one (12345678901234567 is 1.23e16), never cut: a number
// with its end cut off reads as a smaller one, and more digits of a
// rounded one are hard to read. Other values are cut, with an ellipsis.
func valueCell(c *model.Counter, width int, now time.Time) string {
	s := formatValue(c, now)
	if cells(s) <= width || c.Value.Kind == model.KindNone {
		return truncate(s, width)
	}
	for digits := min(width, 3); digits > 0; digits-- {
		g := strconv.FormatFloat(c.Value.Float, 'g', digits, 64)
		if mantissa, exp, ok := strings.Cut(g, "e"); ok { // e+16 -> e16, e-05 -> e-5
			sign, exp := strings.TrimPrefix(exp[:1], "+"), strings.TrimLeft(exp[1:], "0")
			g = mantissa + "e" + sign + exp
		}
		if len(g) <= width {
			return g
		}
	}
	return truncate(s, width)
}

// formatRate is a change per second: "+1.2/s", "-30/s", "+4.1k/s".
func formatRate(r float64) string {
	if still(r) {
		return "0/s"
	}
	return signed(r) + "/s"
}

// still reports whether a rate reads as no change: under 0.05/s, which
// would read "+0.0/s", as a rate that fades does before it reaches 0.
func still(r float64) bool { return math.Abs(r) < 0.05 }

// signed is a number with its sign and at most about three significant
// digits, for rates; in a float counter's rate anything goes, so from a
// hundred million on it takes an exponent ("+1e20") to fit its column.
func signed(f float64) string {
	if math.IsNaN(f) {
		return "?"
	}
	sign := "+"
	if f < 0 {
		sign = "-"
	}
	a := math.Abs(f)
	// The form goes by the value as it will read: 9.96 is "+10", not
	// "+10.0", so that a steady rate does not change its look.
	switch {
	case a < 9.95:
		return sign + strconv.FormatFloat(a, 'f', 1, 64)
	case a < 999.5:
		return sign + strconv.FormatFloat(a, 'f', 0, 64)
	case a < 1e8:
		return sign + formatCount(int64(math.Round(a)))
	case math.IsInf(a, 0):
		return sign + "∞"
	}
	mantissa, exp, _ := strings.Cut(strconv.FormatFloat(a, 'e', 0, 64), "e+")
	return sign + mantissa + "e" + strings.TrimLeft(exp, "0")
}

// formatCount is a count of keys for the header: 950, 41k, 1.2M.
func formatCount(n int64) string {
	switch {
	case n < 1000:
		return strconv.FormatInt(n, 10)
	case n < 1_000_000:
		return strconv.FormatInt(n/1000, 10) + "k"
	}
	return strconv.FormatFloat(float64(n)/1e6, 'f', 1, 64) + "M"
}

// thousands is n with its thousands separated by commas: 1,024.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// formatNumber is a limit or other float from a rule, without needless
// decimals: 100, 2.5.
func formatNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// formatPercent is a fraction of the limit as the LIMIT column shows it;
// anything past 999% reads ">999%" so the column keeps its width.
func formatPercent(frac float64) string {
	// 29/100*100 is 28.999999999999996 in floating point: round away
	// what the division left before cutting to whole percents.
	p := math.Floor(math.Round(frac*100*1e6) / 1e6)
	if p > 999 {
		return ">999%"
	}
	return strconv.FormatFloat(p, 'f', 0, 64) + "%"
}

// gaugeEighths are the partial blocks a gauge cell can end on, by eighths.
var gaugeEighths = []string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}

// gauge is a bar width cells wide filled to frac (clamped to 0..1) in
// eighths of a cell, the rest shaded.
func gauge(frac float64, width int) string {
	frac = min(max(frac, 0), 1)
	eighths := int(math.Round(frac * float64(width*8)))
	full, part := eighths/8, eighths%8
	var b strings.Builder
	b.WriteString(strings.Repeat("█", full))
	cells := full
	if part > 0 {
		b.WriteString(gaugeEighths[part])
		cells++
	}
	b.WriteString(strings.Repeat("░", width-cells))
	return b.String()
}

// wrapWords wraps plain text at spaces into lines of at most width cells.
// Unlike ansi.Wrap it never breaks at a hyphen, so a flag such as
// --enable-events stays whole; a word wider than width gets a line of its
// own (and is cut where it is drawn). Only the spaces where a line breaks
// are dropped: a key name with two spaces in a row keeps them.
func wrapWords(s string, width int) []string {
	var lines []string
	line, lineWidth := "", 0
	for _, word := range strings.Split(s, " ") {
		w := ansi.StringWidth(word)
		switch {
		case line == "" && word == "":
			// a space at the start of a line: the break took it
		case line == "":
			line, lineWidth = word, w
		case lineWidth+1+w <= width:
			line += " " + word
			lineWidth += 1 + w
		default:
			lines = append(lines, strings.TrimRight(line, " "))
			line, lineWidth = word, w
		}
	}
	if line = strings.TrimRight(line, " "); line != "" {
		lines = append(lines, line)
	}
	return lines
}

// wrapPhrases is s wrapped at spaces to width in as few lines as wrapWords
// takes, breaking as few of its phrases (see phrases) as it can: a line may
// end early, where a phrase begins, so that a command to run stays whole,
// to read and to copy.
func wrapPhrases(s string, width int) []string {
	ps := phrases(s)
	best := wrapWords(s, width)
	broken := brokenPhrases(best, ps)
	for i := 1; i < len(ps) && broken > 0; i++ {
		lines := append(wrapWords(strings.Join(ps[:i], " "), width), wrapWords(strings.Join(ps[i:], " "), width)...)
		if b := brokenPhrases(lines, ps); len(lines) < len(best) || len(lines) == len(best) && b < broken {
			best, broken = lines, b
		}
	}
	return best
}

// brokenPhrases is how many of phrases lines show on no single line.
func brokenPhrases(lines, phrases []string) int {
	n := 0
	for _, p := range phrases {
		if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, p) }) {
			n++
		}
	}
	return n
}

// phrases is s cut after each "; ", ": ", " —" and " or", each phrase
// keeping its punctuation (or its "or") and losing the space that follows.
func phrases(s string) []string {
	var out []string
	for s != "" {
		cut := len(s)
		for _, sep := range []string{"; ", ": ", " — ", " or "} {
			if i := strings.Index(s, sep); i >= 0 && i+len(sep)-1 < cut {
				cut = i + len(sep) - 1 // before the space that ends sep
			}
		}
		out = append(out, s[:cut])
		s = strings.TrimPrefix(s[cut:], " ")
	}
	return out
}

// wrapLines is text (plain, already printable) wrapped at spaces to width
// in at most maxLines lines, each cut to the width; when it needs more, the
// last line ends in " …" to say so. The header's feed note and the status
// line are both drawn with it.
func wrapLines(text string, width, maxLines int) []string {
	if cells(text) <= width {
		return []string{text}
	}
	lines := wrapPhrases(text, width)
	if len(lines) > maxLines {
		lines = lines[:maxLines]
		lines[maxLines-1] += " …"
	}
	for i, l := range lines {
		lines[i] = truncate(l, width)
	}
	return lines
}
