package ui

import (
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// Smallest terminal the dashboard draws in; below it, it says so.
const (
	minWidth  = 40
	minHeight = 8
)

// View draws the whole screen: header, body (table, detail or help), status
// (one line, more when it is long) and help line, with a confirmation
// dialog on top when one is open. Every line is cut to the terminal's
// width, so nothing wraps but what is wrapped on purpose.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = m.title
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion // clicks and the wheel; no motion reports
	}
	return v
}

// render is View's content: the whole screen as one string.
func (m *Model) render() string {
	if m.width == 0 || m.height == 0 {
		return ""
	}
	if m.width < minWidth || m.height < minHeight {
		return m.tooSmall()
	}
	lines := make([]string, 0, m.height)
	lines = append(lines, m.headerView()...)
	body := m.bodyHeight()
	content, fitted := m.pagerView(body), false // fitted: the lines are known to fit the width
	if content == nil {
		panel := m.overviewHeight()
		content, fitted = append(m.overviewView(panel), m.tableView(body-panel)...), true
	}
	for i := range body {
		line := ""
		if i < len(content) {
			line = content[i]
			if !fitted {
				line = truncate(line, m.width)
			}
		}
		lines = append(lines, line)
	}
	lines = append(lines, m.statusView()...)
	lines = append(lines, m.helpLine())
	frame := strings.Join(lines, "\n")
	if m.confirm != nil {
		frame = overlay(frame, m.confirmView(), m.width, m.height)
	}
	return frame
}

// tooSmall is what a terminal under minWidth x minHeight shows: the size
// needed and its own, wrapped to its width, in fewer words where it has
// too few lines for them.
func (m *Model) tooSmall() string {
	need, have := strconv.Itoa(minWidth)+"x"+strconv.Itoa(minHeight), strconv.Itoa(m.width)+"x"+strconv.Itoa(m.height)
	var lines []string
	for _, msg := range []string{"Need at least " + need + "; this is " + have + ".", "Need " + need + ", not " + have + "."} {
		if lines = wrapWords(msg, m.width); len(lines) <= m.height {
			break
		}
	}
	for i, l := range lines {
		lines[i] = truncate(l, m.width)
	}
	return strings.Join(lines[:min(len(lines), m.height)], "\n")
}

// pagerContent is the help or the detail screen, whichever covers the
// table, all of it; nil for the table.
func (m *Model) pagerContent() []string {
	switch {
	case m.showHelp:
		return m.fullHelp()
	case m.screen == screenDetail:
		return m.detailView()
	}
	return nil
}

// fullHelp is the ? screen: the keys, then what each status means in the
// look the table gives it, then how to write a filter.
func (m *Model) fullHelp() []string {
	lines := m.keysHelp()
	lines = append(lines, "", m.theme.Heading.Render("Statuses")+m.theme.Dim.Render(" (most severe first)"))
	for st := range model.Status(model.NumStatuses) {
		name := m.theme.Status[st].Render(st.String())
		lines = append(lines, m.legendLines(name, statusWidth, statusMeaning(st))...)
	}
	lines = append(lines, "", m.theme.Heading.Render("Trend")+m.theme.Dim.Render(" (the TREND column: the last minute, a block each "+model.FormatDuration(model.TrendStep)+", now on the right)"))
	lines = append(lines, m.legendLines("▁▂▃▄▅▆▇█", statusWidth, "from 0 to the key's limit (a key without one: to its highest of the minute); blank until the key changes; enter charts it")...)
	lines = append(lines, "", m.theme.Heading.Render("Filter")+m.theme.Dim.Render(" (/: words apart by spaces; a key must match every one)"))
	for _, f := range filterSyntax {
		lines = append(lines, m.legendLines(f[0], filterTermWidth, f[1])...)
	}
	return lines
}

// keysHelp is the help's columns side by side, or one under the other when
// they do not fit the width side by side (the pager scrolls them).
func (m *Model) keysHelp() []string {
	groups := m.keys.FullHelp()
	whole := m.help
	whole.SetWidth(0) // as wide as the columns need: the help cuts columns off to fit its width
	if side := whole.FullHelpView(groups); lipgloss.Width(side) <= m.width {
		return strings.Split(side, "\n")
	}
	var lines []string
	for i, g := range groups {
		if i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, strings.Split(m.help.FullHelpView([][]key.Binding{g}), "\n")...)
	}
	return lines
}

// legendLines is term (styled) in a column width cells wide, then text
// wrapped beside it.
func (m *Model) legendLines(term string, width int, text string) []string {
	indent := strings.Repeat(" ", 2+width+1)
	wrapped := wrapWords(text, max(20, m.width-len(indent)))
	first := ""
	if len(wrapped) > 0 {
		first, wrapped = wrapped[0], wrapped[1:]
	}
	lines := []string{"  " + term + strings.Repeat(" ", max(1, width+1-lipgloss.Width(term))) + first}
	for _, l := range wrapped {
		lines = append(lines, indent+l)
	}
	return lines
}

// statusMeaning is what a status says of a counter, in a few words, for
// the ? screen.
func statusMeaning(st model.Status) string {
	switch st {
	case model.StatusStuck:
		return "no TTL and at or over its limit: it refuses every request and never resets"
	case model.StatusExtending:
		return "grew past a whole window with its TTL pushed back (EXPIRE without NX): its window never closes"
	case model.StatusNoExpiry:
		return "no TTL, though its rule expects one: it will never reset"
	case model.StatusLeak:
		return "a past window's key (or a past time) with no TTL: nothing reads it again, and it is never freed"
	case model.StatusOver:
		return "at or over its limit: requests are refused until it expires"
	case model.StatusWarn:
		return "at " + formatPercent(model.DefaultWarnAt) + " of its limit or more (a rule's warn_at)"
	case model.StatusOK:
		return "a number under its limit, with a TTL or a rule that wants none"
	case model.StatusNotCounter:
		return "another type, or text that is not a number"
	}
	return ""
}

// filterTermWidth is the width of the terms column of the filter syntax.
const filterTermWidth = 11

// filterSyntax is the filter's terms as model.Store.SetFilter reads them,
// and what each keeps.
var filterSyntax = [][2]string{
	{"api:42", `keys whose name holds the text, in any case, as the table shows it (\e for ESC)`},
	{"is:STATUS", "keys of that status (is:stuck, is:warn, …); a word after is: that names no status is matched as text"},
	{"is:problem", "keys whose status is a problem, as check reports them: " + problemNames()},
	{"↑/↓", "the filters kept earlier this session; esc clears the filter"},
}

// problemNames is the statuses is:problem keeps: "stuck, extending, no-expiry or leak".
func problemNames() string {
	var names []string
	for st := range model.Status(model.NumStatuses) {
		if st.Problem() {
			names = append(names, st.String())
		}
	}
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// pagerView is what of pagerContent the body shows, scrolled by
// m.scroll: its last line says there is more below when there is, and its
// first that there is more above, where the body has room for those and a
// line between them. nil for the table.
func (m *Model) pagerView(body int) []string {
	content := m.pagerContent()
	if content == nil || body <= 0 {
		return content
	}
	top := min(m.scroll, m.scrollLimit(len(content)))
	shown := slices.Clone(content[top:min(len(content), top+body)])
	if body < 3 {
		return shown // every line for the content
	}
	if top > 0 {
		shown[0] = m.theme.Dim.Render("↑ more above (↑/k, pgup)")
	}
	if top+body < len(content) {
		shown[len(shown)-1] = m.theme.Dim.Render("↓ more below (↓/j, pgdn)")
	}
	return shown
}

// scrollLimit is how far a pager of n lines scrolls: until its last line
// is in sight.
func (m *Model) scrollLimit(n int) int { return max(0, n-m.bodyHeight()) }

// scrolled moves the help or the detail screen by delta lines from where
// it shows now (a larger screen, or a shorter detail, may show it less
// far down than m.scroll), within what there is to show.
func (m *Model) scrolled(delta int) {
	limit := m.scrollLimit(len(m.pagerContent()))
	m.scroll = max(0, min(min(m.scroll, limit)+delta, limit))
}

// bodyHeight is the number of lines between the header and the footer.
func (m *Model) bodyHeight() int { return max(0, m.height-m.headerLines()-m.footerLines()) }

// footerLines is the status (one line or more, see statusView) and the help
// line.
func (m *Model) footerLines() int { return len(m.statusLines()) + 1 }

// overlay draws box centred on frame.
func overlay(frame, box string, width, height int) string {
	bw, bh := lipgloss.Size(box)
	x, y := max(0, (width-bw)/2), max(0, (height-bh)/2)
	layers := lipgloss.NewCompositor(lipgloss.NewLayer(frame), lipgloss.NewLayer(box).X(x).Y(y).Z(1))
	return lipgloss.NewCanvas(width, height).Compose(layers).Render()
}

// truncate cuts s (which may hold styles) to width cells, ending in … when
// anything was cut.
func truncate(s string, width int) string {
	if len(s) <= width {
		return s // nothing takes more cells than it has bytes
	}
	return ansi.Truncate(s, width, "…")
}

// truncateMiddle cuts s to width cells by taking out its middle, marked
// "…" (model.CutMiddle: the end of a key, where keys differ, stays).
func truncateMiddle(s string, width int) string { return model.CutMiddle(s, width) }

// cutMiddle cuts s to width cells by taking out a part of it, marked "…",
// that starts head cells in.
func cutMiddle(s string, width, head int) string { return model.CutMiddleAt(s, width, head) }

// padRight fills s with spaces up to width cells.
func padRight(s string, width int) string {
	return s + strings.Repeat(" ", max(0, width-cells(s)))
}

// padLeft right-aligns s in width cells.
func padLeft(s string, width int) string {
	return strings.Repeat(" ", max(0, width-cells(s))) + s
}

// cells is how many cells s takes on screen, as lipgloss.Width counts
// them; printable ASCII, most of what the table holds, takes one a byte.
func cells(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return lipgloss.Width(s)
		}
	}
	return len(s)
}

// quote is what a key or a rule holds, escaped and in quotes.
func quote(s string) string { return `"` + model.Printable(s) + `"` }

// quoteTyped is a filter the user typed, in quotes, as it was typed: the
// filter matches key names as the table shows them, escapes included, so a
// backslash in it is the user's own and is not escaped again (a `\e[`
// typed to find keys holding ESC [ reads "\e[", not "\\e["). A control
// character, pasted, is still escaped.
func quoteTyped(s string) string {
	parts := strings.Split(s, `\`)
	for i, p := range parts {
		parts[i] = model.Printable(p)
	}
	return `"` + strings.Join(parts, `\`) + `"`
}
