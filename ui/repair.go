package ui

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

const (
	// repairInFlight bounds the repairs of a repair-all that run at once,
	// so repairing a million keys neither starts a million goroutines nor
	// floods the server.
	repairInFlight = 8
)

// repairJob is a repair-all under way: a queue of repairs, at most
// repairInFlight of them sent at a time, and the tally so far.
type repairJob struct {
	queue    []model.Expiry
	total    int
	inFlight int

	tally   model.RepairTally
	lastErr string
	// stopped is the refusal that stopped the job, one every key would
	// meet alike (a read-only replica): the keys still queued were not
	// sent. "" while it runs on.
	stopped string
}

// running reports whether writes of the job are queued or under way.
func (j repairJob) running() bool { return j.inFlight > 0 || len(j.queue) > 0 }

// progress is the status line while the job runs: how many keys are done.
func (j repairJob) progress() string {
	return fmt.Sprintf("repairing… %d of %d keys", j.total-len(j.queue)-j.inFlight, j.total)
}

// repairAll offers to repair every stuck or no-expiry counter that the
// filter shows. It asks for a window first when none is known for some of
// them (windowFor), and always asks for confirmation before anything is sent.
func (m *Model) repairAll() tea.Cmd {
	if m.repair.running() {
		m.status = info("A repair is already running: wait for it to finish.")
		return nil
	}
	var targets []model.Expiry
	var windowless []rowRef
	m.store.EachProblem(func(id string, rule model.Rule) {
		c, _ := m.store.Get(id)
		if w, ok := m.windowFor(id, rule); ok {
			targets = append(targets, repairOfRow(&c, w))
		} else {
			windowless = append(windowless, refOf(&c))
		}
	})
	switch {
	case len(targets)+len(windowless) == 0:
		m.status = info("Nothing to repair: no stuck or no-expiry counter in view.")
		return nil
	case len(windowless) > 0:
		label := fmt.Sprintf("window for the %s whose rule gives none (e.g. 60s): ", plural(len(windowless), "key"))
		return m.askWindow(label, func(m *Model, w time.Duration) tea.Cmd {
			for _, r := range windowless {
				targets = append(targets, m.repairOf(r, w))
			}
			m.confirmRepair(targets)
			return nil
		})
	}
	m.confirmRepair(targets)
	return nil
}

// confirmRepair opens the dialog that says which repair each key gets, as
// it is sent, with KEY for the key's name and FIELD for a hash field's.
func (m *Model) confirmRepair(targets []model.Expiry) {
	perKind := map[model.Expiry]int{} // the repairs with KEY (and FIELD) for their keys
	for _, t := range targets {
		kind := model.Expiry{Key: "KEY", Window: t.Window, Shape: t.Shape}
		if t.Field != "" {
			kind.Field = "FIELD"
		}
		perKind[kind]++
	}
	kinds := slices.SortedFunc(maps.Keys(perKind), func(a, b model.Expiry) int {
		return cmp.Or(cmp.Compare(a.Window, b.Window), strings.Compare(a.String(), b.String()))
	})
	var details []string
	for _, k := range kinds {
		what := "key"
		if k.Field != "" {
			what = "hash field"
		}
		details = append(details, fmt.Sprintf("%s, window %s:", plural(perKind[k], what), model.FormatDuration(k.Window)), k.String())
	}
	details = append(details, "A key or a field that changed or got a TTL since it was read is left alone.")
	question := fmt.Sprintf("Set an expiry on %s that have none?", plural(len(targets), "counter"))
	if n, each := m.serversOf(targets); n > 0 {
		// Several servers: how many, and each one's keys, where one
		// yes sends writes to each of them.
		question = fmt.Sprintf("Set an expiry on %s on %s that have none?", plural(len(targets), "counter"), plural(n, "server"))
		details = append([]string{each}, details...)
	}
	m.confirm = &confirm{
		question: question,
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
		cmds = append(cmds, m.expireCmd(t, true))
	}
	return tea.Batch(cmds...)
}

// onRepaired counts one write of a repair-all, sends the next, and when the
// last one is back, sums up in the status line. A refusal every key would
// meet (a read-only replica) stops the job: the keys not sent yet are
// counted as not touched.
func (m *Model) onRepaired(msg expireDoneMsg) tea.Cmd {
	j := &m.repair
	j.inFlight--
	j.tally.Add(msg.outcome)
	if msg.err != nil {
		j.lastErr = model.RowName(msg.expiry.Key, msg.expiry.Field) + ": " + model.SafeText(msg.err.Error())
		if m.several() {
			j.lastErr = model.Printable(msg.expiry.Server) + ": " + j.lastErr
		}
		if refusesEveryKey(msg.err) && len(j.queue) > 0 {
			// Every key left would meet it too: they are not sent, and
			// the writes under way are let back.
			j.stopped = j.lastErr
			j.tally.Untouched += len(j.queue)
			j.queue = nil
		}
	}
	if j.running() {
		return m.sendRepairs()
	}
	switch {
	case j.stopped != "":
		m.status = failed("%s — stopped at the first refusal, which every key would meet: %s", j.tally, j.stopped)
	case j.tally.Count(model.ExpiryFailed) > 0:
		m.status = failed("%s (last error: %s)", j.tally, j.lastErr)
	default:
		m.status = done("%s", j.tally)
	}
	return nil
}

// refusesEveryKey reports whether err is a refusal every write to the
// server meets alike, whatever its key (a read-only replica), as the
// Writer's errors can tell.
func refusesEveryKey(err error) bool {
	var r interface{ RefusesEveryKey() bool }
	return errors.As(err, &r) && r.RefusesEveryKey()
}

// plural is "1 key", "5 keys".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
