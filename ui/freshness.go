package ui

import (
	"time"

	"github.com/countertop/countertop/model"
)

// staleDifference is how much older than the rows on screen the oldest
// row of all must be for the header to name it too: more than the second
// the Store's oldest reading is rounded down by (see model.Store.OldestRead).
const staleDifference = 2 * time.Second

// live reports whether the feed vouches for every row as of now: events
// or invalidations arrive, Redis answers, no server is silent, and the
// feed keeps up with the changes. A row read a minute ago is then as fresh
// as one read now.
func (m *Model) live() bool {
	return m.following() && m.health.Behind == 0
}

// following reports whether events or invalidations arrive, Redis
// answers and no server is silent: the feed vouches for every row as of
// when it is behind by.
func (m *Model) following() bool {
	s := m.feedState
	return s.Pushed() && reachable(s) && !m.feedClosed && m.health.Silent == ""
}

// noteLive moves liveAt on to now while the feed is live (see live), or to
// as far behind as it is while it falls behind, at each message: from when
// it stops, the rows age as polled rows do.
func (m *Model) noteLive() {
	switch {
	case m.paused || !m.following():
	case m.health.Behind == 0:
		m.liveAt = m.now()
	case m.now().Add(-m.health.Behind).After(m.liveAt):
		m.liveAt = m.now().Add(-m.health.Behind)
	}
}

// asOf is when a row read at read is known to be true: then, or later
// when a live feed said it did not change since.
func (m *Model) asOf(read time.Time) time.Time {
	if m.liveAt.After(read) {
		return m.liveAt
	}
	return read
}

// vouched is asOf(read), but no later than until when until is not zero:
// a reading the feed vouches for only until then (a type whose events the
// server does not send, a log whose hits leave its window: see
// model.Observation.KnownUntil) is known true until then at most.
func (m *Model) vouched(read, until time.Time) time.Time {
	at := m.asOf(read)
	if !until.IsZero() && until.Before(at) {
		return until
	}
	return at
}

// shownAsOf is the oldest asOf of the keys on screen (the table's rows, or
// the detail screen's key), and the soonest time until which the feed
// vouches for one of them, zero when it vouches for all while live; both
// zero when there are no keys.
func (m *Model) shownAsOf() (asOf, until time.Time) {
	var oldest time.Time
	if m.screen == screenDetail {
		if c, ok := m.store.Get(m.detail.id); ok {
			oldest, until = c.ObservedAt, c.KnownUntil
		}
	} else {
		oldest = m.store.OldestReadOf(m.offset, m.tableRows())
		until = m.store.KnownUntilOf(m.offset, m.tableRows())
	}
	if oldest.IsZero() {
		return oldest, until
	}
	return m.vouched(oldest, until), until
}

// age is how fresh the data is, by the screen's clock: "live" while the
// feed vouches for every row on screen as of now; else how long ago the
// oldest row on screen was known true and, when the oldest row of all is
// older still, that too. Data
// that polling should have read again three intervals ago, or that a feed
// with an error or a silent server holds, is in the error style.
func (m *Model) age() string {
	now := m.clock()
	switch {
	case m.paused: // the screen shows the data as it stood then
		return "frozen at " + m.pausedAt.Local().Format("15:04:05")
	case m.health.Silent != "" && !m.feedClosed:
		return m.theme.Error.Render("no answer for " + model.FormatDuration(now.Sub(m.health.Since)))
	case m.following() && m.health.Behind > 0:
		// Changes arrive faster than countertop takes them in: the rows
		// are as Redis held them this long ago.
		return m.theme.Status[model.StatusWarn].Render("behind by " + model.FormatDuration(m.health.Behind))
	}
	shown, until := m.shownAsOf()
	if shown.IsZero() { // no rows: when the feed last read, finding none
		shown = m.lastData
		if m.feedState.UpdatedAt.After(shown) {
			shown = m.feedState.UpdatedAt
		}
	}
	switch {
	case shown.IsZero():
		return m.theme.Dim.Render("no data yet")
	case m.live() && (until.IsZero() || until.After(now)):
		return "live"
	}
	age := max(0, now.Sub(shown))
	text := "read " + model.FormatDuration(age) + " ago"
	if all := m.store.OldestRead(); !all.IsZero() {
		if allAge := now.Sub(m.vouched(all, m.store.SoonestKnownUntil())); allAge > age+staleDifference {
			text += " (oldest " + model.FormatDuration(allAge) + ")"
		}
	}
	s := m.feedState
	if stale := s.StaleAfter(); stale > 0 && age > stale || s.LastError != "" || m.feedClosed {
		// Polling reads the rows on screen every interval: data this old
		// means reads are failing or hanging.
		return m.theme.Error.Render(text)
	}
	return text
}

// cost is what countertop costs its busiest server, in commands a second;
// "" until the feed has measured it.
func (m *Model) cost() string {
	if m.health.At.IsZero() || m.feedClosed {
		return ""
	}
	return formatCount(int64(m.health.Commands+0.5)) + " cmd/s"
}

// silence is the sentence that names a server that has left a command
// unanswered for longer than an interval; "" when none has.
func (m *Model) silence() string {
	h := m.health
	if h.Silent == "" || m.feedClosed {
		return ""
	}
	return model.Printable(h.Silent) + " has not answered for " + model.FormatDuration(m.now().Sub(h.Since)) +
		": it may be busy with a slow command or a save, or frozen — countertop keeps waiting, and the values shown are as last read"
}

// readAgo is, for the detail screen, when c was last read and, while the
// feed is live, whether it vouches that c has not changed since: not of a
// type whose events the server does not send, nor of a log once a hit
// has left its window.
func (m *Model) readAgo(c *model.Counter, now time.Time) string {
	text := model.FormatDuration(max(0, now.Sub(c.ObservedAt))) + " ago"
	switch until := c.KnownUntil; {
	case !m.live():
	case until.IsZero() || until.After(now):
		text += " (unchanged since, as " + m.feedState.Mode.Spec().Word + " tell)"
	case !until.After(c.ObservedAt):
		text += " (the server sends no events of its type: read every interval)"
	default:
		text += " (hits have left its window since: read again within the interval)"
	}
	return text
}
