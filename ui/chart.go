package ui

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/guptarohit/asciigraph"

	"github.com/countertop/countertop/model"
)

// Chart sizes on the detail screen: the plot's rows, and the columns of
// each plot (its labels not included), from the least it is drawn in to
// the most it takes on a wide screen.
const (
	chartRows     = 5
	minChartWidth = 16
	maxChartWidth = 48
	chartGap      = "    " // between the value and the TTL chart, side by side
	minChartSpans = 2      // spans with a number a chart needs
)

// limitChars draw the limit's line, told from the value's by its dashes.
var limitChars = asciigraph.CreateCharSet("┄")

// historyLines are the detail screen's charts of the key's last minute:
// its value, with its limit as a line, and its TTL, each to its own scale,
// side by side where the width allows. Only numbers reach the charts (the
// Store's trend, the rule's limit), never a key's name or text. Until the
// Store holds enough of the key's history, a line says how much it has.
func (m *Model) historyLines(c *model.Counter, rule model.Rule, now time.Time) []string {
	label := m.theme.Label.Render(padRight("history", labelWidth))
	t, ok := m.store.Trend(c.ID(), now)
	say := func(text string) []string {
		lines := wrapWords(text, max(20, m.width-labelWidth))
		for i := range lines {
			lines[i] = strings.Repeat(" ", labelWidth) + lines[i]
		}
		lines[0] = label + lines[0][labelWidth:]
		return lines
	}
	if _, isNum := c.Value.Number(); !isNum && t.Readings == 0 {
		return say("no chart: the key holds no number")
	}
	if !ok || t.Readings < minChartSpans {
		return say(fmt.Sprintf("collecting history: %s so far (a chart needs %d, one per %s; a key's history starts at its first change)",
			plural(t.Readings, "reading"), minChartSpans, model.FormatDuration(model.TrendStep)))
	}
	room := m.width - labelWidth
	sideBySide := room >= 2*(maxChartWidth/2+chartLabels)+len(chartGap)
	width := room - chartLabels
	if sideBySide {
		width = (room-len(chartGap))/2 - chartLabels
	}
	width = max(minChartWidth, min(maxChartWidth, width))

	value, valueKey := m.valueChart(&t, c, rule, width)
	ttl, ttlKey := ttlChart(&t, width)
	lines := []string{label + "the last minute, a point each " + model.FormatDuration(model.TrendStep) + ", the reading nearest the limit"}
	indent := strings.Repeat(" ", labelWidth)
	if sideBySide && value != "" && ttl != "" {
		value = lipgloss.JoinVertical(lipgloss.Left, m.theme.Label.Render(valueKey), value)
		ttl = lipgloss.JoinVertical(lipgloss.Left, m.theme.Label.Render(ttlKey), ttl)
		for _, l := range strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, value, chartGap, ttl), "\n") {
			lines = append(lines, indent+l)
		}
		return lines
	}
	lines = append(lines, indent+m.theme.Label.Render(valueKey))
	if value != "" {
		for _, l := range strings.Split(value, "\n") {
			lines = append(lines, indent+l)
		}
	}
	lines = append(lines, indent+m.theme.Label.Render(ttlKey))
	if ttl != "" {
		for _, l := range strings.Split(ttl, "\n") {
			lines = append(lines, indent+l)
		}
	}
	return lines
}

// chartLabels is about the width of a chart's value labels and axis.
const chartLabels = 10

// valueChart is the chart of t's values, with the limit as a line when the
// key has one, and the key to its lines.
func (m *Model) valueChart(t *model.Trend, c *model.Counter, rule model.Rule, width int) (chart, key string) {
	series := [][]float64{finite(t.Values[:])}
	if points(series[0]) < minChartSpans {
		return "", "value: too few numbers to draw"
	}
	opts := append(chartOptions(width), asciigraph.LowerBound(0),
		asciigraph.YAxisValueFormatter(chartNumber))
	key = "value"
	if _, ok := c.Percent(rule.Limit); ok {
		limit := make([]float64, model.TrendBuckets)
		for k := range limit {
			limit[k] = rule.Limit
		}
		series = append(series, limit)
		opts = append(opts, asciigraph.SeriesChars(asciigraph.DefaultCharSet, limitChars))
		key = "value ─, limit " + formatNumber(rule.Limit) + " ┄"
		if c.Layout.Spec().Drains { // full at the line, empty at 0: the other way up from a counter
			key = "tokens left ─, of " + formatNumber(rule.Limit) + " ┄ (empty at 0)"
		}
	}
	return asciigraph.PlotMany(series, opts...), key
}

// ttlChart is the chart of t's TTLs, and the key to it; no chart where the
// key had no expiry, or too few readings with one.
func ttlChart(t *model.Trend, width int) (chart, key string) {
	ttls := finite(t.TTLs[:])
	for k, s := range ttls {
		if s < 0 {
			ttls[k] = math.NaN() // no expiry: no point
		}
	}
	if points(ttls) < minChartSpans {
		return "", "TTL: no expiry for most of the minute"
	}
	return asciigraph.Plot(ttls, append(chartOptions(width), asciigraph.LowerBound(0),
		asciigraph.YAxisValueFormatter(chartDuration))...), "TTL"
}

// chartOptions are what every chart of the detail screen shares: its size
// and a time axis from a minute ago to now.
func chartOptions(width int) []asciigraph.Option {
	span := model.TrendStep.Seconds() * model.TrendBuckets
	return []asciigraph.Option{
		asciigraph.Height(chartRows), asciigraph.Width(width),
		asciigraph.XAxisRange(-span, 0), asciigraph.XAxisTickCount(3),
		asciigraph.XAxisValueFormatter(func(s float64) string {
			if s >= 0 {
				return "now"
			}
			return "-" + strconv.FormatFloat(-s, 'f', 0, 64) + "s"
		}),
	}
}

// finite is a copy of values with each infinity a NaN, which the charts
// leave out.
func finite(values []float64) []float64 {
	out := make([]float64, len(values))
	for k, v := range values {
		if math.IsInf(v, 0) {
			v = math.NaN()
		}
		out[k] = v
	}
	return out
}

// points is how many of values a chart draws.
func points(values []float64) int {
	n := 0
	for _, v := range values {
		if !math.IsNaN(v) {
			n++
		}
	}
	return n
}

// chartNumber is a value label of a chart: three digits or so, as the
// chart is a picture (the value line gives the exact number).
func chartNumber(f float64) string {
	a := math.Abs(f)
	switch {
	case a >= 1e6:
		return strconv.FormatFloat(f, 'g', 3, 64)
	case a >= 100:
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	digits := 2
	if a >= 10 {
		digits = 1
	}
	out := strconv.FormatFloat(f, 'f', digits, 64)
	out = strings.TrimRight(strings.TrimRight(out, "0"), ".")
	if out == "-0" {
		out = "0"
	}
	return out
}

// chartDuration is a TTL label of a chart, s seconds.
func chartDuration(s float64) string {
	if s < 0.05 {
		return "0s"
	}
	return model.FormatDuration(time.Duration(s * float64(time.Second)))
}
