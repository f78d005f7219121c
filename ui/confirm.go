package ui

import (
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// confirm is a dialog that says exactly what will be sent and waits for y
// before sending it.
type confirm struct {
	question string
	details  []string
	yes      func(*Model) tea.Cmd
}

// confirmKey answers the open dialog: y runs what it asked about, n or esc
// closes it, and any other key is ignored.
func (m *Model) confirmKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case keyMatches(msg, m.keys.Confirm):
		yes := m.confirm.yes
		m.confirm = nil
		return yes(m)
	case keyMatches(msg, m.keys.Cancel):
		m.confirm = nil
		m.status = info("Cancelled: nothing was sent.")
	}
	return nil
}

// maxDialogText is the widest a dialog's text runs on a wide terminal.
const maxDialogText = 72

// confirmView is the dialog box, its text wrapped to fit the terminal.
func (m *Model) confirmView() string {
	c := m.confirm
	width := min(maxDialogText, m.width-8)
	wrap := func(s string) string { return ansi.Wrap(s, width, " ") }
	render := func(details []string) string {
		lines := []string{m.theme.Bold.Render(wrap(c.question)), ""}
		for _, d := range details {
			lines = append(lines, wrap(d))
		}
		lines = append(lines, "", m.help.ShortHelpView([]key.Binding{m.keys.Confirm, m.keys.Cancel}))
		return m.theme.Dialog.Render(strings.Join(lines, "\n"))
	}
	// On a short screen the details go, last first, before the answers
	// would fall off its bottom: the question and y/n always show.
	details := c.details
	box := render(details)
	for len(details) > 0 && lipgloss.Height(box) > m.height {
		details = details[:len(details)-1]
		box = render(details)
	}
	return box
}

// maxDialogKey is the most of a key name a dialog shows (its middle is
// taken out beyond): a few lines, so that the dialog keeps its buttons.
const maxDialogKey = 2 * maxDialogText

// askDelete asks before deleting the key of r, naming it: for a hash
// field's row, the whole hash.
func (m *Model) askDelete(r rowRef) {
	key, name := r.key, model.Printable(r.key)
	shown := truncateMiddle(name, maxDialogKey)
	gone := "The key and its value are gone for good; a rate limiter starts it again from 0."
	switch {
	case r.field != "":
		// DEL is of the key: the hash goes with every field, not only
		// the row's (HDEL is the limiter's to send, not countertop's).
		field := truncateMiddle(model.Printable(r.field), maxDialogKey)
		gone = "The whole hash goes, every field in it and not " + field + " alone; a rate limiter starts each field again from 0."
	case !m.ruleFor(r.id).ExpectTTL:
		gone = "The key and its value are gone for good." // its rule says it lives forever: no limiter restarts it
	}
	m.confirm = &confirm{
		question: "Delete " + shown + "?",
		details:  []string{"DEL " + shown, gone},
		yes: func(m *Model) tea.Cmd {
			m.status = info("DEL %s …", name)
			return m.deleteCmd(r.server, key)
		},
	}
}
