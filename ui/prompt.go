package ui

import (
	"errors"
	"slices"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

// prompt is a one-line input shown in place of the status line: the filter,
// an amount, a key name or a window. enter submits, esc cancels.
type prompt struct {
	input textinput.Model
	// live, when set, runs on every edit: the filter narrows as you type.
	live   func(*Model, string)
	submit func(*Model, string) tea.Cmd
	// cancel, when set, runs on esc.
	cancel func(*Model)
	// check, when set, vets an answer before submit sees it: one it
	// refuses stays in the input to mend, with why above it (problem), so
	// that what is typed next does not land on the dashboard's keys.
	check   func(string) error
	problem string
	// history, when set, is what ↑ and ↓ walk through, oldest first; at
	// is the answer shown (len(history): the one being typed, draft).
	history []string
	at      int
	draft   string
}

// maxInput bounds what a prompt takes; Redis keys can be longer, but nobody
// types one that long.
const maxInput = 1024

// openPrompt shows p in place of the status line, labelled and holding
// value, and gives it the focus.
func (m *Model) openPrompt(label, value, placeholder string, p prompt) tea.Cmd {
	in := textinput.New()
	in.Prompt = label
	in.Placeholder = placeholder
	in.CharLimit = maxInput
	in.SetValue(value)
	p.input = in
	m.prompt = &p
	m.sizePrompt()
	return m.prompt.input.Focus()
}

// sizePrompt fits the open prompt's input to the terminal's width, so long
// input scrolls instead of running off the screen.
func (m *Model) sizePrompt() {
	if m.prompt == nil {
		return
	}
	in := &m.prompt.input
	in.SetWidth(max(1, m.width-lipgloss.Width(in.Prompt)-1))
}

// promptKey gives a key to the open prompt: esc closes it, enter submits
// what it holds once check lets it, any other key edits it.
func (m *Model) promptKey(msg tea.KeyPressMsg) tea.Cmd {
	p := m.prompt
	switch {
	case keyMatches(msg, m.keys.Back):
		m.prompt = nil
		if p.cancel != nil {
			p.cancel(m)
		}
		return nil
	case len(p.history) > 0 && keyMatches(msg, m.keys.Older, m.keys.Newer):
		m.walkHistory(keyMatches(msg, m.keys.Older))
		return nil
	case keyMatches(msg, m.keys.Submit):
		if p.check != nil {
			if err := p.check(p.input.Value()); err != nil {
				p.problem = "Nothing was sent: " + model.SafeText(err.Error()) + "; mend it, or esc to cancel."
				return nil
			}
		}
		m.prompt = nil
		return p.submit(m, p.input.Value())
	}
	return m.updatePrompt(msg)
}

// updatePrompt gives msg (a key, a paste, a cursor blink) to the input.
func (m *Model) updatePrompt(msg tea.Msg) tea.Cmd {
	p := m.prompt
	before := p.input.Value()
	var cmd tea.Cmd
	p.input, cmd = p.input.Update(msg)
	if p.input.Value() != before {
		p.problem = "" // being mended
		if p.live != nil {
			p.live(m, p.input.Value())
		}
	}
	return cmd
}

// walkHistory shows the prompt's previous answer (older) or the next one,
// and after the newest what was being typed; the filter follows it, as it
// follows typing.
func (m *Model) walkHistory(older bool) {
	p := m.prompt
	if p.at == len(p.history) {
		p.draft = p.input.Value()
	}
	switch {
	case older && p.at > 0:
		p.at--
	case !older && p.at < len(p.history):
		p.at++
	default:
		return
	}
	value := p.draft
	if p.at < len(p.history) {
		value = p.history[p.at]
	}
	p.input.SetValue(value)
	p.input.CursorEnd()
	p.problem = ""
	if p.live != nil {
		p.live(m, value)
	}
}

// maxHistory is how many filters the session remembers.
const maxHistory = 100

// openFilter edits the filter, applying it as it is typed; enter keeps it,
// esc clears it, and ↑ and ↓ walk the filters kept earlier this session.
func (m *Model) openFilter() tea.Cmd {
	setFilter := func(m *Model, q string) {
		m.store.SetFilter(q)
		m.follow()
	}
	return m.openPrompt("/", m.store.Filter(), "text in the key, is:stuck, is:problem…", prompt{
		live: setFilter,
		submit: func(m *Model, q string) tea.Cmd {
			setFilter(m, q)
			m.rememberFilter(q)
			return nil
		},
		cancel:  func(m *Model) { setFilter(m, "") },
		history: m.filters,
		at:      len(m.filters),
	})
}

// rememberFilter adds q to the filter history as its newest, once: a
// filter used again moves up rather than being listed twice.
func (m *Model) rememberFilter(q string) {
	if q == "" {
		return
	}
	m.filters = slices.DeleteFunc(m.filters, func(f string) bool { return f == q })
	m.filters = append(m.filters, q)
	if len(m.filters) > maxHistory {
		m.filters = slices.Delete(m.filters, 0, len(m.filters)-maxHistory)
	}
}

// askAmount asks how much to add to key; withDefault lets an empty answer
// mean 1. What cannot be read as an amount is refused before anything is
// sent.
func (m *Model) askAmount(r rowRef, withDefault bool) tea.Cmd {
	label := "increment " + r.name + " by: "
	if withDefault {
		label = "increment " + r.name + " by (enter for 1): "
	}
	return m.openPrompt(label, "", "", prompt{
		check: func(s string) error {
			if withDefault && s == "" {
				return nil
			}
			_, err := model.ParseAmount(s)
			return err
		},
		submit: func(m *Model, s string) tea.Cmd {
			if withDefault && s == "" {
				return m.incr(r, model.Amount{Int: 1})
			}
			by, _ := model.ParseAmount(s) // checked
			return m.incr(r, by)
		},
	})
}

// askKeyName asks which key to increment (it may not exist yet), then how
// much by.
func (m *Model) askKeyName() tea.Cmd {
	return m.openPrompt("increment key: ", "", "key name, e.g. ratelimit:test:1", prompt{
		check: func(name string) error {
			if name == "" {
				return errors.New("no key name given")
			}
			return nil
		},
		submit: func(m *Model, name string) tea.Cmd {
			if m.refuseNotString(keyRef(name), "INCRBY") {
				return nil
			}
			return m.askAmount(keyRef(name), true)
		},
	})
}

// askWindow asks for the expiry a write should give, for keys no rule gives
// one, then runs then with it.
func (m *Model) askWindow(label string, then func(*Model, time.Duration) tea.Cmd) tea.Cmd {
	return m.openPrompt(label, "", "", prompt{
		check: func(s string) error {
			_, err := parseWindow(s)
			return err
		},
		submit: func(m *Model, s string) tea.Cmd {
			w, _ := parseWindow(s) // checked
			return then(m, w)
		},
		cancel: func(m *Model) {
			m.status = info("Cancelled: nothing was sent.")
		},
	})
}
