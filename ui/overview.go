package ui

import (
	"strconv"
	"strings"

	"github.com/countertop/countertop/model"
)

// The overview panel (o) sits above the table: how many keys have each
// status, and a histogram of the keys by share of their limit, for "how
// many clients are near their limit right now". It counts every key, not
// only those the filter shows, and says so when a filter is set: in an
// incident the question is the whole keyspace. It reads model.Overview,
// counts the Store keeps as readings arrive, so a frame of it costs the
// same at a million keys as at ten.

// The panel's shapes, by the lines it may take: a bar per tenth of the
// limit beside a column of statuses; a bar per fifth beside two columns;
// one line of counts. Each takes at most half the table's room.
const (
	overviewFull    = 1 + model.NumPercentBuckets + 1 // title, bars, a blank line
	overviewCompact = 1 + (model.NumPercentBuckets+1)/2 + 1
	overviewLine    = 1
)

// overviewShown reports whether the panel is drawn now: o turned it on and
// the table is on screen.
func (m *Model) overviewShown() bool {
	return m.overview && m.screen == screenTable && !m.showHelp
}

// overviewHeight is how many lines the panel takes from the table: 0 when
// it is not shown, or when the table would keep fewer than two rows.
func (m *Model) overviewHeight() int {
	if !m.overviewShown() {
		return 0
	}
	room := m.bodyHeight() / 2
	switch {
	case room >= overviewFull:
		return overviewFull
	case room >= overviewCompact:
		return overviewCompact
	case m.bodyHeight()-overviewLine >= 3: // titles and two rows
		return overviewLine
	}
	return 0
}

// toggleOverview turns the panel on or off, keeping the selection in view
// of the rows left.
func (m *Model) toggleOverview() {
	m.overview = !m.overview
	m.follow()
}

// bucketLabel is the label of bucket i of n (n-1 of them below the
// limit), "0-10%" to "≥100%".
func bucketLabel(i, n int) string {
	if i == n-1 {
		return "≥100%"
	}
	step := 100 / (n - 1)
	return strconv.Itoa(i*step) + "-" + strconv.Itoa((i+1)*step) + "%"
}

// overviewBuckets is o's histogram with width buckets' of it merged into
// each bar: 1 or 2 (the last, at or past the limit, always apart).
func overviewBuckets(o *model.Overview, merge int) []int {
	below := model.NumPercentBuckets - 1
	bars := make([]int, 0, below/merge+1)
	for i := 0; i < below; i += merge {
		n := 0
		for j := i; j < min(i+merge, below); j++ {
			n += o.ByPercent[j]
		}
		bars = append(bars, n)
	}
	return append(bars, o.ByPercent[below])
}

// overviewView is the panel in height lines (overviewHeight's), each at
// most the screen's width.
func (m *Model) overviewView(height int) []string {
	if height <= 0 {
		return nil
	}
	o := m.store.Overview()
	if height < overviewCompact {
		return []string{truncate(m.overviewLine(&o), m.width)}
	}
	merge, statusColumns := 1, 1
	if height < overviewFull {
		merge, statusColumns = 2, 2
	}
	bars := overviewBuckets(&o, merge)
	counts := m.statusCells(&o, statusColumns)
	lines := make([]string, 0, height)
	title := m.theme.Heading.Render("Overview") + ": " + thousands(o.Total) + " keys"
	left := cells(title)
	if len(counts) > 0 {
		left = max(left, cells(counts[0].plain))
	}
	histogram := m.histogram(&o, bars, m.width-left-len(overviewGap))
	if left+len(overviewGap)+histogram.width > m.width {
		// Too narrow for the two side by side: the counts on a line.
		lines = append(lines, truncate(title+"  "+histogram.title, m.width), truncate(m.statusLine(&o), m.width))
		for _, l := range histogram.lines {
			lines = append(lines, truncate(l, m.width))
		}
		return padLines(lines[:min(len(lines), height)], height)
	}
	lines = append(lines, truncate(title+strings.Repeat(" ", max(1, left+len(overviewGap)-cells(title)))+histogram.title, m.width))
	for i := range max(len(counts), len(histogram.lines)) {
		line := strings.Repeat(" ", left)
		if i < len(counts) {
			line = counts[i].styled + strings.Repeat(" ", left-cells(counts[i].plain))
		}
		if i < len(histogram.lines) {
			line += overviewGap + histogram.lines[i]
		}
		lines = append(lines, line)
	}
	return padLines(lines[:min(len(lines), height)], height)
}

// overviewGap is between the status counts and the histogram.
const overviewGap = "    "

// padLines is lines with empty lines after them up to n.
func padLines(lines []string, n int) []string {
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// styledCell is a cell of the panel, styled, and its text as it takes
// room.
type styledCell struct{ styled, plain string }

// statusCells is the count of each status, most severe first, in columns
// side by side (a status per line down each): the name in its status's
// look, or dim when no key has it.
func (m *Model) statusCells(o *model.Overview, columns int) []styledCell {
	width := 1
	for _, n := range o.ByStatus {
		width = max(width, len(thousands(n)))
	}
	rows := (int(model.NumStatuses) + columns - 1) / columns
	out := make([]styledCell, rows)
	for r := range rows {
		var styled, plain strings.Builder
		styled.WriteString("  ")
		plain.WriteString("  ")
		for c := range columns {
			st := model.Status(c*rows + r)
			if c > 0 {
				styled.WriteString("  ")
				plain.WriteString("  ")
			}
			if st >= model.NumStatuses {
				blank := strings.Repeat(" ", statusWidth+1+width)
				styled.WriteString(blank)
				plain.WriteString(blank)
				continue
			}
			cell := padRight(st.String(), statusWidth) + " " + padLeft(thousands(o.ByStatus[st]), width)
			plain.WriteString(cell)
			style := m.theme.Status[st]
			if o.ByStatus[st] == 0 {
				style = m.theme.Dim
			}
			styled.WriteString(style.Render(cell))
		}
		out[r] = styledCell{styled.String(), plain.String()}
	}
	return out
}

// statusLine is the count of each status that some key has, on one line,
// for a panel with no room for columns.
func (m *Model) statusLine(o *model.Overview) string {
	var parts []string
	for st := range model.Status(model.NumStatuses) {
		if n := o.ByStatus[st]; n > 0 {
			parts = append(parts, m.theme.Status[st].Render(thousands(n)+" "+st.String()))
		}
	}
	if len(parts) == 0 {
		return "  " + m.theme.Dim.Render("no keys")
	}
	return "  " + strings.Join(parts, m.theme.Dim.Render(" · "))
}

// overviewLine is the panel in one line, for a short screen: the counts
// of the statuses some key has, and how many keys are near or past their
// limit.
func (m *Model) overviewLine(o *model.Overview) string {
	below := model.NumPercentBuckets - 1
	near := o.ByPercent[below-1] + o.ByPercent[below-2]
	sep := m.theme.Dim.Render(" · ")
	return m.statusLine(o) + sep + "80-100%: " + thousands(near) + sep + "≥100%: " + thousands(o.ByPercent[below])
}

// histogramView is the panel's bars, with their title and how wide they
// are.
type histogramView struct {
	title string
	lines []string
	width int
}

// Bar widths: the histogram's bars take what the row leaves them, within
// these.
const (
	minBar = 8
	maxBar = 40
)

// histogram is the bars of counts (a bar per bucket, the last for the keys
// at or past their limit) in width cells at most: each bucket's label, its
// count, and a bar as long as its count's share of the largest, in the
// gauge's colour of that share (green, yellow from 80%, orange at the
// limit). A bucket with any key has a bar, however short.
func (m *Model) histogram(o *model.Overview, counts []int, width int) histogramView {
	const labelWidth = len("90-100%")
	countWidth, most := 1, 0
	for _, n := range counts {
		countWidth, most = max(countWidth, len(thousands(n))), max(most, n)
	}
	bar := max(minBar, min(maxBar, width-labelWidth-1-countWidth-1))
	h := histogramView{width: labelWidth + 1 + countWidth + 1 + bar}
	h.title = m.theme.Heading.Render("% of limit") + m.theme.Dim.Render(" ("+thousands(o.Limited())+" keys have a limit)")
	if m.store.Filter() != "" {
		h.title += m.theme.Dim.Render(" · all keys, not only the filter's")
	}
	for i, n := range counts {
		label := padLeft(bucketLabel(i, len(counts)), labelWidth)
		status := model.StatusOK
		switch frac := float64(i) / float64(len(counts)-1); {
		case i == len(counts)-1:
			status = model.StatusOver
		case frac >= model.DefaultWarnAt-1e-9:
			status = model.StatusWarn
		}
		count := padLeft(thousands(n), countWidth)
		if n == 0 {
			h.lines = append(h.lines, m.theme.Dim.Render(label+" "+count))
			continue
		}
		cellsOf := float64(n) / float64(max(most, 1)) * float64(bar)
		h.lines = append(h.lines, label+" "+count+" "+m.theme.Gauge[status].Render(histogramBar(cellsOf)))
	}
	return h
}

// histogramBar is a bar of cells cells, in eighths of a cell; never less
// than one eighth.
func histogramBar(cellsOf float64) string {
	eighths := max(1, int(cellsOf*8+0.5))
	s := strings.Repeat("█", eighths/8)
	if part := eighths % 8; part > 0 {
		s += gaugeEighths[part]
	}
	return s
}
