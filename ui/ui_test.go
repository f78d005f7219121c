package ui

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/countertop/countertop/model"
)

// selectKey moves the cursor down until key is selected.
func selectKey(t *testing.T, m *Model, key string) *Model {
	t.Helper()
	m, _ = press(m, "g")
	for range m.store.Visible() {
		if m.selected.id == key {
			return m
		}
		m, _ = press(m, "j")
	}
	t.Fatalf("key %q is not in view", key)
	return m
}

// selectedLine is the screen line the cursor is on.
func selectedLine(t *testing.T, m *Model) string {
	t.Helper()
	for _, l := range strings.Split(plain(m), "\n") {
		if strings.HasPrefix(l, "▸ ") {
			return l
		}
	}
	t.Fatalf("no selected row on screen:\n%s", plain(m))
	return ""
}

func batch(obs ...model.Observation) batchesMsg {
	return batchesMsg{batches: []model.Batch{{Observed: obs}}}
}

func TestSelectionStaysOnTheSameKey(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:7")

	// Keys sorted above it arrive: the cursor moves down with the key.
	m, _ = send(m, batch(str("aaa:1", "1", 5000), str("aaa:2", "1", 5000)))
	if m.selected.id != "ratelimit:api:7" || !strings.Contains(selectedLine(t, m), "ratelimit:api:7") {
		t.Fatalf("selection moved off ratelimit:api:7 to %q", m.selected.id)
	}

	// Sorted by value, a new reading reorders the rows.
	m, _ = press(m, "s")
	before := m.cursor
	m, _ = send(m, batch(model.Observation{Key: "ratelimit:api:7", Type: "string", Raw: "5000", PTTL: 9000, At: t0.Add(time.Second)}))
	if m.selected.id != "ratelimit:api:7" || m.cursor == before {
		t.Fatalf("after a reorder the selection is %q at %d (was at %d)", m.selected.id, m.cursor, before)
	}
	if !strings.Contains(selectedLine(t, m), "5000") {
		t.Fatalf("selected row does not show the new value: %q", selectedLine(t, m))
	}
}

func TestSelectionKeepsItsPlaceWhenTheKeyGoes(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	at := m.cursor
	next := m.store.Rows(at+1, 1)[0].Key

	m, _ = send(m, batchesMsg{batches: []model.Batch{{Removed: []string{"ratelimit:api:42"}}}})
	if m.cursor != at || m.selected.id != next {
		t.Fatalf("selection is %q at %d, want %q at %d", m.selected.id, m.cursor, next, at)
	}
}

func TestScrollingKeepsTheCursorInView(t *testing.T) {
	var obs []model.Observation
	for i := range 100 {
		obs = append(obs, str(fmt.Sprintf("ratelimit:k:%03d", i), "1", 30_000))
	}
	m := newModel(t, nil, 80, 24, obs...)
	m, _ = press(m, "G")
	if !strings.Contains(selectedLine(t, m), "ratelimit:k:099") {
		t.Fatalf("G did not bring the last key into view")
	}
	m, _ = press(m, "<pgup><pgup>")
	if !strings.Contains(selectedLine(t, m), m.selected.id) {
		t.Fatalf("after pgup the selected key %q is off screen", m.selected.id)
	}
	m, _ = press(m, "g")
	if !strings.Contains(selectedLine(t, m), "ratelimit:k:000") {
		t.Fatalf("g did not go back to the first key")
	}
}

func TestFilterNarrowsRowsAsYouType(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "/api")
	if m.store.Filter() != "api" || m.store.Visible() != 4 {
		t.Fatalf("typing /api: filter %q shows %d keys, want 4", m.store.Filter(), m.store.Visible())
	}
	if strings.Contains(plain(m), "views:home") {
		t.Fatal("a filtered-out key is still on screen")
	}
	m, _ = press(m, "<enter>")
	if m.prompt != nil || m.store.Filter() != "api" {
		t.Fatal("enter should keep the filter and close the prompt")
	}
	if !strings.Contains(plain(m), `filter: "api"`) || !strings.Contains(plain(m), "4 of 10 keys") {
		t.Fatalf("header does not show the filter:\n%s", plain(m))
	}

	m, _ = press(m, "/<backspace><backspace><backspace>is:problem<enter>")
	if got := m.store.Visible(); got != 2 {
		t.Fatalf("is:problem shows %d keys, want 2", got)
	}

	m, _ = press(m, "/x<esc>")
	if m.store.Filter() != "" || m.store.Visible() != 10 {
		t.Fatalf("esc in the filter prompt should clear it, filter is %q", m.store.Filter())
	}
}

func TestQTypesIntoAPrompt(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, cmd := press(m, "/q")
	if m.store.Filter() != "q" || isQuit(cmd) {
		t.Fatal("q in the filter prompt should be typed, not quit")
	}
	m, _ = press(m, "<esc>")
	if _, cmd = press(m, "q"); !isQuit(cmd) {
		t.Fatal("q on the table should quit")
	}
}

func isQuit(cmd tea.Cmd) bool {
	if cmd == nil {
		return false
	}
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

func TestSortCycles(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m = selectKey(t, m, "views:home")
	m, _ = press(m, "s")
	if m.store.Sort() != model.SortValue || !strings.Contains(plain(m), "sort: value") {
		t.Fatalf("s should sort by value, sort is %v", m.store.Sort())
	}
	if first := m.store.Rows(0, 1)[0].Key; first != "views:home" {
		t.Fatalf("largest value first: got %q", first)
	}
	if m.selected.id != "views:home" || m.cursor != 0 {
		t.Fatalf("selection should follow views:home to the top, is %q at %d", m.selected.id, m.cursor)
	}
	for range 4 {
		m, _ = press(m, "s")
	}
	if m.store.Sort() != model.SortStatus || !strings.Contains(plain(m), "sort: status") {
		t.Fatalf("five presses of s should sort by status, sort is %v", m.store.Sort())
	}
	m, _ = press(m, "s")
	if m.store.Sort() != model.SortKeyName {
		t.Fatalf("six presses of s should come back to the key order, got %v", m.store.Sort())
	}
}

// S reverses the sort in place: sorted by value, the smallest number comes
// first, the header says so, and the selection stays on its key; S again
// gives the order back.
func TestShiftSReversesTheSort(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "s") // by value, largest first
	m = selectKey(t, m, "views:home")
	largest := m.store.Rows(0, 1)[0].Key
	m, _ = press(m, "S")
	if !m.store.Reverse() || !strings.Contains(plain(m), "sort: value (reversed)") {
		t.Fatalf("S should reverse the sort and the header say so:\n%s", plain(m))
	}
	rows := m.store.Rows(0, m.store.Len())
	if rows[len(rows)-1].Key != largest || rows[0].Key == largest {
		t.Errorf("reversed, the largest value %q should come last, rows start with %q", largest, rows[0].Key)
	}
	if m.selected.id != "views:home" {
		t.Errorf("the selection moved to %q", m.selected.id)
	}
	m, _ = press(m, "S")
	if m.store.Reverse() || m.store.Rows(0, 1)[0].Key != largest || strings.Contains(plain(m), "reversed") {
		t.Errorf("S twice should give the largest-first order back")
	}
}

// clock is a settable Now.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func TestPauseHoldsBatchesAndFreezesTheClock(t *testing.T) {
	c := &clock{testNow()}
	m := newModel(t, nil, 120, 40, fixture()...)
	m.now = c.now
	m = selectKey(t, m, "ratelimit:api:42")
	if !strings.Contains(selectedLine(t, m), "41s") {
		t.Fatalf("expected 41s left: %q", selectedLine(t, m))
	}

	m, _ = press(m, "p")
	c.t = c.t.Add(5 * time.Second)
	m, cmd := send(m,
		batch(model.Observation{Key: "ratelimit:api:42", Type: "string", Raw: "55", PTTL: 38_000, At: t0.Add(6 * time.Second)}),
		batch(str("ratelimit:api:new", "1", 60_000)))
	if cmd == nil {
		t.Fatal("while paused the feed must still be drained")
	}
	line := selectedLine(t, m)
	if !strings.Contains(line, " 17 ") || !strings.Contains(line, "41s") {
		t.Fatalf("paused view changed: %q", line)
	}
	if !strings.Contains(plain(m), "PAUSED · 2 keys read") {
		t.Fatalf("no PAUSED badge:\n%s", plain(m))
	}
	if frozen := "frozen at " + m.pausedAt.Local().Format("15:04:05"); !strings.Contains(plain(m), frozen) || strings.Contains(strings.SplitN(plain(m), "\n", 2)[0], " ago") {
		t.Fatalf("the header should say when the screen froze (%q), not how old the data is:\n%s", frozen, plain(m))
	}
	if _, cmd := send(m, tickMsg{m.tickGen}); cmd != nil {
		t.Fatal("the clock should not tick while paused")
	}

	m, cmd = press(m, "p")
	if cmd == nil {
		t.Fatal("resuming should restart the clock")
	}
	line = selectedLine(t, m)
	if !strings.Contains(line, " 55 ") || !strings.Contains(line, "37s") {
		t.Fatalf("after resume the held reading is not shown: %q", line)
	}
	if _, ok := m.store.Get("ratelimit:api:new"); !ok {
		t.Fatal("a key that arrived while paused was not added on resume")
	}
}

func TestReadOnlyRefusesEveryWrite(t *testing.T) {
	for _, tc := range []struct {
		name   string
		opts   Options
		reason string
	}{
		{"read-only", Options{ReadOnly: true, Writer: newFakeWriter()}, "--read-only"},
		{"no writer", Options{}, "cannot write"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := tc.opts.Writer.(*fakeWriter)
			store := model.NewStore(testRules())
			store.Apply(model.Batch{Observed: fixture()})
			tc.opts.Store, tc.opts.Now = store, testNow
			m, _ := send(New(tc.opts), tea.WindowSizeMsg{Width: 120, Height: 40})
			m = selectKey(t, m, "ratelimit:legacy")
			if !strings.Contains(plain(m), "READ-ONLY") {
				t.Fatal("no READ-ONLY badge")
			}
			for _, k := range []string{"+", "-", "i", "n", "e", "E", "d"} {
				t.Run(k, func(t *testing.T) {
					m.status = statusLine{}
					got, cmd := press(m, k)
					if cmd != nil || got.prompt != nil || got.confirm != nil {
						t.Errorf("%s: something was started in read-only mode", k)
					}
					if s := statusText(got); !strings.Contains(s, "nothing was sent") || !strings.Contains(s, tc.reason) {
						t.Errorf("%s: status line %q does not say why nothing was sent", k, s)
					}
				})
			}
			if w != nil && len(w.Calls()) > 0 {
				t.Fatalf("writes were sent: %v", w.Calls())
			}
		})
	}
}

func TestIncrementUsesTheRuleWindow(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")

	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:api:42 1 1m0s"}) {
		t.Fatalf("calls %v", got)
	}
	if s := statusText(m); s != "INCRBY ratelimit:api:42 1 -> 18, TTL 43s" {
		t.Fatalf("status line %q", s)
	}
	if c, _ := m.store.Get("ratelimit:api:42"); c.Value.Int != 18 {
		t.Fatalf("the new value is not shown at once: %v", c.Value)
	}

	m, cmd = press(m, "-")
	m = run(t, m, cmd)
	if s := statusText(m); s != "INCRBY ratelimit:api:42 -1 -> 17, TTL 43s" {
		t.Fatalf("status line %q", s)
	}
}

func TestIncrementOfAPersistentCounterSendsNoWindow(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "views:home")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR views:home 1 0s"}) {
		t.Fatalf("calls %v", got)
	}
	if s := statusText(m); s != "INCRBY views:home 1 -> 1043, no TTL" {
		t.Fatalf("status line %q", s)
	}
}

func TestIncrementByN(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")

	m, cmd := press(m, "iabc<enter>")
	if cmd != nil || len(w.Calls()) > 0 {
		t.Fatalf("bad amount sent something: %v", w.Calls())
	}
	if s := statusText(m); !strings.Contains(s, `"abc" is not an amount`) || !strings.Contains(s, "Nothing was sent") {
		t.Fatalf("status line %q", s)
	}

	if m.prompt == nil || m.prompt.input.Value() != "abc" {
		t.Fatal("the prompt should stay open with the answer to mend")
	}

	// 17 is an integer: a decimal makes it one, which is asked first.
	m, cmd = press(m, "<backspace><backspace><backspace>2.5<enter>")
	m = run(t, m, cmd)
	if m.confirm == nil {
		t.Fatalf("no question before 17 turns decimal: %q", statusText(m))
	}
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:api:42 2.5 1m0s", "INCR ratelimit:api:42 2.5 1m0s (may make it decimal)"}) {
		t.Fatalf("calls %v", got)
	}
	if s := statusText(m); s != "INCRBYFLOAT ratelimit:api:42 2.5 -> 19.5, TTL 43s" {
		t.Fatalf("status line %q", s)
	}
}

// i with a whole number on a counter that holds a decimal is sent as
// INCRBYFLOAT, which Redis takes, not INCRBY, which it refuses.
func TestIncrementAFloatCounterByAWholeNumber(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "quota:batch") // holds 2.5
	m, cmd := press(m, "i2<enter>")
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "INCRBYFLOAT quota:batch 2 -> 4.5") {
		t.Fatalf("status line %q", s)
	}
}

// An empty name stays in the prompt, as any answer refused does, and the
// problem goes once the answer is being mended.
func TestAnEmptyKeyNameStaysInThePrompt(t *testing.T) {
	w := newFakeWriter()
	m := newModel(t, w, 120, 40, fixture()...)
	m, _ = press(m, "n<enter>")
	if m.prompt == nil || !strings.Contains(statusText(m), "Nothing was sent: no key name given; mend it, or esc to cancel.") {
		t.Fatalf("status %q", statusText(m))
	}
	m, _ = press(m, "r")
	if m.prompt == nil || m.prompt.problem != "" || m.prompt.input.Value() != "r" {
		t.Fatalf("typing should go to the prompt and clear the problem: %+v", statusText(m))
	}
}

func TestIncrementAKeyByName(t *testing.T) {
	w := newFakeWriter()
	m := newModel(t, w, 120, 40, fixture()...)
	m, cmd := press(m, "nratelimit:new<enter><enter>")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"INCR ratelimit:new 1 1m0s"}) {
		t.Fatalf("calls %v", got)
	}
	if c, ok := m.store.Get("ratelimit:new"); !ok || c.Value.Int != 1 || !c.HasTTL() {
		t.Fatalf("the new key is not shown: %+v", c)
	}
}

// A key created by name outside the feed's patterns is not added to the
// table: nothing would read it again, and its row would stay after Redis
// dropped the key. The status says where it went.
func TestIncrementAKeyOutsideThePatterns(t *testing.T) {
	w := newFakeWriter()
	m := newModel(t, w, 120, 40, fixture()...)
	m.patterns = []string{"ratelimit:*", "views:*"}
	m, cmd := press(m, "nratelimit:new<enter><enter>")
	m = run(t, m, cmd)
	if s := statusText(m); strings.Contains(s, "outside") {
		t.Errorf("a key the patterns match: %q", s)
	}
	m, cmd = press(m, "nother:x<enter><enter>") // no rule, no TTL: a window is asked for
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "other:x is new, or has no TTL: window to give it") {
		t.Errorf("the prompt for a key by name says %q", s)
	}
	m, cmd = press(m, "45s<enter>")
	m = run(t, m, cmd)
	if want := "INCRBY other:x 1 -> 1, TTL 45s (not in the table: it is outside the watched patterns 'ratelimit:*' and 'views:*')"; statusText(m) != want {
		t.Errorf("status %q, want %q", statusText(m), want)
	}
	if _, ok := m.store.Get("other:x"); ok {
		t.Error("a key outside the patterns was added to the table")
	}
}

func TestAskForAWindowWhenNoRuleGivesOne(t *testing.T) {
	w := newFakeWriter().seed(str("quota:night", "4", model.PTTLNoExpiry))
	m := newModel(t, w, 120, 40, str("quota:night", "4", model.PTTLNoExpiry))

	m, _ = press(m, "e")
	if m.prompt == nil || !strings.Contains(statusText(m), "window for quota:night") {
		t.Fatalf("no window prompt: %q", statusText(m))
	}
	m, _ = press(m, "1.5<enter>")
	if len(w.Calls()) > 0 {
		t.Fatal("a bad window sent something")
	}
	// The prompt stays, with the answer to mend and why it was refused:
	// what is typed next goes there, not to the dashboard's keys.
	if s := statusText(m); m.prompt == nil || m.prompt.input.Value() != "1.5" || !strings.Contains(s, `"1.5" is not a window`) || !strings.Contains(s, "window for quota:night") {
		t.Fatalf("status line %q", s)
	}

	m, cmd := press(m, "<backspace><backspace><backspace>90s<enter>")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"EXPIRE quota:night 1m30s"}) {
		t.Fatalf("calls %v", got)
	}
	if s := statusText(m); s != "PEXPIRE quota:night 90000 NX (if still a counter without a TTL) -> set, TTL 1m30s" {
		t.Fatalf("status line %q", s)
	}
	// The TTL lost again (a PERSIST, say): the window given for
	// quota:night is not asked for again.
	delete(w.ttls, "quota:night")
	persisted := str("quota:night", "4", model.PTTLNoExpiry)
	persisted.At = testNow() // read after the write
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{persisted}}}})
	m, cmd = press(m, "e")
	m = run(t, m, cmd)
	if s := statusText(m); m.prompt != nil || s != "PEXPIRE quota:night 90000 NX (if still a counter without a TTL) -> set, TTL 1m30s" {
		t.Fatalf("prompt %v, status line %q", m.prompt != nil, s)
	}
}

// e on a counter whose TTL is still running sends nothing and asks for
// nothing: EXPIRE NX would leave that TTL as it is.
func TestExpireOnACounterWithATTLAsksNothing(t *testing.T) {
	w := newFakeWriter().seed(str("quota:day", "4", 90_000))
	m := newModel(t, w, 120, 40, str("quota:day", "4", 90_000))
	m, cmd := press(m, "e")
	if cmd != nil || m.prompt != nil || len(w.Calls()) > 0 {
		t.Fatalf("e on a counter with a TTL asked for a window or sent something: prompt %v, calls %v", m.prompt != nil, w.Calls())
	}
	if s := statusText(m); s != "Nothing was sent: quota:day has a TTL already (1m28s left), and e gives one only to a counter without one." {
		t.Errorf("status line %q", s)
	}
}

func TestRepairAllAsksFirstAndCounts(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)

	m, cmd := press(m, "E")
	if cmd != nil || m.confirm == nil || len(w.Calls()) > 0 {
		t.Fatal("E must ask before sending anything")
	}
	screen := plain(m)
	for _, want := range []string{"Set an expiry on 2 counters that have none?", "2 keys, window 1m00s:", "PEXPIRE KEY 60000 NX (if still a counter without a TTL)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("dialog does not say %q:\n%s", want, screen)
		}
	}

	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	got := w.Calls()
	slices.Sort(got)
	if !slices.Equal(got, []string{"EXPIRE ratelimit:legacy 1m0s", "EXPIRE ratelimit:orphan 1m0s"}) {
		t.Fatalf("calls %v", got)
	}
	if s := statusText(m); s != "repaired 2 of 2; 0 failed" {
		t.Fatalf("status line %q", s)
	}
	if n := m.store.Counts().ByStatus; n[model.StatusStuck]+n[model.StatusNoExpiry] != 0 {
		t.Fatalf("repaired keys still lack a TTL: %v", n)
	}
}

func TestRepairAllOnlyTouchesKeysInView(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m, _ = press(m, "/legacy<enter>E")
	if !strings.Contains(plain(m), "Set an expiry on 1 counter that have none?") {
		t.Fatalf("dialog should count the filtered keys only:\n%s", plain(m))
	}
	m, _ = press(m, "n")
	if m.confirm != nil || len(w.Calls()) > 0 || statusText(m) != "Cancelled: nothing was sent." {
		t.Fatalf("n should cancel: %q", statusText(m))
	}
}

func TestRepairAllAsksForMissingWindows(t *testing.T) {
	obs := []model.Observation{str("quota:night", "4", model.PTTLNoExpiry), str("ratelimit:orphan", "3", model.PTTLNoExpiry)}
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 40, obs...)
	m, _ = press(m, "E")
	if !strings.Contains(statusText(m), "window for the 1 key whose rule gives none") {
		t.Fatalf("no window prompt: %q", statusText(m))
	}
	m, _ = press(m, "10s<enter>")
	screen := plain(m)
	for _, want := range []string{"1 key, window 10s:", "PEXPIRE KEY 10000 NX (if still a counter without a TTL)", "1 key, window 1m00s:", "PEXPIRE KEY 60000 NX (if still a counter without a TTL)"} {
		if !strings.Contains(screen, want) {
			t.Fatalf("dialog does not say %q:\n%s", want, screen)
		}
	}
	if len(w.Calls()) > 0 {
		t.Fatal("sent before confirmation")
	}
}

// A counter deleted or expired between the read and the repair is not a
// failure: it is counted apart, and its row goes.
func TestRepairOfAKeyGoneMeanwhile(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	delete(w.values, "ratelimit:orphan")

	m, cmd := press(m, "Ey")
	m = run(t, m, cmd)
	if s := statusText(m); s != "repaired 1 of 2; 1 no longer existed, 0 failed" || m.status.kind == statusFailed {
		t.Fatalf("status line %q (kind %v)", s, m.status.kind)
	}
	if _, ok := m.store.Get("ratelimit:orphan"); ok {
		t.Errorf("the row of a key found gone is still shown:\n%s", plain(m))
	}

	w = newFakeWriter().seed(fixture()...)
	m = newModel(t, w, 120, 40, fixture()...)
	delete(w.values, "ratelimit:orphan")
	m = selectKey(t, m, "ratelimit:orphan")
	m, cmd = press(m, "e")
	m = run(t, m, cmd)
	if s := statusText(m); s != "PEXPIRE ratelimit:orphan 60000 NX (if still a counter without a TTL) -> left alone: the key no longer exists" || m.status.kind == statusFailed {
		t.Fatalf("status line %q (kind %v)", s, m.status.kind)
	}
	if _, ok := m.store.Get("ratelimit:orphan"); ok {
		t.Errorf("the row of a key found gone is still shown:\n%s", plain(m))
	}
}

// e gives expiries to counters: a hash or text would vanish one day,
// unasked, and a counter whose rule says it lives forever needs none.
func TestExpireRefusesWhatIsNotAnExpiringCounter(t *testing.T) {
	for key, want := range map[string]string{
		"session:abc":    "Nothing was sent: session:abc holds a hash, not a counter, and e gives an expiry to counters only.",
		"cache:greeting": "Nothing was sent: cache:greeting holds text, not a counter, and e gives an expiry to counters only.",
		"views:home":     "Nothing was sent: the rule 'views:*' says views:home lives forever (expect_ttl = false), so it needs no expiry.",
	} {
		t.Run(key, func(t *testing.T) {
			w := newFakeWriter().seed(fixture()...)
			m := newModel(t, w, 120, 40, fixture()...)
			m = selectKey(t, m, key)
			m, cmd := press(m, "e")
			if cmd != nil || m.prompt != nil || len(w.Calls()) > 0 {
				t.Errorf("%s: e sent something or asked for a window", key)
			}
			if s := statusText(m); s != want {
				t.Errorf("%s: status %q, want %q", key, s, want)
			}
		})
	}
}

func TestRepairAllReportsFailures(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	w.err = errReplica
	m := newModel(t, w, 120, 40, fixture()...)
	m, cmd := press(m, "Ey")
	m = run(t, m, cmd)
	s := statusText(m)
	if !strings.HasPrefix(s, "repaired 0 of 2; 2 failed (last error: ratelimit:") || !strings.Contains(s, "READONLY") {
		t.Fatalf("status line %q", s)
	}
	if m.status.kind != statusFailed {
		t.Fatal("a repair with failures should be shown as an error")
	}
}

func TestDeleteAsksAndNamesTheKey(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:7")
	at := m.cursor

	m, cmd := press(m, "d")
	if cmd != nil || len(w.Calls()) > 0 {
		t.Fatal("d must ask before deleting")
	}
	if !strings.Contains(plain(m), "Delete ratelimit:api:7?") {
		t.Fatalf("dialog does not name the key:\n%s", plain(m))
	}
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"DEL ratelimit:api:7"}) {
		t.Fatalf("calls %v", got)
	}
	if _, ok := m.store.Get("ratelimit:api:7"); ok {
		t.Fatal("deleted key still shown")
	}
	if statusText(m) != "DEL ratelimit:api:7 -> deleted" || m.cursor != at {
		t.Fatalf("status %q, cursor %d (want %d)", statusText(m), m.cursor, at)
	}
}

// A key that expired between the question and the answer was not deleted
// by the user: the status line says it was gone, and the row goes.
func TestDeleteOfAKeyGoneAlreadySaysSo(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:7")
	m, _ = press(m, "d")
	delete(w.values, "ratelimit:api:7") // it expires while the dialog is up
	m, cmd := press(m, "y")
	m = run(t, m, cmd)
	if s := statusText(m); s != "DEL ratelimit:api:7 -> it was gone already (expired, or deleted by someone else)" {
		t.Fatalf("status line %q", s)
	}
	if _, ok := m.store.Get("ratelimit:api:7"); ok {
		t.Fatal("the key is still shown")
	}
}

// A write that failed because Redis was down is no longer shown as an
// error once the feed says Redis answers again (the header says so too);
// one Redis refused stays as it was.
func TestWriteFailedInAnOutageIsSettledWhenRedisIsBack(t *testing.T) {
	down := batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedReconnecting, Addr: "127.0.0.1:7000", LastError: "Redis at 127.0.0.1:7000 refused the connection.",
	}}}}
	up := batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true,
	}}}}
	refused := "INCRBY ratelimit:api:42 1 failed: could not connect to 127.0.0.1:7000: connection refused"

	w := newFakeWriter().seed(fixture()...)
	w.err = errors.New("could not connect to 127.0.0.1:7000: connection refused")
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "+")
	m = run(t, m, cmd) // before the feed notices
	if statusText(m) != refused || m.status.kind != statusFailed {
		t.Fatalf("before the feed notices: status %q", statusText(m))
	}
	// Once the header says Redis does not answer, the status agrees with
	// it rather than asking whether Redis runs at an address it read from.
	m, _ = send(m, down)
	outage := "INCRBY ratelimit:api:42 1 failed: Redis does not answer, as the header says; press the key again once it is back."
	if statusText(m) != outage || m.status.kind != statusFailed {
		t.Fatalf("during the outage: status %q", statusText(m))
	}
	m, _ = send(m, up)
	if s := statusText(m); s != outage+" Redis answers again now." || m.status.kind != statusInfo {
		t.Fatalf("once Redis is back: status %q (kind %d)", s, m.status.kind)
	}

	// A write that fails while the header already says so says the same.
	m, _ = send(m, down)
	m, cmd = press(m, "+")
	m = run(t, m, cmd)
	if statusText(m) != outage {
		t.Fatalf("a write during the outage: status %q", statusText(m))
	}
	if !strings.Contains(plain(m), "refused the connection") {
		t.Fatalf("the header does not show the feed's error:\n%s", plain(m))
	}

	// A refusal (READONLY, as the Writer's errors say) was Redis's answer,
	// outage or not, and stays as it was.
	w = newFakeWriter().seed(fixture()...)
	w.err = refusal{errReplica}
	m = newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd = press(m, "+")
	m = run(t, m, cmd)
	before := m.status
	m, _ = send(m, down, up)
	if m.status != before {
		t.Fatalf("a refusal became %q", statusText(m))
	}
}

// refusal is an error that says the write was refused, as redisclient's
// errors do (Refused).
type refusal struct{ error }

func (refusal) Refused() bool { return true }

func TestWriteErrorsAreOneSentenceAndChangeNothing(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	w.err = errReplica
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if s := statusText(m); s != "INCRBY ratelimit:api:42 1 failed: READONLY You can't write against a read only replica." {
		t.Fatalf("status line %q", s)
	}
	if m.status.kind != statusFailed {
		t.Fatal("an error should be shown in the error style")
	}
	if c, _ := m.store.Get("ratelimit:api:42"); c.Value.Int != 17 {
		t.Fatal("a failed write changed the value shown")
	}
}

func TestDetailExplainsAndActsOnItsKey(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:legacy")
	m, _ = press(m, "<enter>")
	screen := strings.Join(strings.Fields(plain(m)), " ")
	for _, want := range []string{
		"status stuck",
		"No TTL and at or over its limit of 100: every request it counts is refused, and it will never reset. Press e to send PEXPIRE ratelimit:legacy 60000 NX (if still a counter without a TTL).",
		`rule "ratelimit:*"`, "window 1m00s", "TTL no expiry",
	} {
		if !strings.Contains(screen, want) {
			t.Fatalf("detail does not say %q:\n%s", want, plain(m))
		}
	}

	// A batch that would move the table's selection does not change the
	// key the detail shows.
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Removed: []string{"cache:greeting"}}}})
	m, cmd := press(m, "e")
	m = run(t, m, cmd)
	if got := w.Calls(); !slices.Equal(got, []string{"EXPIRE ratelimit:legacy 1m0s"}) {
		t.Fatalf("calls %v", got)
	}
	if !strings.Contains(plain(m), "TTL       1m00s") {
		t.Fatalf("detail does not show the new TTL:\n%s", plain(m))
	}
	m, _ = press(m, "<esc>")
	if m.screen != screenTable {
		t.Fatal("esc should go back to the table")
	}
}

func TestHelpToggles(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "?")
	if !strings.Contains(plain(m), "repair all in view") {
		t.Fatalf("full help not shown:\n%s", plain(m))
	}
	m, _ = press(m, "?")
	if strings.Contains(plain(m), "repair all in view") {
		t.Fatal("? should close the help")
	}
}

func TestListenCoalescesABurst(t *testing.T) {
	feed := make(chan model.Batch, 3)
	for i := range 3 {
		feed <- model.Batch{Observed: []model.Observation{str(fmt.Sprint("k", i), "1", 1000)}}
	}
	msg := listen(feed)().(batchesMsg)
	if len(msg.batches) != 3 || msg.closed {
		t.Fatalf("got %d batches (closed %v), want the 3 waiting", len(msg.batches), msg.closed)
	}

	close(feed)
	m := newModel(t, nil, 120, 40)
	m, cmd := send(m, listen(feed)())
	if cmd != nil {
		t.Fatal("a closed feed should end listening")
	}
	if !strings.Contains(plain(m), "feed stopped") {
		t.Fatalf("header does not say the feed stopped:\n%s", plain(m))
	}
}

func TestEveryLineFitsTheScreen(t *testing.T) {
	long := str("ratelimit:"+strings.Repeat("very-long-segment:", 12)+"end", "12345678901234567", 50_000)
	for _, size := range [][2]int{{120, 40}, {80, 24}, {60, 16}, {40, 8}} {
		t.Run(fmt.Sprintf("%dx%d", size[0], size[1]), func(t *testing.T) {
			for _, keys := range []string{"", "?", "jj<enter>", "d"} {
				m := newModel(t, nil, size[0], size[1], append(fixture(), long)...)
				m.feedState.LastError = "Redis at 127.0.0.1:7000 refused the connection; retrying every 2s with a rather long explanation."
				m.feedState.Note = "keyspace events are off (notify-keyspace-events is empty), so countertop polls"
				m.feedState.Scanning = true
				m, _ = press(m, keys)
				lines := strings.Split(m.View().Content, "\n")
				if len(lines) > size[1] {
					t.Errorf("%dx%d %q: %d lines", size[0], size[1], keys, len(lines))
				}
				for _, l := range lines {
					if w := lipgloss.Width(l); w > size[0] {
						t.Errorf("%dx%d %q: line is %d wide: %q", size[0], size[1], keys, w, l)
					}
				}
			}
		})
	}
}

func TestNarrowScreensDropRateThenGauge(t *testing.T) {
	for _, tc := range []struct {
		width       int
		byRate      bool
		rate, gauge bool
	}{
		{120, false, true, true}, {80, false, false, true}, {60, false, false, false},
		// Sorted by rate, the gauge goes first: the rows' order stays
		// explained.
		{120, true, true, true}, {80, true, true, false},
	} {
		t.Run(fmt.Sprintf("%d columns, by rate %v", tc.width, tc.byRate), func(t *testing.T) {
			m := newModel(t, nil, tc.width, 24, fixture()...)
			if tc.byRate {
				m, _ = press(m, "ssss") // key, value, TTL, % of limit, rate
			}
			screen := plain(m)
			if tc.byRate && !strings.Contains(screen, "sort: rate") {
				t.Fatalf("not sorted by rate:\n%s", screen)
			}
			if strings.Contains(screen, "RATE") != tc.rate || strings.Contains(screen, "█") != tc.gauge {
				t.Errorf("at %d columns, sorted by rate %v: rate %v, gauge %v; want %v, %v", tc.width, tc.byRate,
					strings.Contains(screen, "RATE"), strings.Contains(screen, "█"), tc.rate, tc.gauge)
			}
		})
	}
}

func TestPlusOnAFloatCounterSendsINCRBYFLOAT(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "quota:batch") // holds 2.5: INCRBY would refuse it
	m, cmd := press(m, "+")            // it has a TTL: no window needed
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "INCRBYFLOAT quota:batch 1 -> 3.5") {
		t.Fatalf("status line %q", s)
	}
	m, cmd = press(m, "-")
	m = run(t, m, cmd)
	if s := statusText(m); !strings.HasPrefix(s, "INCRBYFLOAT quota:batch -1 -> 2.5") {
		t.Fatalf("status line %q", s)
	}
}

// The real Writer's errors already name the command; the status line must
// not say it twice and push the advice off the screen.
func TestWriteErrorNamingItsCommandIsShownOnce(t *testing.T) {
	w := newFakeWriter().seed(fixture()...)
	w.err = errors.New("INCRBY ratelimit:api:42 1 failed: ERR value is not an integer or out of range (the key keeps its value)")
	m := newModel(t, w, 120, 40, fixture()...)
	m = selectKey(t, m, "ratelimit:api:42")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if s := statusText(m); s != w.err.Error() {
		t.Fatalf("status line %q, want the Writer's sentence as is", s)
	}
}

// On the smallest screen a dialog keeps its question and its answers: the
// details give way first.
func TestADialogKeepsItsAnswersOnASmallScreen(t *testing.T) {
	m := newModel(t, newFakeWriter().seed(fixture()...), 40, minHeight, fixture()...)
	m = selectKey(t, m, "ratelimit:legacy")
	m, _ = press(m, "d")
	screen := plain(m)
	for _, want := range []string{"Delete ratelimit:legacy?", "y yes", "n/esc no"} {
		if !strings.Contains(screen, want) {
			t.Errorf("at 40x%d the dialog does not show %q:\n%s", minHeight, want, screen)
		}
	}
}

// With keyspace events (or tracking) a key is read when it changes and not
// otherwise: a counter that stopped must not go on showing its last rate. While polling,
// a rate is as of the last reading, which comes every interval.
func TestARateFadesWhileEventsAreQuiet(t *testing.T) {
	for _, tc := range []struct {
		name      string
		mode      model.WatchMode
		phase     model.FeedPhase
		lastError string
		fades     bool // to 0/s half a minute after the last increment
	}{
		{"events", model.WatchEvents, model.FeedWatching, "", true},
		{"tracking", model.WatchTracking, model.FeedWatching, "", true},
		{"polling", model.WatchPoll, model.FeedWatching, "", false},
		{"events down", model.WatchEvents, model.FeedReconnecting, "127.0.0.1:7000 stopped answering", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &clock{t0}
			m := newModel(t, nil, 120, 20)
			m.now = c.now
			m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
				Mode: tc.mode, Phase: tc.phase, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: tc.lastError == "", LastError: tc.lastError,
			}}}})
			for sec := range 6 { // 10 a second for 5 s, then nothing
				at := t0.Add(time.Duration(sec) * time.Second)
				c.t = at
				o := str("ratelimit:busy", fmt.Sprint(10*sec), 60_000)
				o.At = at
				m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{o}}}}, tickMsg{gen: m.tickGen})
			}
			counting := rateCell(t, m, "ratelimit:busy")
			if !strings.HasPrefix(counting, "+10") && !strings.HasPrefix(counting, "+9.9") {
				t.Fatalf("RATE while it counts: %q, want about +10/s", counting)
			}
			for range 30 {
				c.t = c.t.Add(time.Second)
				m, _ = send(m, tickMsg{gen: m.tickGen})
			}
			want := counting
			if tc.fades {
				want = "0/s"
			}
			if rate := rateCell(t, m, "ratelimit:busy"); rate != want {
				t.Errorf("RATE 30 s after the last increment: %q, want %q", rate, want)
			}
		})
	}
}

// rateCell is the RATE cell of key's row on m's screen.
func rateCell(t *testing.T, m *Model, key string) string {
	t.Helper()
	for line := range strings.Lines(plain(m)) {
		if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(line), "▸")); len(f) > 0 && f[0] == key {
			for _, cell := range f {
				if strings.HasSuffix(cell, "/s") {
					return cell
				}
			}
		}
	}
	t.Fatalf("no row of %s with a RATE on screen:\n%s", key, plain(m))
	return ""
}

// In the / prompt ↑ and ↓ walk the filters kept this session, newest
// first, the table following each; past the newest comes back what was
// being typed. j and k are still typed.
func TestFilterHistory(t *testing.T) {
	m := newModel(t, nil, 120, 40, fixture()...)
	m, _ = press(m, "/api<enter><esc>/is:problem<enter><esc>/views<enter><esc>/api<enter><esc>")
	m, _ = press(m, "/jk")
	if got := m.prompt.input.Value(); got != "jk" {
		t.Fatalf("j and k typed in the prompt give %q", got)
	}
	for _, want := range []string{"api", "views", "is:problem", "is:problem"} {
		m, _ = press(m, "<up>")
		if got := m.prompt.input.Value(); got != want {
			t.Errorf("↑ shows %q, want %q", got, want)
		}
		if m.store.Filter() != want {
			t.Errorf("the table is filtered by %q while %q is shown", m.store.Filter(), want)
		}
	}
	if line := strings.Split(plain(m), "\n")[m.height-1]; !strings.Contains(line, "↑/↓ history") {
		t.Errorf("the prompt's help line does not offer the history: %q", line)
	}
	for _, want := range []string{"views", "api", "jk", "jk"} {
		m, _ = press(m, "<down>")
		if got := m.prompt.input.Value(); got != want {
			t.Errorf("↓ shows %q, want %q", got, want)
		}
	}
	m, _ = press(m, "<up><up><enter>")
	if m.store.Filter() != "views" || m.prompt != nil {
		t.Errorf("enter on a filter from the history keeps %q", m.store.Filter())
	}

	// Other prompts have no history: ↑ does nothing there.
	m, _ = press(m, "<esc>")
	m = selectKey(t, m, "ratelimit:api:42")
	m.writer = newFakeWriter()
	m, _ = press(m, "i5<up>")
	if m.prompt == nil || m.prompt.input.Value() != "5" {
		t.Errorf("↑ in the amount prompt changed it")
	}
}
