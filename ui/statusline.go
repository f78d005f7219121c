package ui

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/countertop/countertop/model"
)

// statusLine is the answer to the user's last action: what was sent and
// what Redis said, or why nothing was sent. It takes one line on screen, or
// more when it is longer (statusRoom), so that the part of an error that
// says what to do is not cut off.
type statusLine struct {
	text string
	kind statusKind
	at   time.Time // when a write failed other than by a refusal: see Model.apply
	cmd  string    // the command of such a write, to word its failure as the header words an outage
	// seq tells each status set apart from the last, though its words be
	// the same (a second "Cancelled"), so that it is shown its whole
	// statusFade anew: see Model.Update.
	seq uint64
}

// statusSeq numbers the statuses made.
var statusSeq atomic.Uint64

// statusKind is how a status is drawn and whether it fades: a failure
// stays until the next action.
type statusKind uint8

const (
	statusInfo statusKind = iota
	statusDone
	statusFailed
)

// info is a status that is neither a success nor a failure: a write under
// way, a cancel, a write that changed nothing.
func info(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusInfo, seq: statusSeq.Add(1)}
}

// done is the status of a write that went as asked.
func done(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusDone, seq: statusSeq.Add(1)}
}

// failed is the status of an action that failed or was refused.
func failed(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusFailed, seq: statusSeq.Add(1)}
}

// statusRoom is how many lines the status may take: what a Redis error and
// its advice need (two at 120 columns, three or four at 80), up to a
// quarter of the screen, and never so many that the body loses its column
// titles and one row.
func (m *Model) statusRoom() int {
	return max(1, min(m.height/4, m.height-m.headerLines()-1-2))
}

// statusLines is what statusView shows, unstyled: the open prompt (below
// why its last answer was refused, if it was) or the repair's progress on
// one line, else the status wrapped, and the eviction sentence.
func (m *Model) statusLines() []string {
	switch {
	case m.prompt != nil:
		var lines []string
		if m.prompt.problem != "" {
			lines = wrapLines(m.prompt.problem, m.width, max(1, m.statusRoom()-1))
		}
		return append(lines, truncate(m.prompt.input.View(), m.width))
	case m.repair.running():
		return []string{truncate(m.repair.progress(), m.width)}
	}
	status, evicted := m.statusParts()
	return append(status, evicted...)
}

// statusParts is the status wrapped, and the eviction sentence: in the
// status's place while there is none, else on a line under it when the
// status leaves room for one.
func (m *Model) statusParts() (status, evicted []string) {
	e := m.evictionText()
	if m.status.text == "" && e != "" {
		return nil, wrapLines(e, m.width, m.statusRoom())
	}
	status = wrapLines(m.status.text, m.width, m.statusRoom())
	if e != "" && len(status) < m.statusRoom() {
		evicted = []string{truncate(e, m.width)}
	}
	return status, evicted
}

// evictionText says how many keys Redis evicted in the last minute, and
// what that did to the limits: an evicted counter starts again from
// nothing, as if its window had ended. Without events the count is INFO's,
// of every key on the servers, and it says so. "" when none were.
func (m *Model) evictionText() string {
	n := m.health.Evicted
	switch {
	case n <= 0 || m.feedClosed:
		return ""
	case m.health.EvictedAll:
		return fmt.Sprintf("%s evicted on the server in the last minute (maxmemory; without events, INFO counts every key there, watched or not): a rate-limit counter among them had its limit reset early",
			plural(int(n), "key"))
	case n == 1:
		return "1 watched key evicted in the last minute (maxmemory): its limit was reset early, as if its window had ended"
	}
	return fmt.Sprintf("%d watched keys evicted in the last minute (maxmemory): their limits were reset early, as if their windows had ended", n)
}

// statusView is the status, wrapped over as many lines as it needs up to
// statusRoom, and the eviction sentence, or the open prompt or the
// repair's progress in their place.
func (m *Model) statusView() []string {
	if m.prompt != nil {
		lines := m.statusLines()
		for i := range lines[:len(lines)-1] { // the problem above the input
			lines[i] = m.theme.Error.Render(lines[i])
		}
		return lines
	}
	if m.repair.running() {
		return m.statusLines()
	}
	lines, evicted := m.statusParts()
	for i, l := range lines {
		switch m.status.kind {
		case statusDone:
			lines[i] = m.theme.Success.Render(l)
		case statusFailed:
			lines[i] = m.theme.Error.Render(l)
		case statusInfo:
		}
	}
	for _, l := range evicted {
		lines = append(lines, m.theme.Status[model.StatusWarn].Render(l))
	}
	return lines
}

// onHealth takes h, the servers' health now. When a server falls silent,
// a write that failed since says what the header says; when every server
// answers again, the stall is over (see endStall).
func (m *Model) onHealth(h model.Health) {
	was := m.health
	m.health = h
	switch {
	case was.Silent == "" && h.Silent != "":
		if m.status.kind == statusFailed && m.status.cmd != "" && m.status.at.After(h.Since) {
			m.status = outage(m.status)
		}
	case was.Silent != "" && h.Silent == "":
		m.endStall(was.Since)
	}
}

// noteStall notes the feed's error, just arrived, as a stall's when a
// server is silent (see endStall).
func (m *Model) noteStall() {
	switch err := m.feedState.LastError; {
	case m.health.Silent != "":
		m.stallError, m.stallOver = err, false
	case err != m.stallError:
		m.stallError, m.stallOver = "", false
	}
}

// endStall says the stall that began at since is over, as soon as the
// servers' health says every one answers: the feed's error that came
// during it leaves the header now, not at the feed's next read, an
// interval later (the freshness waits for that read); and a write that
// failed in it is settled, as apply settles one of an outage.
func (m *Model) endStall(since time.Time) {
	m.stallOver = m.stallError != ""
	if m.status.kind == statusFailed && m.status.cmd != "" && m.status.at.After(since) {
		m.status = info("%s Redis answers again now.", m.status.text)
	}
}
