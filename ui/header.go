package ui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

// maxFeedLines bounds how much of the header the feed's message may take.
const maxFeedLines = 3

// headerLines is how many lines the header takes: three, a line a server
// among several (serverLineCount), and one or two more (up to
// maxFeedLines) while the feed has an error or a note to tell.
func (m *Model) headerLines() int {
	return 3 + m.serverLineCount() + len(m.feedLines())
}

// headerView is where the data comes from and how fresh it is, then what
// is watched there (patterns, database, config file), then what it says
// (counts, scanning) and how it is shown (sort, filter), then the feed's
// last error or its note (why it polls, and how to get events) on a line
// of its own, so that the advice is not cut off.
func (m *Model) headerView() []string {
	badges := m.badges()
	room := m.width
	if badges != "" {
		room -= lipgloss.Width(badges) + 1
	}
	first := ""
	if m.several() {
		first = m.serversTitle(room)
	} else {
		first = m.sourceLine(room)
	}
	lines := append([]string{spread(first, badges, m.width)}, m.serverLines()...)
	lines = append(lines, m.watchedLine(), truncate(m.countsLine(), m.width))
	return append(lines, m.feedLines()...)
}

// feedLines is the feed's last error, else its note, wrapped to the width
// in at most maxFeedLines lines; none when there is neither. On a short
// screen (under shortScreen lines) a note, which says how to get live
// updates, takes one line: the rows come first. An error keeps its room,
// but for two lines of rows under the titles on the smallest screens.
func (m *Model) feedLines() []string {
	text, style := m.feedText()
	room := min(maxFeedLines, max(1, m.height-3-2-3)) // the header's three lines, the footer's two, titles and two rows
	if m.feedError() == "" && m.silence() == "" && m.height < shortScreen {
		room = 1
	}
	lines := m.wrapFeed(text, room)
	for i, l := range lines {
		lines[i] = style.Render(l)
	}
	return lines
}

// shortScreen is the height under which the header's note takes one line.
const shortScreen = 20

// feedText is the feed's last error, else the sentence on a server that
// does not answer, else its note, and its style.
func (m *Model) feedText() (string, lipgloss.Style) {
	if err := m.feedError(); err != "" {
		return err, m.theme.Error
	}
	if s := m.silence(); s != "" {
		return s, m.theme.Error
	}
	return m.feedState.Note, m.theme.Dim
}

// feedError is the feed's last error, but for the one that came during a
// stall that has ended (see endStall): "" when none is to be shown.
func (m *Model) feedError() string {
	if m.stallOver && m.feedState.LastError == m.stallError {
		return ""
	}
	return m.feedState.LastError
}

// wrapFeed is text wrapped as the header shows it, unstyled, in at most
// room lines.
func (m *Model) wrapFeed(text string, room int) []string {
	if text == "" || m.width <= 0 {
		return nil
	}
	return wrapLines(model.SafeText(text), m.width, room) // the feed escaped what it quotes
}

// sourceLine is the title, the address and the topology, the mode, the
// age of the data and the cost, in room cells. The mode and the age stay
// whole. The topology (which server is master, how many replicas, how
// many are up: what no address tells) stays too, so the rest gives way
// first: the address is shortened down to minAddrCells, then the cost
// goes, then the title, then the topology loses its end; only with less
// room than minTopologyCells left for it does it go, and the title and the
// address take the room.
func (m *Model) sourceLine(room int) string {
	s := m.feedState
	sep := m.theme.Dim.Render(" · ")
	title := m.theme.Title.Render(m.title) + sep
	tail := sep + m.mode() + sep + m.age()
	withCost := tail
	if cost := m.cost(); cost != "" {
		withCost += sep + cost
	}
	if s.Addr == "" {
		return title + withCost
	}
	addr := model.Printable(s.Addr)
	topology, shown := "", ""
	if s.Topology != "" {
		topology = " (" + model.Printable(s.Topology) + ")"
		shown = m.theme.Dim.Render(topology)
	}
	for i, try := range [][2]string{{title, withCost}, {title, tail}, {"", tail}} {
		if i == 2 && topology == "" {
			break // the title goes for the topology's sake only
		}
		fit := room - lipgloss.Width(try[0]+try[1])
		if short := min(cells(addr), max(minAddrCells, fit-cells(topology))); short+cells(topology) <= fit {
			return try[0] + shortAddr(addr, short) + shown + try[1]
		}
	}
	short := min(cells(addr), minAddrCells)
	if left := room - lipgloss.Width(tail) - short - cells(" ()"); topology != "" && left >= minTopologyCells {
		cut := " (" + truncate(topology[2:len(topology)-1], left) + ")"
		return shortAddr(addr, short) + m.theme.Dim.Render(cut) + tail
	}
	return title + shortAddr(addr, max(minAddrCells, room-lipgloss.Width(title+tail))) + tail
}

// The least of the address, and of the topology, the header's first line
// shows: under them, the address shows no port, the topology no kind.
const (
	minAddrCells     = 12
	minTopologyCells = 12
)

// shortAddr is addr in width cells: a host:port/db loses the end of its
// host, so that the port and database, which tell two servers on one host
// apart, stay; several Sentinels' addresses lose their middle.
func shortAddr(addr string, width int) string {
	if cells(addr) <= width {
		return addr
	}
	if port := strings.LastIndexByte(addr, ':'); port > 0 && cells(addr[port:]) < width-1 && !strings.Contains(addr, ",") {
		return truncate(addr[:port], width-cells(addr[port:])) + addr[port:]
	}
	return truncateMiddle(addr, width)
}

// watchedLine is what the feed reads: its patterns, the database and the
// config file the rules came from. Where they do not all fit, the
// patterns after the first give way to a count ("+2 more"), then the
// config file loses its middle, then it goes.
func (m *Model) watchedLine() string {
	dim := m.theme.Dim
	db := "db " + strconv.Itoa(m.db)
	config := ""
	if m.config != "" {
		config = model.Printable(m.config)
	}
	line := func(shown int, config string) string {
		s := dim.Render("watching ") + db
		if len(m.patterns) > 0 {
			names := make([]string, shown)
			for i, p := range m.patterns[:shown] {
				names[i] = model.Printable(p)
			}
			s = dim.Render("watching ") + strings.Join(names, ", ")
			if more := len(m.patterns) - shown; more > 0 {
				s += dim.Render(fmt.Sprintf(" +%d more", more))
			}
			s += dim.Render(" in ") + db
		}
		if config != "" {
			s += dim.Render(" · config ") + config
		}
		return s
	}
	for shown := len(m.patterns); shown >= 1; shown-- {
		if l := line(shown, config); lipgloss.Width(l) <= m.width {
			return l
		}
	}
	short := line(min(1, len(m.patterns)), "")
	if room := m.width - lipgloss.Width(short) - cells(" · config "); config != "" && room >= minConfigCells {
		return line(min(1, len(m.patterns)), truncateMiddle(config, room))
	}
	return truncate(short, m.width)
}

// minConfigCells is the least of the config file's path the header shows
// cut; with less room it shows none.
const minConfigCells = 12

// mode is how data arrives, from the feed's latest state (modeOf).
func (m *Model) mode() string {
	if m.feedClosed {
		return "feed stopped"
	}
	return m.modeOf(m.feedState)
}

// modeOf is a feed's mode as its state says: its phase while it is not
// watching, else its mode's word, with the interval of a mode that reads
// every interval.
func (m *Model) modeOf(s model.FeedState) string {
	switch s.Phase {
	case model.FeedConnecting:
		return "connecting…"
	case model.FeedReconnecting:
		return m.theme.Status[model.StatusWarn].Render("reconnecting…")
	case model.FeedStopped:
		return "stopped"
	case model.FeedWatching:
	}
	spec := s.Mode.Spec()
	if spec.StaleIntervals > 0 && s.Interval > 0 {
		return spec.Word + " " + s.Interval.String()
	}
	return model.Printable(spec.Word)
}

// alarm is a count of problem keys, red when there are any.
func (m *Model) alarm(n int, what string) string {
	text := fmt.Sprintf("%d %s", n, what)
	if n > 0 {
		return m.theme.Alarm.Render(text)
	}
	return text
}

// badges flag the states that change what keys do: PAUSED and READ-ONLY.
func (m *Model) badges() string {
	var b []string
	if m.paused {
		text := "PAUSED"
		if n := m.held.len(); n > 0 {
			text += " · " + plural(n, "key") + " read"
		}
		b = append(b, m.theme.Badge.Render(text))
	}
	if m.writesOff() {
		b = append(b, m.theme.Badge.Render("READ-ONLY"))
	}
	return strings.Join(b, " ")
}

// countsLine is how many keys there are and how many are in trouble, the
// scanning progress, and the sort and filter.
func (m *Model) countsLine() string {
	s := m.feedState
	c := m.store.Counts()
	noun := "key"
	if c.Fields > 0 {
		noun = "row" // a hash's fields are a row each: more rows than keys
	}
	keys, all := plural(c.Total, noun), ""
	if c.Visible != c.Total {
		// The alarms count every key, not the filter's: say so.
		keys, all = fmt.Sprintf("%d of %s", c.Visible, plural(c.Total, noun)), " in all"
	}
	sep := m.theme.Dim.Render(" · ")
	parts := []string{
		keys,
		m.alarm(c.ByStatus[model.StatusStuck], "stuck"),
		m.alarm(c.ByStatus[model.StatusNoExpiry], "no-expiry"+all),
	}
	if n := c.ByStatus[model.StatusExtending]; n > 0 {
		// Rare, and needs a few readings: counted only once there is one.
		parts = slices.Insert(parts, 2, m.alarm(n, "extending"))
	}
	if all != "" && lipgloss.Width(strings.Join(parts, sep)) > m.width {
		parts[0] = fmt.Sprintf("%d/%s", c.Visible, plural(c.Total, noun)) // so that "in all" stays in sight
	}
	if s.Scanning {
		parts = append(parts, fmt.Sprintf("scanning… %s keys seen, %s matched", formatCount(s.Seen), formatCount(s.Matched)))
	}
	sort := "sort: " + m.store.Sort().String()
	if m.store.Reverse() {
		sort += " (reversed)"
	}
	parts = append(parts, sort)
	if f := m.store.Filter(); f != "" {
		parts = append(parts, "filter: "+quoteTyped(f))
	}
	// The sort and the filter come whole, or not at all: where they do
	// not fit, they are left out rather than cut (the counts and the
	// progress are cut, by the caller).
	must := 3
	if s.Scanning {
		must++
	}
	line := strings.Join(parts[:must], sep)
	for _, p := range parts[must:] {
		if lipgloss.Width(line+sep+p) > m.width {
			break
		}
		line += sep + p
	}
	return line
}

// spread puts left at the start of a line and right at its end, cutting
// left short when both do not fit.
func spread(left, right string, width int) string {
	if right == "" {
		return truncate(left, width)
	}
	rw := lipgloss.Width(right)
	left = truncate(left, max(0, width-rw-1))
	fill := max(1, width-lipgloss.Width(left)-rw)
	return truncate(left+strings.Repeat(" ", fill)+right, width)
}
