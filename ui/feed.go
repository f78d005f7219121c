package ui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// maxCoalesce bounds how many waiting batches one message carries, so that
// a feed that never pauses cannot keep a drain loop from returning.
const maxCoalesce = 256

// batchesMsg is one or more batches that were waiting on the feed.
type batchesMsg struct {
	batches []model.Batch
	closed  bool // the feed was closed after these
}

// listen waits for the next batch, then takes whatever else is already
// waiting without blocking, so a burst reaches Update as one message and
// costs one render. A closed feed ends listening.
func listen(feed <-chan model.Batch) tea.Cmd {
	return func() tea.Msg {
		b, ok := <-feed
		if !ok {
			return batchesMsg{closed: true}
		}
		msg := batchesMsg{batches: []model.Batch{b}}
		for len(msg.batches) < maxCoalesce {
			select {
			case b, ok := <-feed:
				if !ok {
					msg.closed = true
					return msg
				}
				msg.batches = append(msg.batches, b)
			default:
				return msg
			}
		}
		return msg
	}
}

// onBatches applies what the feed sent, or holds it while paused, and
// listens again. The feed is drained either way, so a watcher never blocks
// on a paused dashboard.
func (m *Model) onBatches(msg batchesMsg) tea.Cmd {
	now := m.now()
	for _, b := range msg.batches {
		if m.several() && b.Server != "" {
			// One server's word: its own line takes it, paused or not, and
			// the rest of the dashboard reads the servers summed up.
			m.applyServer(&b, now)
			st, h := m.summarize()
			if b.Health != nil {
				m.onHealth(h)
			}
			if b.State != nil {
				b.State = &st
			}
		} else if b.Health != nil {
			m.onHealth(*b.Health) // about the servers now, paused or not
		}
		if m.paused {
			m.held.add(b)
			if hasData(b) {
				m.held.arrived = now
			}
		} else {
			m.apply(b, now)
		}
	}
	if !m.paused {
		m.followFeed()
	}
	if msg.closed {
		m.feedClosed = true
		return nil
	}
	return listen(m.feed)
}

// apply puts one batch that arrived at the given time into the Store and
// the header's feed state.
func (m *Model) apply(b model.Batch, arrived time.Time) {
	if b.State != nil {
		was := reachable(m.feedState)
		m.feedState = *b.State
		m.noteStall()
		switch is := reachable(m.feedState); {
		case was && !is:
			m.downSince = m.lastData
			// A write that failed since the last data failed as the
			// outage began: it now says what the header says.
			if m.status.kind == statusFailed && m.status.cmd != "" && m.status.at.After(m.downSince) && m.feedState.LastError != "" {
				m.status = outage(m.status)
			}
		case !was && is:
			// A write that failed since the last data before the outage
			// failed because of it (the feed may notice after the user
			// does): its red sentence would now contradict the header.
			if m.status.kind == statusFailed && m.status.at.After(m.downSince) {
				m.status = info("%s Redis answers again now.", m.status.text)
			}
			m.downSince = time.Time{}
		}
	}
	if hasData(b) {
		m.store.Apply(b)
		m.lastData = arrived
	}
}

// held is what arrived while paused, reduced to the latest word on each key
// (an observation or a removal) and the latest feed state, so a long pause
// costs memory in proportion to the keys, not to how long it lasted. A
// write's word on one hash field's row (a field's repair) is held apart,
// after its key's: a later word on the key supersedes it.
type held struct {
	observed map[string]model.Observation
	fields   map[string]model.Observation // a field's row's, by its ID; nil until one
	removed  map[string]removal           // by model.ServerKey
	state    *model.FeedState
	arrived  time.Time // when the last batch with data arrived
}

// add holds a batch on top of what is held.
func (h *held) add(b model.Batch) {
	if h.observed == nil {
		h.observed = make(map[string]model.Observation)
		h.removed = make(map[string]removal)
	}
	for _, o := range b.Observed {
		if o.Field != "" {
			if h.fields == nil {
				h.fields = make(map[string]model.Observation)
			}
			if o.Server == "" {
				o.Server = b.Server
			}
			h.fields[model.RowOf(o.Server, o.Key, o.Field)] = o
			continue
		}
		if o.Server == "" {
			o.Server = b.Server
		}
		k := model.ServerKey(o.Server, o.Key)
		h.dropFields(o.Server, o.Key)
		h.observed[k] = o
		delete(h.removed, k)
	}
	for _, key := range b.Removed {
		k := model.ServerKey(b.Server, key)
		h.dropFields(b.Server, key)
		h.removed[k] = removal{server: b.Server, key: key}
		delete(h.observed, k)
	}
	if b.State != nil {
		h.state = b.State
	}
}

// removal is a key removed on a server, held.
type removal struct{ server, key string }

// dropFields lets go of the words held on key's fields' rows on server.
func (h *held) dropFields(server, key string) {
	for id, o := range h.fields {
		if o.Key == key && o.Server == server {
			delete(h.fields, id)
		}
	}
}

// hasData reports whether b says anything about keys.
func hasData(b model.Batch) bool { return len(b.Observed) > 0 || len(b.Removed) > 0 }

// len is how many keys were read (changed or not) or removed while paused.
func (h *held) len() int { return len(h.observed) + len(h.fields) + len(h.removed) }

// batch is everything held, as one batch to apply on resume.
func (h *held) batch() model.Batch {
	b := model.Batch{State: h.state}
	for _, o := range h.observed {
		b.Observed = append(b.Observed, o)
	}
	for _, o := range h.fields { // after their keys'
		b.Observed = append(b.Observed, o)
	}
	for _, r := range h.removed {
		if r.server != "" { // a removal names its server as a batch does
			b.Observed = append(b.Observed, model.Observation{Key: r.key, Server: r.server, Type: "none", PTTL: model.PTTLMissing})
			continue
		}
		b.Removed = append(b.Removed, r.key)
	}
	return b
}

// reachable reports whether s says Redis answers.
func reachable(s model.FeedState) bool { return s.Connected && s.LastError == "" }
