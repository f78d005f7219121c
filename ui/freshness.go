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
// it stops, the rows age as polled rows do. Among several servers each
// server's liveAt moves by its own feed, so that one server's live feed
// vouches for none of another's rows.
func (m *Model) noteLive() {
	if m.paused {
		return
	}
	now := m.now()
	moveLive(&m.liveAt, m.following(), m.health.Behind, now)
	for _, s := range m.servers {
		moveLive(&s.liveAt, s.following() && !m.feedClosed, s.health.Behind, now)
	}
}

// moveLive moves liveAt on to now while a feed that follows is not
// behind, or to as far behind as it is.
func moveLive(liveAt *time.Time, following bool, behind time.Duration, now time.Time) {
	switch {
	case !following:
	case behind == 0:
		*liveAt = now
	case now.Add(-behind).After(*liveAt):
		*liveAt = now.Add(-behind)
	}
}

// vouched is when a row read at read is known true, by a feed last live
// at liveAt: then, or later when a live feed said it did not change
// since; but no later than until when until is not zero: a reading the
// feed vouches for only until then (a type whose events the server does
// not send, a log whose hits leave its window: see
// model.Observation.KnownUntil) is known true until then at most.
func vouched(liveAt, read, until time.Time) time.Time {
	at := read
	if liveAt.After(read) {
		at = liveAt
	}
	if !until.IsZero() && until.Before(at) {
		return until
	}
	return at
}

// liveOf is when the feed that reads server's rows was last live (see
// noteLive), and whether it is live now: among several servers that
// server's own feed, else the one feed.
func (m *Model) liveOf(server string) (time.Time, bool) {
	if m.several() {
		if s := m.serverOf(server); s != nil {
			return s.liveAt, s.live() && !m.feedClosed
		}
	}
	return m.liveAt, m.live()
}

// shownAsOf is the oldest time the rows on screen (the table's, or the
// detail screen's row) are known true as of, each vouched for by its own
// server's feed; the soonest time until which the feed vouches for one
// of them, zero when it vouches for all while live; and whether the feed
// of every one of them is live. Both times are zero when there are no
// rows.
func (m *Model) shownAsOf() (asOf, until time.Time, live bool) {
	live = true
	see := func(server string, read, till time.Time) {
		liveAt, ok := m.liveOf(server)
		live = live && ok
		if at := vouched(liveAt, read, till); asOf.IsZero() || at.Before(asOf) {
			asOf = at
		}
		if !till.IsZero() && (until.IsZero() || till.Before(until)) {
			until = till
		}
	}
	if m.screen == screenDetail {
		if c, ok := m.store.Get(m.detail.id); ok {
			see(c.Server, c.ObservedAt, c.KnownUntil)
		}
	} else {
		m.store.EachShownRead(m.offset, m.tableRows(), see)
	}
	return asOf, until, live
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
	shown, until, live := m.shownAsOf()
	if shown.IsZero() { // no rows: when the feed last read, finding none
		live = m.live()
		shown = m.lastData
		if m.feedState.UpdatedAt.After(shown) {
			shown = m.feedState.UpdatedAt
		}
	}
	switch {
	case shown.IsZero():
		return m.theme.Dim.Render("no data yet")
	case live && (until.IsZero() || until.After(now)):
		return "live"
	}
	age := max(0, now.Sub(shown))
	text := "read " + model.FormatDuration(age) + " ago"
	if all := m.store.OldestRead(); !all.IsZero() {
		if allAge := now.Sub(vouched(m.oldestLiveAt(), all, m.store.SoonestKnownUntil())); allAge > age+staleDifference {
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

// oldestLiveAt is when the feed of every row was last live: among
// several servers the soonest of theirs, so that the oldest row of all is
// not vouched for by another server's feed.
func (m *Model) oldestLiveAt() time.Time {
	if !m.several() {
		return m.liveAt
	}
	var oldest time.Time
	for i, s := range m.servers {
		if i == 0 || s.liveAt.Before(oldest) {
			oldest = s.liveAt
		}
	}
	return oldest
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
	_, live := m.liveOf(c.Server)
	mode := m.feedState.Mode
	if s := m.serverOf(c.Server); s != nil && m.several() {
		mode = s.state.Mode // the row's server's, not the summary's
	}
	switch until := c.KnownUntil; {
	case !live:
	case until.IsZero() || until.After(now):
		text += " (unchanged since, as " + mode.Spec().Word + " tell)"
	case !until.After(c.ObservedAt):
		text += " (the server sends no events of its type: read every interval)"
	default:
		text += " (hits have left its window since: read again within the interval)"
	}
	return text
}
