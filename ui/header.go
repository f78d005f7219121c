package ui

import (
	"fmt"
	"strings"

	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

// headerLines is how many lines the header always takes.
const headerLines = 2

// headerView is two lines: where the data comes from and how fresh it is,
// then what it says (counts, scanning, the feed's error) and how it is
// shown (sort, filter).
func (m Model) headerView() []string {
	badges := m.badges()
	room := m.width
	if badges != "" {
		room -= lipgloss.Width(badges) + 1
	}
	return []string{
		spread(m.sourceLine(room), badges, m.width),
		truncate(m.countsLine(), m.width),
	}
}

// sourceLine is the title, the address, the mode and the age of the data,
// in room cells: the address is shortened first, so the mode and the age
// stay in sight.
func (m Model) sourceLine(room int) string {
	s := m.feedState
	sep := m.theme.Dim.Render(" · ")
	title := m.theme.Title.Render(m.title)
	tail := sep + m.mode() + sep + m.age()
	if s.Addr == "" {
		return title + tail
	}
	addr := model.Printable(s.Addr)
	if s.Topology != "" {
		addr += m.theme.Dim.Render(" (" + model.Printable(s.Topology) + ")")
	}
	fit := max(12, room-lipgloss.Width(title+sep+tail))
	return title + sep + truncate(addr, fit) + tail
}

// mode is how data arrives, from the feed's latest state.
func (m Model) mode() string {
	s := m.feedState
	switch {
	case m.feedClosed:
		return "feed stopped"
	case s.Mode == "polling" && s.Interval > 0:
		return "polling " + s.Interval.String()
	case s.Mode == "reconnecting":
		return m.theme.Status[model.StatusWarn].Render("reconnecting…")
	case s.Mode == "" || s.Mode == "connecting":
		return "connecting…"
	}
	return model.Printable(s.Mode)
}

// alarm is a count of problem keys, red when there are any.
func (m Model) alarm(n int, what string) string {
	text := fmt.Sprintf("%d %s", n, what)
	if n > 0 {
		return m.theme.Alarm.Render(text)
	}
	return text
}

// age is how long ago data last arrived, by the screen's clock.
func (m Model) age() string {
	last := m.lastData
	if m.feedState.UpdatedAt.After(last) {
		last = m.feedState.UpdatedAt
	}
	if last.IsZero() {
		return m.theme.Dim.Render("no data yet")
	}
	return "updated " + model.FormatDuration(m.clock().Sub(last)) + " ago"
}

// badges flag the states that change what keys do: PAUSED and READ-ONLY.
func (m Model) badges() string {
	var b []string
	if m.paused {
		text := "PAUSED"
		if n := m.held.len(); n > 0 {
			text += fmt.Sprintf(" · %d keys changed", n)
		}
		b = append(b, m.theme.Badge.Render(text))
	}
	if m.writesOff() {
		b = append(b, m.theme.Badge.Render("READ-ONLY"))
	}
	return strings.Join(b, " ")
}

// countsLine is how many keys there are and how many are in trouble, the
// scanning progress, the feed's last error, the sort and filter, and the
// feed's note.
func (m Model) countsLine() string {
	s := m.feedState
	c := m.store.Counts()
	keys := fmt.Sprintf("%d keys", c.Total)
	if c.Visible != c.Total {
		keys = fmt.Sprintf("%d of %d keys", c.Visible, c.Total)
	}
	parts := []string{
		keys,
		m.alarm(c.ByStatus[model.StatusStuck], "stuck"),
		m.alarm(c.ByStatus[model.StatusNoExpiry], "no-expiry"),
	}
	if s.Scanning {
		parts = append(parts, fmt.Sprintf("scanning… %s keys seen, %s matched", formatCount(s.Seen), formatCount(s.Matched)))
	}
	if s.LastError != "" {
		parts = append(parts, m.theme.Error.Render(model.Printable(s.LastError)))
	}
	parts = append(parts, "sort: "+m.store.Sort().String())
	if f := m.store.Filter(); f != "" {
		parts = append(parts, "filter: "+quote(f))
	}
	if s.Note != "" {
		parts = append(parts, m.theme.Dim.Render(model.Printable(s.Note)))
	}
	return strings.Join(parts, m.theme.Dim.Render(" · "))
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
