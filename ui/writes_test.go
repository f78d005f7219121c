package ui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// With no window known (no rule gives one, no --window), + asks Redis to
// increment only a key that has a TTL already, which needs none; for a key
// without one the user is asked for a window, once per key, and +, - and
// e use it from then on. Another such key is still asked about.
func TestTheWindowIsAskedForOncePerKey(t *testing.T) {
	obs := []model.Observation{
		str("quota:night", "4", 30_000),
		str("quota:day", "9", model.PTTLNoExpiry),
		str("quota:week", "1", model.PTTLNoExpiry),
	}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 40, obs...)

	m = selectKey(t, m, "quota:night") // has a TTL: nothing to ask
	m, cmd := press(m, "+")
	if m.prompt != nil {
		t.Fatalf("+ on a key with a TTL asked for a window: %q", statusText(m))
	}
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "INCRBY quota:night 1 -> 5") {
		t.Fatalf("status line %q", s)
	}

	m = selectKey(t, m, "quota:day") // no TTL: Redis says so, and the user is asked
	m, cmd = press(m, "+")
	m = run(t, m, cmd)
	if m.prompt == nil || !strings.Contains(statusText(m), "quota:day has no TTL yet: window to give it") {
		t.Fatalf("+ on a key without a TTL should ask for a window: %q", statusText(m))
	}
	m, cmd = press(m, "45s<enter>")
	m = run(t, m, cmd)
	for _, k := range []string{"+", "-", "+"} {
		m, cmd = press(m, k)
		if m.prompt != nil {
			t.Fatalf("%s asked for the window again: %q", k, statusText(m))
		}
		m = run(t, m, cmd)
	}
	unknown := model.WindowUnknown.String()
	want := []string{"INCR quota:night 1 " + unknown, "INCR quota:day 1 " + unknown,
		"INCR quota:day 1 45s", "INCR quota:day 1 45s", "INCR quota:day -1 45s", "INCR quota:day 1 45s"}
	if got := w.Calls(); !slices.Equal(got, want) {
		t.Fatalf("calls %v, want %v", got, want)
	}
	if c, _ := m.store.Get("quota:day"); c.Raw != "11" || !c.HasTTL() {
		t.Fatalf("quota:day: %+v", c)
	}
	m, _ = press(m, "<enter>")
	if !strings.Contains(flat(m), "window 45s (you gave it this session)") {
		t.Fatalf("the detail does not show the window given:\n%s", plain(m))
	}

	m, _ = press(m, "<esc>")
	m = selectKey(t, m, "quota:week")
	m, cmd = press(m, "+")
	if m = run(t, m, cmd); m.prompt == nil || !strings.Contains(statusText(m), "quota:week has no TTL yet") {
		t.Fatalf("another key must still be asked for its window: %q", statusText(m))
	}
}

// A key whose rule has a window, or any key when --window is set, is never
// asked for one.
func TestNoWindowIsAskedForWhenTheRuleOrWindowFlagGivesOne(t *testing.T) {
	for _, tc := range []struct {
		name, key string
		fallback  time.Duration // --window
		want      string
	}{
		{"rule", "ratelimit:api:42", 0, "INCR ratelimit:api:42 1 1m0s"},
		{"--window, no rule", "other:1", 20 * time.Second, "INCR other:1 1 20s"},
		{"--window, a rule without one", "quota:batch", 20 * time.Second, "INCR quota:batch 1 20s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rules := testRules()
			rules.Fallback.Window = tc.fallback
			obs := append(fixture(), str("other:1", "5", model.PTTLNoExpiry))
			store := model.NewStore(rules)
			store.Apply(model.Batch{Observed: obs})
			w := newFakeWriter().seed(obs...)
			m, _ := send(New(Options{Store: store, Writer: w, Now: testNow}), tea.WindowSizeMsg{Width: 120, Height: 40})
			m = selectKey(t, m, tc.key)
			m, cmd := press(m, "i1<enter>")
			if m.prompt != nil {
				t.Fatalf("asked for a window: %q", statusText(m))
			}
			run(t, m, cmd)
			if got := w.Calls(); !slices.Equal(got, []string{tc.want}) {
				t.Fatalf("calls %v, want %q", got, tc.want)
			}
		})
	}
}

// + on a key the dashboard knows is a hash, or text, is refused at once,
// in one sentence that says what to do, before any window or amount is
// asked for.
func TestIncrementOfANonStringIsRefusedAtOnce(t *testing.T) {
	obs := append(fixture(), model.Observation{Key: "quota:config", Type: "hash", PTTL: model.PTTLNoExpiry, At: t0})
	w := newFakeWriter().seed(obs...)
	for _, tc := range []struct{ key, keys string }{
		{"quota:config", "+"},       // quota:* has no window: it would have asked for one
		{"quota:config", "-"},       //
		{"quota:config", "i"},       // would have asked for an amount
		{"session:abc", "<enter>+"}, // from the detail screen
		{"", "nsession:abc<enter>"}, // by name
	} {
		t.Run(strings.TrimSpace(tc.key+" "+tc.keys), func(t *testing.T) {
			m := newModel(t, w, 120, 40, obs...)
			if tc.key != "" {
				m = selectKey(t, m, tc.key)
			}
			m, cmd := press(m, tc.keys)
			if cmd != nil || m.prompt != nil {
				t.Errorf("%s %q: something was started (prompt %v)", tc.key, tc.keys, m.prompt != nil)
			}
			s := statusText(m)
			if !strings.HasPrefix(s, "Nothing was sent: ") || !strings.Contains(s, " holds a hash, and INCRBY adds only to a string: pick a counter.") {
				t.Errorf("%s %q: status %q", tc.key, tc.keys, s)
			}
		})
	}
	// Text: INCRBY would be refused as not an integer.
	for _, keys := range []string{"+", "i"} {
		t.Run("cache:greeting "+keys, func(t *testing.T) {
			m := selectKey(t, newModel(t, w, 120, 40, obs...), "cache:greeting")
			m, cmd := press(m, keys)
			if cmd != nil || m.prompt != nil ||
				statusText(m) != "Nothing was sent: cache:greeting holds text, not a number, and INCRBY adds only to a number: pick a counter." {
				t.Errorf("cache:greeting %q: prompt %v, status %q", keys, m.prompt != nil, statusText(m))
			}
		})
	}
	if got := w.Calls(); len(got) > 0 {
		t.Fatalf("sent %v", got)
	}
}

// When the selected key vanishes (expired, deleted by someone else), the
// cursor moves to the row that took its place; the next write must not land
// on that key, which the user never chose.
func TestAWriteAfterTheSelectedKeyVanishedIsRefused(t *testing.T) {
	obs := []model.Observation{str("ratelimit:sel:1", "1", 60_000), str("ratelimit:sel:2", "1", 60_000), str("ratelimit:sel:3", "1", 60_000)}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 20, obs...)
	m = selectKey(t, m, "ratelimit:sel:2")
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Removed: []string{"ratelimit:sel:2"}}}})

	m, cmd := press(m, "+")
	want := "Nothing was sent: ratelimit:sel:2, which you had selected, left the rows (deleted, expired, or out of the filter), and the cursor moved to ratelimit:sel:3: press the key again to act on it."
	if cmd != nil || len(w.Calls()) > 0 || statusText(m) != want {
		t.Fatalf("status %q, calls %v: want %q and nothing sent", statusText(m), w.Calls(), want)
	}
	m, cmd = press(m, "+") // now it is a choice
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:sel:3 1 1m0s"}) { // ratelimit:* has a 60s window
		t.Fatalf("calls %v", got)
	}

	// Moving the cursor, or deleting the key oneself, is no surprise.
	m = selectKey(t, m, "ratelimit:sel:1")
	m, cmd = press(m, "dy")
	m = run(t, m, cmd)
	m, cmd = press(m, "+")
	if cmd == nil || strings.Contains(statusText(m), "Nothing was sent") {
		t.Errorf("after the user's own delete, + was refused: %q", statusText(m))
	}
}

// The answer that a key needs a window comes back from Redis later: it must
// not take over a prompt or a dialog the user opened meanwhile, and esc on
// the window prompt says nothing was sent.
func TestAWindowQuestionDoesNotTakeOverWhatIsOpen(t *testing.T) {
	obs := []model.Observation{str("quota:day", "9", model.PTTLNoExpiry), str("quota:week", "1", model.PTTLNoExpiry)}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 40, obs...)
	m = selectKey(t, m, "quota:day")
	m, cmd := press(m, "+")
	m, _ = press(m, "/quo") // typing a filter when the answer comes
	m = run(t, m, cmd)
	if m.prompt == nil || m.prompt.input.Value() != "quo" {
		t.Fatalf("the filter being typed was taken over: %+v", m.prompt)
	}
	// The status line shows the filter's prompt; the refusal is the status
	// once it closes.
	if want := "Nothing was sent: quota:day has no TTL yet, so INCRBY quota:day 1 needs a window: press the key again to give one."; m.status.text != want {
		t.Fatalf("status %q, want %q", m.status.text, want)
	}

	m, _ = press(m, "<esc><esc>")
	m, cmd = press(m, "+")
	m = run(t, m, cmd)
	if m.prompt == nil {
		t.Fatal("no window prompt")
	}
	m, _ = press(m, "<esc>")
	if s := statusText(m); s != "Cancelled: nothing was sent." {
		t.Fatalf("after esc the status is %q", s)
	}
	if got := len(w.Calls()); got != 2 { // the two increments sent with no window, both refused
		t.Fatalf("calls %v", w.Calls())
	}
}

// A key that leaves a status filter by a change of its own (an ok counter
// turns warn under is:ok) moves the cursor as much as one deleted; a
// filter the user changes does not count.
func TestAWriteAfterTheSelectedKeyLeftTheFilterIsRefused(t *testing.T) {
	obs := []model.Observation{str("ratelimit:0", "90", 60_000), str("ratelimit:a", "1", 60_000), str("ratelimit:b", "1", 60_000)}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 20, obs...)
	m, _ = press(m, "/is:ok<enter>")
	m = selectKey(t, m, "ratelimit:a")
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{str("ratelimit:a", "85", 60_000)}}}}) // warn now
	w.values["ratelimit:a"] = 85                                                                                          // as Redis holds it
	m, cmd := press(m, "+")
	if cmd != nil || len(w.Calls()) > 0 || !strings.HasPrefix(statusText(m), "Nothing was sent: ratelimit:a, which you had selected, left the rows") {
		t.Fatalf("status %q, calls %v", statusText(m), w.Calls())
	}

	m, _ = press(m, "/<esc>") // the user's own filter change
	m = selectKey(t, m, "ratelimit:b")
	m, _ = press(m, "/is:warn<enter>")
	shown := m.selected.id // on screen under the cursor: the user sees what + acts on
	m, cmd = press(m, "+")
	if cmd == nil {
		t.Fatalf("after the user's own filter, + was refused: %q", statusText(m))
	}
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR " + shown + " 1 1m0s"}) {
		t.Fatalf("calls %v: + should go to %s, the row selected on screen", got, shown)
	}

	// The user's own + can push the key out of the filter (is:warn still)
	// as well.
	m = selectKey(t, m, "ratelimit:a") // 85 or 86: warn
	for range 20 {                     // up to 100 (over, out of is:warn), until a press is refused
		m, cmd = press(m, "+")
		if cmd == nil {
			break
		}
		m = run(t, m, cmd)
	}
	if c, _ := m.store.Get("ratelimit:a"); c.Status != model.StatusOver || !strings.HasPrefix(statusText(m), "Nothing was sent: ratelimit:a, which you had selected, left the rows") {
		t.Fatalf("ratelimit:a is %v, status %q", c.Status, statusText(m))
	}
}

// A repair-all's answers must not undo the guard: a key found gone by the
// repair is not the selected key that left the rows meanwhile.
func TestARepairAllKeepsTheGuardOnAVanishedSelection(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	delete(w.values, "ratelimit:orphan") // the repair will find it gone
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "Ey")
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Removed: []string{"ratelimit:api:42"}}}}) // meanwhile
	m = run(t, m, cmd)
	calls := len(w.Calls())
	m, cmd = press(m, "+")
	if cmd != nil || len(w.Calls()) != calls || !strings.HasPrefix(statusText(m), "Nothing was sent: ratelimit:api:42, which you had selected, left the rows") {
		t.Fatalf("status %q: + after the selected key vanished during a repair was not refused", statusText(m))
	}
}

// +, - and i on a key its library writes otherwise (a log, a bucket, a
// GCRA key, opaque state) are refused at once, saying what the library
// writes, and nothing reaches Redis; a counter beside them still counts.
func TestIncrIsRefusedOnLayoutsThatAreNotCounters(t *testing.T) {
	sec := float64(t0.Unix())
	obs := []model.Observation{
		{Key: "ratelimit:log:1", Type: "zset", Len: 3, Newest: sec, Oldest: sec - 1, InWindow: 3, PTTL: 60_000, At: t0},
		{Key: "ratelimit:list:1", Type: "list", Len: 2, Newest: sec, Oldest: sec - 1, InWindow: 2, PTTL: 60_000, At: t0},
		{Key: "ratelimit:bucket:1", Type: "hash", Len: 2, Fields: []model.Field{{Name: "tokens", Value: "4.5"}, {Name: "refilledAt", Value: "1764620400000"}}, PTTL: 60_000, At: t0},
		str("ratelimit:gcra:1", gcraTAT(t0.Add(5*time.Second)), 5_000),
		str("ratelimit:java:1", "\xac\xed\x00\x05sr\x00\x10bucket", model.PTTLNoExpiry),
		str("ratelimit:api:1", "3", 30_000),
	}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 40, obs...)
	for _, tc := range []struct{ key, layout, says string }{
		{"ratelimit:log:1", "log", "ratelimit:log:1 is a log: its limiter adds one ZADD per hit; countertop writes counters only."},
		{"ratelimit:list:1", "log", "its limiter adds one LPUSH per hit"},
		{"ratelimit:bucket:1", "bucket", "is a token bucket: its limiter sets the tokens left and when it refilled (HSET)"},
		{"ratelimit:gcra:1", "gcra", "is a GCRA key: its limiter SETs a new arrival time"},
		{"ratelimit:java:1", "opaque", "holds opaque state"},
	} {
		t.Run(tc.key, func(t *testing.T) {
			if c, _ := m.store.Get(tc.key); c.Layout.String() != tc.layout {
				t.Fatalf("%s read as %s, want %s", tc.key, c.Layout, tc.layout)
			}
			m = selectKey(t, m, tc.key)
			for _, k := range []string{"+", "-", "i"} {
				var cmd tea.Cmd
				m, cmd = press(m, k)
				if cmd != nil || m.prompt != nil {
					t.Fatalf("%s on %s was not refused at once (prompt %v)", k, tc.key, m.prompt != nil)
				}
				if s := statusText(m); !strings.Contains(s, "Nothing was sent: ") || !strings.Contains(s, tc.says) {
					t.Fatalf("%s on %s: status %q, want it to say %q", k, tc.key, s, tc.says)
				}
			}
		})
	}
	m = selectKey(t, m, "ratelimit:api:1")
	m, cmd := press(m, "+")
	run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:api:1 1 1m0s"}) {
		t.Fatalf("calls %v, want only the counter's INCR", got)
	}
}

// gcraTAT is t as go-redis/redis_rate stores a GCRA key's arrival time:
// seconds since 2017-01-01 with a fraction.
func gcraTAT(t time.Time) string {
	since := t.Sub(time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC))
	return strconv.FormatFloat(since.Seconds()+0.116631, 'f', -1, 64)
}
