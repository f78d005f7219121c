package redisclient

import (
	"context"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
	"golang.org/x/time/rate"
)

// budget holds the commands countertop sends on its own to each server
// (each master of a cluster) under Options.MaxCommands a second, counts
// them for the header, and notes the ones that wait for an answer, so that
// a server that stops answering shows within an interval in every mode.
//
// A go-redis hook on every client of a server (see hook) does the work, so
// that every read, SCAN, PING, INFO, CONFIG GET or topology read counts,
// whoever sends it; the user's own writes (see userWrite) pass untouched.
// A nil *budget counts nothing and holds nothing back.
type budget struct {
	limit rate.Limit // commands a second per server a bucket fills at (see burstShare); 0: no limit
	burst int        // what a server's bucket holds: a tenth of a second's worth

	mu      sync.Mutex
	servers map[string]*serverBudget // by budgetKey
}

// burstShare is the part of a second's budget a bucket holds: what may go
// at once after a quiet spell. The bucket fills at the rest of the budget,
// so that over any second, whatever went before, a server gets at most its
// budget: (1 - 1/burstShare)·limit·t + limit/burstShare for a span t of a
// second or more is no more than limit·t.
const burstShare = 10

// newBudget returns the budget of perSecond commands a second to each
// server; 0 or less is no limit.
func newBudget(perSecond int) *budget {
	b := &budget{servers: make(map[string]*serverBudget)}
	if perSecond > 0 {
		b.burst = max(1, perSecond/burstShare)
		b.limit = rate.Limit(max(1, perSecond-b.burst))
	}
	return b
}

// serverBudget is one server's bucket, count and waits.
type serverBudget struct {
	addr string        // for people: the server's address; "" for the one server (see budgetKey)
	lim  *rate.Limiter // nil: no limit
	sent atomic.Int64  // commands sent, ever

	mu      sync.Mutex
	waits   map[*wait]struct{} // commands sent and not answered yet
	samples []sample           // sent, now and then, for rate
	// unanswered is when the oldest command that gave up without an
	// answer since the server last answered was sent (Unix nanoseconds; 0:
	// none), and lastSent when a command was last sent: a read that timed
	// out, or an INFO that gave up after half an interval, leaves the
	// server silent although nothing waits any more.
	unanswered, lastSent int64
}

// A wait is a command, pipeline or ping sent to a server that has not been
// answered yet, since the time it holds (in Unix nanoseconds).
type wait struct{ since atomic.Int64 }

// sample is how many commands a server had been sent at a time.
type sample struct {
	at   time.Time
	sent int64
}

// budgetKey returns the key of the budget of the server at addr: in a
// cluster, each master has its own; elsewhere there is one server (behind
// Sentinel, the master of the moment), whatever address names it.
func (c *Client) budgetKey(addr string) string {
	if c.kind == cluster {
		return addr
	}
	return ""
}

// server returns the budget of key, made on first use. A Client made
// without Connect (some tests) has no budget: its servers are unbounded.
func (b *budget) server(key string) *serverBudget {
	if b == nil {
		return &serverBudget{addr: key, waits: make(map[*wait]struct{})}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.servers[key]
	if s == nil {
		s = &serverBudget{addr: key, waits: make(map[*wait]struct{})}
		if b.limit > 0 {
			s.lim = rate.NewLimiter(b.limit, b.burst)
		}
		b.servers[key] = s
	}
	return s
}

// maxBatch is how many keys one pipeline of reads may hold (two commands
// each) so that it fits in a bucket; 0 when there is no limit.
func (b *budget) maxBatch() int {
	if b == nil || b.limit == 0 {
		return 0
	}
	return max(1, b.burst/2)
}

// limited reports whether there is a limit.
func (b *budget) limited() bool { return b != nil && b.limit > 0 }

// take waits until the server's bucket has n commands' worth, and counts
// them; it gives up when ctx is done. Part of n may be paid already (see
// prepaid).
func (s *serverBudget) take(ctx context.Context, n int) error {
	s.sent.Add(int64(n))
	if cr, ok := ctx.Value(creditKey{}).(*credit); ok && cr.s == s {
		n -= int(cr.use(int64(n)))
	}
	if n <= 0 || s.lim == nil {
		return nil
	}
	return s.reserve(ctx, n)
}

// reserve takes n tokens from the bucket, going into debt, and waits until
// the debt is paid; on ctx's end it hands them back.
func (s *serverBudget) reserve(ctx context.Context, n int) error {
	now := time.Now()
	var rs []*rate.Reservation
	var delay time.Duration
	for n > 0 { // ReserveN refuses more than the bucket holds at once
		part := min(n, s.lim.Burst())
		r := s.lim.ReserveN(now, part)
		rs = append(rs, r)
		delay = r.DelayFrom(now)
		n -= part
	}
	if delay <= 0 {
		return nil
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		for _, r := range slices.Backward(rs) {
			r.Cancel()
		}
		return ctx.Err()
	}
}

// spend counts n commands that cannot wait (a watchdog's ping) and takes
// them from the bucket, into debt if need be: the reads that follow wait.
func (s *serverBudget) spend(n int) {
	s.sent.Add(int64(n))
	if s.lim != nil {
		s.lim.ReserveN(time.Now(), min(n, s.lim.Burst()))
	}
}

// creditKey is the context key of a credit.
type creditKey struct{}

// credit is budget paid for commands before they are sent: what the hook
// then takes for them comes from it first.
type credit struct {
	s    *serverBudget
	left atomic.Int64
}

// use takes up to n from the credit and returns how much it took.
func (cr *credit) use(n int64) int64 {
	for {
		left := cr.left.Load()
		got := min(left, n)
		if got <= 0 || cr.left.CompareAndSwap(left, left-got) {
			return max(got, 0)
		}
	}
}

// prepaid waits until the bucket of the server at addr has n commands'
// worth and returns a context that carries them, for the commands about to
// be sent there. It is for the reads that a deadline bounds (see
// withPipelineTimeout): paid before the deadline starts, the wait for the
// budget is not taken for a server slow to answer.
func (c *Client) prepaid(ctx context.Context, addr string, n int) (context.Context, error) {
	if !c.budget.limited() {
		return ctx, nil
	}
	s := c.budget.server(c.budgetKey(addr))
	if err := s.reserve(ctx, n); err != nil {
		return ctx, err
	}
	cr := &credit{s: s}
	cr.left.Store(int64(n))
	return context.WithValue(ctx, creditKey{}, cr), nil
}

// begin notes a command sent and returns the wait to end once answered.
func (s *serverBudget) begin() *wait {
	w := &wait{}
	now := time.Now().UnixNano()
	w.since.Store(now)
	s.mu.Lock()
	s.waits[w] = struct{}{}
	s.lastSent = now
	s.mu.Unlock()
	return w
}

// end notes that w was answered, or given up when answered is false.
func (s *serverBudget) end(w *wait, answered bool) {
	s.mu.Lock()
	delete(s.waits, w)
	switch since := w.since.Load(); {
	case answered:
		s.unanswered = 0
	case s.unanswered == 0 || since < s.unanswered:
		s.unanswered = since
	}
	s.mu.Unlock()
}

// wasAnswered reports whether a command that returned err was answered: it
// succeeded, or Redis replied with an error (redis.Nil included), as
// opposed to a timeout, a broken connection or a caller that gave up.
func wasAnswered(err error) bool { return err == nil || isReply(err) }

// touch says the server was heard from in the middle of w (a subscription
// that receives messages while its ping waits behind them).
func (w *wait) touch() { w.since.Store(time.Now().UnixNano()) }

// forgetSilence is how long after the last command sent to a server its
// commands that gave up stop counting as silence: a master that left the
// cluster is sent nothing more, and is not silent for ever.
const forgetSilence = 10 * time.Second

// oldestWait returns since when the server has not answered: when its
// oldest command still waiting was sent, or the oldest that gave up since
// it last answered, whichever is older; zero when it answered all.
func (s *serverBudget) oldestWait(now time.Time) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	oldest := int64(math.MaxInt64)
	for w := range s.waits {
		oldest = min(oldest, w.since.Load())
	}
	if s.unanswered != 0 && now.UnixNano()-s.lastSent < int64(forgetSilence) {
		oldest = min(oldest, s.unanswered)
	}
	if oldest == math.MaxInt64 {
		return time.Time{}
	}
	return time.Unix(0, oldest)
}

// rateWindow is the span over which rate counts the commands sent.
const rateWindow = 5 * time.Second

// rate returns the commands a second sent to the server over about the
// last rateWindow, as of now.
func (s *serverBudget) rate(now time.Time) float64 {
	sent := s.sent.Load()
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.samples); n == 0 || now.Sub(s.samples[n-1].at) >= rateWindow/10 {
		s.samples = append(s.samples, sample{now, sent})
	}
	// Keep one sample older than the window, as its base.
	for len(s.samples) > 2 && now.Sub(s.samples[1].at) >= rateWindow {
		s.samples = s.samples[1:]
	}
	base := s.samples[0]
	span := now.Sub(base.at).Seconds()
	if span < 0.5 {
		return 0 // too soon to say
	}
	return float64(sent-base.sent) / span
}

// busiest returns the commands a second sent to the server that got the
// most, as the header shows them: what the budget bounds.
func (b *budget) busiest(now time.Time) float64 {
	if b == nil {
		return 0
	}
	b.mu.Lock()
	servers := make([]*serverBudget, 0, len(b.servers))
	for _, s := range b.servers {
		servers = append(servers, s)
	}
	b.mu.Unlock()
	top := 0.0
	for _, s := range servers {
		top = max(top, s.rate(now))
	}
	return top
}

// silent returns the server that has left a command unanswered the longest,
// for longer than after, and since when; "" and zero when none has.
func (b *budget) silent(now time.Time, after time.Duration) (addr string, since time.Time) {
	if b == nil {
		return "", time.Time{}
	}
	b.mu.Lock()
	servers := make([]*serverBudget, 0, len(b.servers))
	for _, s := range b.servers {
		servers = append(servers, s)
	}
	b.mu.Unlock()
	for _, s := range servers {
		if w := s.oldestWait(now); !w.IsZero() && now.Sub(w) > after && (since.IsZero() || w.Before(since)) {
			addr, since = s.addr, w
		}
	}
	return addr, since
}

// userWrites are the commands countertop sends for the user (an increment,
// a repair, a delete): they are neither held back nor counted.
var userWrites = map[string]bool{
	"eval": true, "evalsha": true, "script": true, "fcall": true,
	"multi": true, "exec": true, "discard": true,
	"set": true, "incr": true, "incrby": true, "incrbyfloat": true, "decr": true, "decrby": true,
	"expire": true, "pexpire": true, "del": true, "unlink": true,
}

// userWrite reports whether cmd is one of the user's writes.
func userWrite(cmd redis.Cmder) bool { return userWrites[cmd.Name()] }

// hook returns the go-redis hook that holds the commands of a client of
// the server of key to its budget.
func (b *budget) hook(key string) redis.Hook { return budgetHook{b.server(key)} }

// budgetHook is a server's budget as a go-redis hook.
type budgetHook struct{ s *serverBudget }

func (budgetHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h budgetHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if userWrite(cmd) {
			return next(ctx, cmd)
		}
		if err := h.s.take(ctx, 1); err != nil {
			cmd.SetErr(err)
			return err
		}
		w := h.s.begin()
		err := next(ctx, cmd)
		h.s.end(w, wasAnswered(err))
		return err
	}
}

func (h budgetHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		n := 0
		for _, cmd := range cmds {
			if !userWrite(cmd) {
				n++
			}
		}
		if n == 0 {
			return next(ctx, cmds)
		}
		if err := h.s.take(ctx, n); err != nil {
			for _, cmd := range cmds {
				cmd.SetErr(err)
			}
			return err
		}
		w := h.s.begin()
		err := next(ctx, cmds)
		h.s.end(w, wasAnswered(err))
		return err
	}
}
