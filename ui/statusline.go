package ui

import "fmt"

// statusLine is the one-line answer to the user's last action: what was
// sent and what Redis said, or why nothing was sent.
type statusLine struct {
	text string
	kind statusKind
}

type statusKind uint8

const (
	statusInfo statusKind = iota
	statusDone
	statusFailed
)

func info(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusInfo}
}

func done(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusDone}
}

func failed(format string, a ...any) statusLine {
	return statusLine{text: fmt.Sprintf(format, a...), kind: statusFailed}
}

// statusView is the status line, or the open prompt in its place.
func (m Model) statusView() string {
	if m.prompt != nil {
		return truncate(m.prompt.input.View(), m.width)
	}
	if m.repair.running() {
		return truncate(m.repair.progress(), m.width)
	}
	text := m.status.text
	switch m.status.kind {
	case statusDone:
		text = m.theme.Success.Render(text)
	case statusFailed:
		text = m.theme.Error.Render(text)
	}
	return truncate(text, m.width)
}
