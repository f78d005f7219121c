package redisclient

import (
	"container/heap"
	"context"
	"time"

	"github.com/countertop/countertop/model"
)

// rereads says when a live feed (events or tracking) reads again the keys
// whose changes it would not hear of:
//
//   - the keys of a type whose notifications a master does not send (its
//     notify-keyspace-events lacks the class: see typeClasses), an
//     interval after each read, as polling reads them;
//   - the logs whose hits leave their window, which no write tells: when
//     the oldest hit inside the window leaves it (model.LogFalls), but no
//     sooner than an interval after the last read, so that a busy log
//     costs what polling it would, and one whose hits are minutes apart a
//     read a hit. A log with no hit inside its window costs nothing until
//     a write, which events tell.
//
// Each such reading says until when the feed vouches for it
// (Observation.KnownUntil), so that the screen says how old it is rather
// than live. It keeps one entry per key scheduled, and a heap of when, with
// the entries a later read left stale (rebuilt when they outnumber the
// keys): memory grows with the keys scheduled, not with the reads. Only the
// reader's goroutine uses it.
type rereads struct {
	interval time.Duration
	ruleFor  func(key string) model.Rule
	polled   map[string]bool      // the types ("hash", "zset", "list") read again every interval
	due      map[string]time.Time // key -> when it is read again
	queue    dueQueue
}

// newRereads returns an empty schedule, with keys read again no sooner
// than interval after their last read.
func newRereads(interval time.Duration, ruleFor func(string) model.Rule) *rereads {
	return &rereads{interval: interval, ruleFor: ruleFor, polled: map[string]bool{}, due: map[string]time.Time{}}
}

// classTypes are the types whose changes each of typeClasses' classes
// notifies.
var classTypes = map[byte]string{'h': "hash", 'z': "zset", 'l': "list"}

// poll sets the types read every interval to those of classes, the
// classes of typeClasses a master does not send. It reports whether a
// type was added: its keys known already are scheduled at their next
// read, and only a full pass reads them all.
func (s *rereads) poll(classes string) (added bool) {
	polled := map[string]bool{}
	for i := 0; i < len(classes); i++ {
		if t, ok := classTypes[classes[i]]; ok {
			polled[t] = true
			added = added || !s.polled[t]
		}
	}
	s.polled = polled
	return added
}

// observed schedules o's key by what was read of it, and says in o until
// when the feed vouches for it. A key gone, or one that needs no second
// read, leaves the schedule.
func (s *rereads) observed(o *model.Observation) {
	var next time.Time
	switch {
	case o.PTTL == model.PTTLMissing || o.Type == "none":
	case s.polled[o.Type]:
		o.KnownUntil, next = o.At, o.At.Add(s.interval)
	default:
		if falls, ok := model.LogFalls(o, s.ruleFor(o.Key)); ok {
			o.KnownUntil, next = falls, falls
			if soonest := o.At.Add(s.interval); next.Before(soonest) {
				next = soonest
			}
		}
	}
	if next.IsZero() {
		delete(s.due, o.Key)
		return
	}
	s.due[o.Key] = next
	heap.Push(&s.queue, dueEntry{next, o.Key})
	if len(s.queue) > 2*len(s.due)+staleTurns {
		s.rebuild()
	}
}

// rebuild makes the heap anew from the keys scheduled, leaving out the
// stale entries.
func (s *rereads) rebuild() {
	s.queue = s.queue[:0]
	for k, at := range s.due {
		s.queue = append(s.queue, dueEntry{at, k})
	}
	heap.Init(&s.queue)
}

// next returns when the first key is due; false when none is scheduled.
func (s *rereads) next() (time.Time, bool) {
	for len(s.queue) > 0 {
		e := s.queue[0]
		if at, ok := s.due[e.key]; ok && at.Equal(e.at) {
			return e.at, true
		}
		heap.Pop(&s.queue) // stale: read since, or gone
	}
	return time.Time{}, false
}

// take returns up to n of the keys due by now, the earliest first, and
// takes them off the schedule: their read puts them back (see observed).
func (s *rereads) take(now time.Time, n int) []string {
	var keys []string
	for len(keys) < n {
		at, ok := s.next()
		if !ok || at.After(now) {
			break
		}
		e := heap.Pop(&s.queue).(dueEntry)
		delete(s.due, e.key)
		keys = append(keys, e.key)
	}
	return keys
}

// len returns how many keys are scheduled.
func (s *rereads) len() int { return len(s.due) }

// dueEntry is an entry of dueQueue: key is due at at.
type dueEntry struct {
	at  time.Time
	key string
}

// dueQueue is a heap of dueEntry, the earliest first (container/heap).
type dueQueue []dueEntry

func (q dueQueue) Len() int           { return len(q) }
func (q dueQueue) Less(i, j int) bool { return q[i].at.Before(q[j].at) }
func (q dueQueue) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *dueQueue) Push(x any)        { *q = append(*q, x.(dueEntry)) }
func (q *dueQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = dueEntry{}
	*q = old[:len(old)-1]
	return e
}

// readDue reads again the keys due by now (see rereads), a few pipelines'
// worth at a time, so that the keys events name wait for no more.
func (w *pushWatcher) readDue(ctx context.Context) error {
	keys := w.rereads.take(time.Now(), inTurnChunk*w.o.BatchSize)
	if len(keys) == 0 {
		return nil
	}
	_, err := w.fetch(ctx, keys, false)
	return err
}
