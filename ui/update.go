package ui

import (
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// tickEvery is how often the screen is redrawn between observations, so TTL
// countdowns and the rows' ages ("read 0.4s ago") keep moving.
const tickEvery = 250 * time.Millisecond

// statusFade is how long the answer to an action stays on the status line
// when it says all went as asked: long enough to read, not so long that it
// reads as the answer to what the user does next. A failure stays until the
// next action.
const statusFade = 10 * time.Second

// fadeStatus clears a status that is not a failure once it has been shown
// statusFade. The hint New shows stays until the first action.
func (m *Model) fadeStatus() {
	if m.status.kind != statusFailed && !m.statusSince.IsZero() && m.prompt == nil && !m.repair.running() &&
		m.now().Sub(m.statusSince) >= statusFade {
		m.status = statusLine{}
	}
}

// fadeRates tells the Store, while keyspace events (or tracking's
// invalidations) arrive, that keys not read since are unchanged, so a
// counter that stopped fades to 0/s (see model.Store.QuietUntil). Polled,
// or with the events down, a key not read may have changed all the same:
// its rate stays as last read.
func (m *Model) fadeRates() {
	if m.feedState.Pushed() && reachable(m.feedState) && !m.feedClosed {
		m.store.QuietUntil(m.now())
	}
}

// tickMsg redraws the screen; gen tells the live tick chain from one that
// a pause ended.
type tickMsg struct{ gen int }

// tick is the next redraw of the tick chain gen, tickEvery from now.
func tick(gen int) tea.Cmd {
	return tea.Tick(tickEvery, func(time.Time) tea.Msg { return tickMsg{gen} })
}

// frameEvery is how soon the screen is drawn again while the Store is
// still applying a filter or working out a sort (model.Store.Filtering,
// Sorting), which it does a step per read of the order: a frame's time, so
// either shows within a few frames at a million keys, not a few ticks.
const frameEvery = time.Second / 60

// frameMsg draws the screen again to see a filter or a sort through.
type frameMsg struct{}

// drawAgain is the frame that sees the filter or sort through: one at a
// time while the Store is still at it, none once it is done, so an idle
// dashboard is not redrawn at frame rate.
func (m *Model) drawAgain() tea.Cmd {
	if m.framing || !m.store.Filtering() && !m.store.Sorting() {
		return nil
	}
	m.framing = true
	return tea.Tick(frameEvery, func(time.Time) tea.Msg { return frameMsg{} })
}

// Update applies one message to m and returns m. It never blocks and does
// no I/O: see the package documentation for what it may do.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	body, status := m.bodyHeight(), m.status
	cmd := m.update(msg)
	m.noteLive()
	if m.status != status {
		m.statusSince = m.now()
	}
	if m.bodyHeight() != body {
		// A status that takes more lines (or fewer), or a header that
		// does, moved the bottom of the table: keep the selection in view.
		m.follow()
	}
	m.measureKeys()
	m.tellOnScreen()
	return m, tea.Batch(cmd, m.drawAgain())
}

// measureKeys notes the widest key name on screen now in widestKey, which
// only grows: the layout gives KEY its fair share of a narrow row up to
// that width, so the columns do not shift each time the list scrolls past
// a shorter name. Forty rows, whatever the store holds.
func (m *Model) measureKeys() {
	for _, c := range m.store.Rows(m.offset, m.tableRows()) {
		m.widestKey = max(m.widestKey, cells(c.Name()))
	}
}

// update is Update without the bookkeeping every message needs.
func (m *Model) update(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.sizePrompt()
		m.follow()
		return nil
	case tea.BackgroundColorMsg:
		if !m.fixed {
			m.dark = msg.IsDark()
			m.restyle()
		}
		return nil
	case tea.ColorProfileMsg:
		m.color = msg.Profile
		m.restyle()
		return nil
	case batchesMsg:
		return m.onBatches(msg)
	case tickMsg:
		if msg.gen != m.tickGen || m.paused {
			return nil
		}
		m.fadeRates()
		m.fadeStatus()
		m.lookUpSiblings(false)
		return tick(m.tickGen)
	case frameMsg:
		m.framing = false // the reads of this Update take the filter or sort a step on
		return nil
	case incrDoneMsg:
		return m.onIncrDone(msg)
	case expireDoneMsg:
		return m.onExpireDone(msg)
	case deleteDoneMsg:
		m.onDeleteDone(msg)
		return nil
	case tea.KeyPressMsg:
		return m.onKey(msg)
	case tea.MouseWheelMsg, tea.MouseClickMsg:
		if m.mouse {
			m.onMouse(msg.(tea.MouseMsg))
		}
		return nil
	}
	if m.prompt != nil { // paste, cursor blink
		return m.updatePrompt(msg)
	}
	return nil
}

// onKey routes a key to whatever has the focus: a dialog, a prompt, the
// help, the detail screen or the table.
func (m *Model) onKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Interrupt):
		return tea.Quit
	case m.confirm != nil:
		return m.confirmKey(msg)
	case m.prompt != nil:
		return m.promptKey(msg)
	case m.showHelp:
		switch {
		case key.Matches(msg, m.keys.Quit):
			return tea.Quit
		case key.Matches(msg, m.keys.Help, m.keys.Back):
			m.showHelp, m.scroll = false, 0
		default:
			m.scrollKey(msg)
		}
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Quit):
		return tea.Quit
	case key.Matches(msg, m.keys.Help):
		m.showHelp, m.scroll = true, 0
		return nil
	case key.Matches(msg, m.keys.Pause):
		return m.togglePause()
	}
	if m.screen == screenDetail {
		return m.detailKeyPress(msg)
	}
	return m.tableKey(msg)
}

// tableKey handles a key on the main screen.
func (m *Model) tableKey(msg tea.KeyPressMsg) tea.Cmd {
	page := max(1, m.tableRows())
	m.picked = true
	if !keyMatches(msg, m.keys.Incr, m.keys.Decr, m.keys.IncrBy, m.keys.Expire, m.keys.Delete) {
		m.lost = rowRef{} // the user looks at the rows again
	}
	switch {
	case key.Matches(msg, m.keys.Up):
		m.moveTo(m.cursor - 1)
		return nil
	case key.Matches(msg, m.keys.Down):
		m.moveTo(m.cursor + 1)
		return nil
	case key.Matches(msg, m.keys.PageUp):
		m.moveTo(m.cursor - page)
		return nil
	case key.Matches(msg, m.keys.PageDown):
		m.moveTo(m.cursor + page)
		return nil
	case key.Matches(msg, m.keys.Top):
		m.moveTo(0)
		return nil
	case key.Matches(msg, m.keys.Bottom):
		m.moveTo(m.store.Visible() - 1)
		return nil
	case key.Matches(msg, m.keys.Filter):
		return m.openFilter()
	case key.Matches(msg, m.keys.Back):
		if m.store.Filter() != "" {
			m.store.SetFilter("")
			m.follow()
		}
		return nil
	case key.Matches(msg, m.keys.Sort):
		m.store.SetSort(m.store.Sort().Next())
		m.follow()
		return nil
	case key.Matches(msg, m.keys.Reverse):
		m.store.SetReverse(!m.store.Reverse())
		m.follow()
		return nil
	case key.Matches(msg, m.keys.Detail):
		if !m.selected.none() {
			m.screen, m.detail, m.scroll = screenDetail, m.selected, 0
			m.lookUpSiblings(true)
		}
		return nil
	case key.Matches(msg, m.keys.Copy):
		return m.copyName(m.selected)
	case key.Matches(msg, m.keys.Overview):
		m.toggleOverview()
		return nil
	}
	return m.writeKey(msg, m.selected)
}

// copyName puts the real name of r's key, its bytes as Redis holds them,
// on the clipboard through the terminal (OSC 52, which reaches the user's
// own terminal through SSH and tmux), and says so with the name escaped.
// A hash field's row copies its hash's key, which redis-cli takes.
func (m *Model) copyName(r rowRef) tea.Cmd {
	if r.none() {
		m.status = failed("No key is selected: nothing was copied.")
		return nil
	}
	m.status = done("copied %s to the clipboard", model.Printable(r.key))
	if r.field != "" {
		m.status.text += " (the hash of " + r.name + ")"
	}
	return tea.SetClipboard(r.key)
}

// detailKeyPress handles a key on the detail screen: back, or a write on
// the key it shows.
func (m *Model) detailKeyPress(msg tea.KeyPressMsg) tea.Cmd {
	if key.Matches(msg, m.keys.Back, m.keys.Detail) {
		m.screen, m.scroll = screenTable, 0
		return nil
	}
	if m.scrollKey(msg) {
		return nil
	}
	if key.Matches(msg, m.keys.Copy) {
		return m.copyName(m.detail)
	}
	return m.writeKey(msg, m.detail)
}

// scrollKey moves the help or the detail screen, when they do not fit the
// screen, with the keys that move the table's cursor; it reports false for
// any other key.
func (m *Model) scrollKey(msg tea.KeyPressMsg) bool {
	page := max(1, m.bodyHeight()-2)
	switch {
	case key.Matches(msg, m.keys.Up):
		m.scrolled(-1)
	case key.Matches(msg, m.keys.Down):
		m.scrolled(1)
	case key.Matches(msg, m.keys.PageUp):
		m.scrolled(-page)
	case key.Matches(msg, m.keys.PageDown):
		m.scrolled(page)
	case key.Matches(msg, m.keys.Top):
		m.scrolled(-m.scroll)
	case key.Matches(msg, m.keys.Bottom):
		m.scrolled(len(m.pagerContent()))
	default:
		return false
	}
	return true
}

// togglePause freezes the view, or unfreezes it and applies what arrived
// meanwhile. While paused the feed is still drained (see onBatches) and the
// clock stops, so countdowns stand still.
func (m *Model) togglePause() tea.Cmd {
	if !m.paused {
		m.paused, m.pausedAt = true, m.now()
		return nil
	}
	m.paused = false
	m.apply(m.held.batch(), m.held.arrived)
	m.held = held{}
	m.tickGen++
	m.followFeed()
	return tick(m.tickGen)
}

// clock is the time the screen is drawn at: frozen while paused.
func (m *Model) clock() time.Time {
	if m.paused {
		return m.pausedAt
	}
	return m.now()
}
