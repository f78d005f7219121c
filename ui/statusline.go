package ui

import (
	"fmt"
	"sync/atomic"
	"time"
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
// one line, else the status wrapped.
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
	return wrapLines(m.status.text, m.width, m.statusRoom())
}

// statusView is the status, wrapped over as many lines as it needs up to
// statusRoom, or the open prompt or the repair's progress in its place.
func (m *Model) statusView() []string {
	lines := m.statusLines()
	if m.prompt != nil {
		for i := range lines[:len(lines)-1] { // the problem above the input
			lines[i] = m.theme.Error.Render(lines[i])
		}
		return lines
	}
	if m.repair.running() {
		return lines
	}
	for i, l := range lines {
		switch m.status.kind {
		case statusDone:
			lines[i] = m.theme.Success.Render(l)
		case statusFailed:
			lines[i] = m.theme.Error.Render(l)
		case statusInfo:
		}
	}
	return lines
}
