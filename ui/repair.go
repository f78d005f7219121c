package ui

import (
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

const (
	// repairInFlight bounds the EXPIRE writes of a repair-all that run at
	// once, so repairing a million keys neither starts a million goroutines
	// nor floods the server.
	repairInFlight = 8
)

// repairTarget is one key a repair-all will EXPIRE NX, and with what window.
type repairTarget struct {
	key    string
	window time.Duration
}

// repairJob is a repair-all under way: a queue of writes, at most
// repairInFlight of them sent at a time, and the tally so far.
type repairJob struct {
	queue    []repairTarget
	total    int
	inFlight int

	set, already, gone, failed int
	lastErr                    string
}

// running reports whether writes of the job are queued or under way.
func (j repairJob) running() bool { return j.inFlight > 0 || len(j.queue) > 0 }

// progress is the status line while the job runs: how many keys are done.
func (j repairJob) progress() string {
	return fmt.Sprintf("repairing… %d of %d keys", j.total-len(j.queue)-j.inFlight, j.total)
}

// repairAll offers to EXPIRE NX every stuck or no-expiry counter that the
// filter shows. It asks for a window first when none is known for some of
// them (windowFor), and always asks for confirmation before anything is sent.
func (m *Model) repairAll() tea.Cmd {
	if m.repair.running() {
		m.status = info("A repair is already running: wait for it to finish.")
		return nil
	}
	var targets []repairTarget
	var windowless []string
	m.store.EachProblem(func(key string, rule model.Rule) {
		if w, ok := m.windowFor(key, rule); ok {
			targets = append(targets, repairTarget{key, w})
		} else {
			windowless = append(windowless, key)
		}
	})
	switch {
	case len(targets)+len(windowless) == 0:
		m.status = info("Nothing to repair: no stuck or no-expiry counter in view.")
		return nil
	case len(windowless) > 0:
		label := fmt.Sprintf("window for the %s whose rule gives none (e.g. 60s): ", plural(len(windowless), "key"))
		return m.askWindow(label, func(m *Model, w time.Duration) tea.Cmd {
			for _, k := range windowless {
				targets = append(targets, repairTarget{k, w})
			}
			m.confirmRepair(targets)
			return nil
		})
	}
	m.confirmRepair(targets)
	return nil
}

// confirmRepair opens the dialog that says how many keys get which window.
func (m *Model) confirmRepair(targets []repairTarget) {
	perWindow := map[time.Duration]int{}
	for _, t := range targets {
		perWindow[t.window]++
	}
	windows := make([]time.Duration, 0, len(perWindow))
	for w := range perWindow {
		windows = append(windows, w)
	}
	slices.Sort(windows)
	var details []string
	for _, w := range windows {
		details = append(details, fmt.Sprintf("%s on %s (window %s)", expireCommand("KEY", w), plural(perWindow[w], "key"), model.FormatDuration(w)))
	}
	details = append(details, "NX: a key that got a TTL in the meantime keeps it.")
	m.confirm = &confirm{
		question: fmt.Sprintf("Set an expiry on %s that have none?", plural(len(targets), "counter")),
		details:  details,
		yes: func(m *Model) tea.Cmd {
			m.repair = repairJob{queue: targets, total: len(targets)}
			return m.sendRepairs()
		},
	}
}

// sendRepairs sends queued writes until repairInFlight are under way.
func (m *Model) sendRepairs() tea.Cmd {
	var cmds []tea.Cmd
	for m.repair.inFlight < repairInFlight && len(m.repair.queue) > 0 {
		t := m.repair.queue[0]
		m.repair.queue = m.repair.queue[1:]
		m.repair.inFlight++
		cmds = append(cmds, m.expireCmd(t.key, t.window, true))
	}
	return tea.Batch(cmds...)
}

// onRepaired counts one write of a repair-all, sends the next, and when the
// last one is back, sums up in the status line.
func (m *Model) onRepaired(msg expireDoneMsg) tea.Cmd {
	j := &m.repair
	j.inFlight--
	switch {
	case msg.err != nil:
		j.failed++
		j.lastErr = model.Printable(msg.key) + ": " + model.SafeText(msg.err.Error())
	case msg.set:
		j.set++
	case msg.obs.PTTL == model.PTTLMissing:
		j.gone++
	default:
		j.already++
	}
	if j.running() {
		return m.sendRepairs()
	}
	summary := fmt.Sprintf("repaired %s, %d already had a TTL, %d failed", plural(j.set, "key"), j.already, j.failed)
	if j.gone > 0 {
		summary += fmt.Sprintf(", %d no longer existed", j.gone)
	}
	if j.failed > 0 {
		m.status = failed("%s (last error: %s)", summary, j.lastErr)
	} else {
		m.status = done("%s", summary)
	}
	return nil
}

// plural is "1 key", "5 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
