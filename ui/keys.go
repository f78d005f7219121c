package ui

import (
	"slices"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"

	"github.com/countertop/countertop/model"
)

// keyMap is every key the dashboard answers to (docs/keys.md). It
// implements help.KeyMap, so the help line and the `?` screen are
// generated from the same bindings that Update matches.
type keyMap struct {
	Up, Down         key.Binding
	PageUp, PageDown key.Binding
	Top, Bottom      key.Binding

	Filter  key.Binding
	Sort    key.Binding
	Reverse key.Binding
	Pause   key.Binding
	Detail  key.Binding
	Back    key.Binding
	Copy    key.Binding

	// Overview toggles the panel of counts per status and % of limit.
	Overview key.Binding

	Incr      key.Binding
	Decr      key.Binding
	IncrBy    key.Binding
	IncrName  key.Binding
	Expire    key.Binding
	RepairAll key.Binding
	Delete    key.Binding

	Help key.Binding
	Quit key.Binding
	// Interrupt quits from anywhere, even while a prompt takes q as text.
	Interrupt key.Binding

	// Confirm and Cancel answer a confirmation dialog.
	Confirm, Cancel key.Binding
	// Submit accepts what was typed in a prompt.
	Submit key.Binding
	// Older and Newer walk a prompt's history: the arrows only, as j and
	// k are typed.
	Older, Newer key.Binding

	// readOnly leaves the write keys out of the help: they still answer,
	// to say that nothing was sent, but they are not on offer.
	readOnly bool
}

// defaultKeyMap returns the bindings docs/keys.md lists.
func defaultKeyMap() keyMap {
	return keyMap{
		Up:       key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:     key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		PageUp:   key.NewBinding(key.WithKeys("pgup"), key.WithHelp("pgup", "page up")),
		PageDown: key.NewBinding(key.WithKeys("pgdown"), key.WithHelp("pgdn", "page down")),
		Top:      key.NewBinding(key.WithKeys("g", "home"), key.WithHelp("g", "first")),
		Bottom:   key.NewBinding(key.WithKeys("G", "end"), key.WithHelp("G", "last")),

		Filter:  key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
		Sort:    key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
		Reverse: key.NewBinding(key.WithKeys("S"), key.WithHelp("S", "reverse sort")),
		Pause:   key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause")),
		Detail:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "detail")),
		Back:    key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
		Copy:    key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "copy name")),

		Overview: key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "overview")),

		Incr:      key.NewBinding(key.WithKeys("+"), key.WithHelp("+", "incr")),
		Decr:      key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "decr")),
		IncrBy:    key.NewBinding(key.WithKeys("i"), key.WithHelp("i", "incr by N")),
		IncrName:  key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "incr key by name")),
		Expire:    key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "repair expiry")),
		RepairAll: key.NewBinding(key.WithKeys("E"), key.WithHelp("E", "repair all in view")),
		Delete:    key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "delete")),

		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
		Interrupt: key.NewBinding(key.WithKeys("ctrl+c")),

		Confirm: key.NewBinding(key.WithKeys("y", "Y"), key.WithHelp("y", "yes")),
		Cancel:  key.NewBinding(key.WithKeys("n", "N", "esc"), key.WithHelp("n/esc", "no")),
		Submit:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "ok")),
		Older:   key.NewBinding(key.WithKeys("up"), key.WithHelp("↑/↓", "history")),
		Newer:   key.NewBinding(key.WithKeys("down"), key.WithHelp("↓", "newer")),
	}
}

// ShortHelp is the one-line help at the bottom of the screen.
func (k keyMap) ShortHelp() []key.Binding {
	if k.readOnly {
		return []key.Binding{k.Up, k.Down, k.Filter, k.Sort, k.Pause, k.Detail, k.Help, k.Quit}
	}
	return []key.Binding{k.Up, k.Down, k.Filter, k.Sort, k.Incr, k.Expire, k.Delete, k.Pause, k.Detail, k.Help, k.Quit}
}

// FullHelp is the `?` screen, one column per kind of key.
func (k keyMap) FullHelp() [][]key.Binding {
	columns := [][]key.Binding{
		{k.Up, k.Down, k.PageUp, k.PageDown, k.Top, k.Bottom},
		{k.Filter, k.Sort, k.Reverse, k.Pause, k.Detail, k.Back, k.Copy, k.Overview, k.Help, k.Quit},
	}
	if k.readOnly {
		return columns
	}
	return append(columns, []key.Binding{k.Incr, k.Decr, k.IncrBy, k.IncrName, k.Expire, k.RepairAll, k.Delete})
}

// bindings is a help.KeyMap of a few keys, for the help line of a prompt
// or the detail screen.
type bindings []key.Binding

// ShortHelp is all of b.
func (b bindings) ShortHelp() []key.Binding { return b }

// FullHelp is all of b, in one column.
func (b bindings) FullHelp() [][]key.Binding { return [][]key.Binding{b} }

// helpFor is the help for whatever has the focus.
func (m *Model) helpFor() help.KeyMap {
	k := m.keys
	if m.paused {
		k.Pause.SetHelp("p", "resume")
	}
	switch {
	case m.prompt != nil:
		cancel := k.Back
		cancel.SetHelp("esc", "cancel")
		if len(m.prompt.history) > 0 {
			return bindings{k.Submit, cancel, k.Older}
		}
		return bindings{k.Submit, cancel}
	case m.showHelp:
		closeHelp := k.Help
		closeHelp.SetHelp("?/esc", "close")
		return bindings{closeHelp, k.Quit}
	case m.screen == screenDetail && k.readOnly:
		return bindings{k.Back, k.Copy, k.Pause, k.Help, k.Quit}
	case m.screen == screenDetail && m.detailNotCounter():
		// + - i and e refuse such a key, saying why: they are not offered.
		return bindings{k.Back, k.Delete, k.Copy, k.Pause, k.Help, k.Quit}
	case m.screen == screenDetail:
		return bindings{k.Back, k.Incr, k.Decr, k.IncrBy, k.Expire, k.Delete, k.Copy, k.Pause, k.Help, k.Quit}
	}
	return k
}

// detailNotCounter reports whether the detail screen shows a key that holds
// no number (a hash, text), which nothing but d and c act on.
func (m *Model) detailNotCounter() bool {
	c, ok := m.store.Get(m.detail.id)
	return ok && c.Status == model.StatusNotCounter
}

// helpLine is the help line at the bottom, at most as wide as the screen,
// with the rows' position at its right end when some are out of sight (as
// less and vim show it). When the keys do not all fit, the ones nearest
// the end go first, except those keepInHelp keeps: the ? screen lists the
// rest.
func (m *Model) helpLine() string {
	keys := slices.Clone(m.helpFor().ShortHelp())
	h := m.help
	h.SetWidth(0) // measured whole here: help would cut at the width, ? and q first
	pos := m.position()
	room := m.width
	if pos != "" {
		room -= cells(pos) + 2
	}
	// The line's width is worked out from the keys' texts, so that dropping
	// a key costs a subtraction rather than drawing the line again; the
	// first key has no separator before it.
	sep := cells(h.ShortSeparator)
	items := 0
	for _, b := range keys {
		items += helpItemWidth(b, sep)
	}
	width := max(0, items-sep)
	for i := len(keys) - 1; width > room && i >= 0; i-- {
		if !m.keepInHelp(keys[i]) {
			items -= helpItemWidth(keys[i], sep)
			width = max(0, items-sep)
			keys = slices.Delete(keys, i, i+1)
		}
	}
	line := h.ShortHelpView(keys)
	if pos == "" || width > room {
		return truncate(line, m.width)
	}
	return spread(line, m.theme.Dim.Render(pos), m.width)
}

// helpItemWidth is how wide b is on the help line with the separator
// before it, as help.Model draws it: "sep key desc"; 0 when disabled,
// which help.Model leaves out.
func helpItemWidth(b key.Binding, sep int) int {
	if !b.Enabled() {
		return 0
	}
	return sep + cells(b.Help().Key) + 1 + cells(b.Help().Desc)
}

// keepInHelp reports whether b stays on a help line too narrow for every
// key: ? and q, which must stay in sight on a narrow terminal, and p while
// paused, the way out of the pause.
func (m *Model) keepInHelp(b key.Binding) bool {
	k := b.Keys()
	return slices.Contains(k, "?") || slices.Contains(k, "q") || m.paused && slices.Contains(k, "p")
}

// position is which of the rows the table shows, "12-28 of 1,024", when it
// cannot show them all; "" when it does, or when the table is covered.
func (m *Model) position() string {
	n, rows := m.store.Visible(), m.tableRows()
	if m.screen != screenTable || m.showHelp || rows <= 0 || n <= rows {
		return ""
	}
	last := min(n, m.offset+rows)
	return thousands(m.offset+1) + "-" + thousands(last) + " of " + thousands(n)
}
