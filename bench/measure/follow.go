package measure

import (
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/countertop/countertop/model"
)

// Incr is one INCR a load generator sent: its key, the value Redis
// answered, and when the answer came (Unix nanoseconds).
type Incr struct {
	Key   string
	Value int64
	At    int64
}

// Follower applies a watcher's feed to a model.Store as the dashboard does,
// and notes when each key first held each value, so that the time from an
// INCR's answer to the store holding it can be measured.
type Follower struct {
	mu      sync.Mutex
	changed *sync.Cond
	store   *model.Store
	arrived map[string][]arrival // per key, in the order they came
}

type arrival struct {
	value int64
	at    int64 // Unix nanoseconds
}

// NewFollower returns a Follower with an empty store.
func NewFollower() *Follower {
	f := &Follower{store: model.NewStore(&model.Rules{}), arrived: make(map[string][]arrival)}
	f.changed = sync.NewCond(&f.mu)
	return f
}

// Follow applies batches until feed is closed.
func (f *Follower) Follow(feed <-chan model.Batch) {
	for b := range feed {
		f.mu.Lock()
		f.store.Apply(b)
		now := time.Now().UnixNano()
		for _, o := range b.Observed {
			v, err := strconv.ParseInt(o.Raw, 10, 64)
			if err != nil {
				continue // not a counter
			}
			if a := f.arrived[o.Key]; len(a) == 0 || a[len(a)-1].value != v {
				f.arrived[o.Key] = append(a, arrival{v, now})
			}
		}
		f.changed.Broadcast()
		f.mu.Unlock()
	}
}

// WaitFor waits until cond holds of the store, and reports false when that
// takes longer than timeout.
func (f *Follower) WaitFor(timeout time.Duration, cond func(*model.Store) bool) bool {
	var timedOut bool
	timer := time.AfterFunc(timeout, func() {
		f.mu.Lock()
		timedOut = true
		f.changed.Broadcast()
		f.mu.Unlock()
	})
	defer timer.Stop()
	f.mu.Lock()
	defer f.mu.Unlock()
	for !cond(f.store) {
		if timedOut {
			return false
		}
		f.changed.Wait()
	}
	return true
}

// HoldsAll is the condition, for WaitFor, that the store holds every
// value incrs answered, or a later one.
func HoldsAll(incrs []Incr) func(*model.Store) bool {
	return func(s *model.Store) bool {
		for _, in := range incrs {
			c, _ := s.Get(in.Key)
			if v, ok := c.Value.Number(); !ok || int64(v) < in.Value {
				return false
			}
		}
		return true
	}
}

// Latencies returns, sorted, how long after each of incrs was answered the
// store first held its value or a later one; 0 when it had it before the
// answer reached the generator. The store must hold them all (HoldsAll).
func (f *Follower) Latencies(incrs []Incr) Latencies {
	f.mu.Lock()
	defer f.mu.Unlock()
	lat := make(Latencies, len(incrs))
	for i, in := range incrs {
		a := f.arrived[in.Key]
		j := slices.IndexFunc(a, func(a arrival) bool { return a.value >= in.Value })
		lat[i] = time.Duration(max(0, a[j].at-in.At))
	}
	slices.Sort(lat)
	return lat
}
