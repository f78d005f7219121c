package ui

import (
	"context"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// realWriter is a Writer on a redis-server of the test's own.
func realWriter(t *testing.T) (*redistest.Server, *redisclient.Client) {
	t.Helper()
	s := redistest.Start(t)
	c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: s.URL()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return s, c
}

// dialogText is the open dialog as it is read: its text without the
// frame, each run of spaces and line breaks made one space.
func dialogText(m *Model) string {
	if m.confirm == nil {
		return ""
	}
	box := strings.NewReplacer("│", " ", "╭", " ", "╮", " ", "╰", " ", "╯", " ", "─", " ").Replace(ansi.Strip(m.confirmView()))
	return strings.Join(strings.Fields(box), " ")
}

// A decimal amount would turn an integer counter into a decimal one, on
// which the application's own INCR fails for ever after: the dashboard asks
// first, naming the consequence; n sends nothing, and y sends it.
func TestADecimalIncrementAsksBeforeAnIntegerTurnsDecimal(t *testing.T) {
	s, c := realWriter(t)
	s.Do(t, "SET", "ratelimit:x", "151", "EX", "600")
	m := newModel(t, c, 120, 40, append(fixture(), str("ratelimit:x", "151", 600_000))...)
	m = selectKey(t, m, "ratelimit:x")

	m, cmd := press(m, "i2.5<enter>")
	m = run(t, m, cmd)
	question := "INCRBYFLOAT turns ratelimit:x into a decimal; the application's INCR will then fail with 'value is not an integer'. Send it?"
	if m.confirm == nil || m.confirm.question != question {
		t.Fatalf("no question before 151 turns decimal: dialog %+v, status %q", m.confirm, statusText(m))
	}
	for _, want := range []string{question, "INCRBYFLOAT ratelimit:x 2.5", "ratelimit:x holds 151, an integer."} {
		if !strings.Contains(dialogText(m), want) {
			t.Errorf("the dialog does not say %q:\n%s", want, plain(m))
		}
	}
	if got := s.Do(t, "GET", "ratelimit:x"); got != "151" {
		t.Fatalf("Redis holds %q before the answer", got)
	}

	m, _ = press(m, "n")
	if m.confirm != nil || statusText(m) != "Cancelled: nothing was sent." || s.Do(t, "GET", "ratelimit:x") != "151" {
		t.Fatalf("n: dialog %v, status %q, Redis %q", m.confirm != nil, statusText(m), s.Do(t, "GET", "ratelimit:x"))
	}

	m, cmd = press(m, "i2.5<enter>")
	m = run(t, m, cmd)
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if got := s.Do(t, "GET", "ratelimit:x"); got != "153.5" {
		t.Fatalf("y: Redis holds %q, want 153.5", got)
	}
	if st := statusText(m); !strings.HasPrefix(st, "INCRBYFLOAT ratelimit:x 2.5 -> 153.5, TTL ") {
		t.Errorf("status %q", st)
	}
	if r, _ := m.store.Get("ratelimit:x"); r.Raw != "153.5" {
		t.Errorf("the row shows %q", r.Raw)
	}

	// A decimal counter is one already: no question.
	m, cmd = press(m, "i0.5<enter>")
	if m = run(t, m, cmd); m.confirm != nil || s.Do(t, "GET", "ratelimit:x") != "154" {
		t.Errorf("0.5 on 153.5: dialog %v, Redis %q", m.confirm != nil, s.Do(t, "GET", "ratelimit:x"))
	}
}

// A new key created with a decimal is a decimal counter the application's
// INCR fails on, as much as an integer turned into one: the dashboard asks
// as well, and the consent holds through the window question that follows
// for a key no rule gives one.
func TestADecimalIncrementAsksBeforeANewKeyIsDecimal(t *testing.T) {
	s, c := realWriter(t)
	m := newModel(t, c, 120, 40, fixture()...)

	m, cmd := press(m, "nratelimit:new<enter>2.5<enter>")
	m = run(t, m, cmd)
	if !strings.Contains(dialogText(m), "ratelimit:new does not exist yet: it would be created holding 2.5.") {
		t.Fatalf("no question before a new key is made decimal:\n%s", plain(m))
	}
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if st := statusText(m); st != "INCRBYFLOAT ratelimit:new 2.5 -> 2.5, TTL 1m00s" {
		t.Errorf("status %q", st)
	}

	m, cmd = press(m, "nquota:new<enter>2.5<enter>") // quota:* has no window
	m = run(t, m, cmd)
	m, cmd = press(m, "y")
	m = run(t, m, cmd)
	if m.prompt == nil || !strings.Contains(statusText(m), "window to give it") {
		t.Fatalf("no window question after the yes: %q", statusText(m))
	}
	m, cmd = press(m, "45s<enter>")
	m = run(t, m, cmd)
	if got, ttl := s.Do(t, "GET", "quota:new"), s.Do(t, "PTTL", "quota:new").(int64); got != "2.5" || ttl <= 0 || ttl > 45_000 {
		t.Errorf("quota:new = %q with PTTL %d, want 2.5 with the 45s given; status %q", got, ttl, statusText(m))
	}
}

// The answer that a yes is needed comes back from Redis later: it does
// not take over a prompt the user opened meanwhile.
func TestADecimalQuestionDoesNotTakeOverWhatIsOpen(t *testing.T) {
	s, c := realWriter(t)
	s.Do(t, "SET", "ratelimit:x", "151", "EX", "600")
	m := newModel(t, c, 120, 40, append(fixture(), str("ratelimit:x", "151", 600_000))...)
	m = selectKey(t, m, "ratelimit:x")
	m, cmd := press(m, "i2.5<enter>")
	m, _ = press(m, "/rate")
	m = run(t, m, cmd)
	want := "Nothing was sent: INCRBYFLOAT ratelimit:x 2.5 would turn ratelimit:x into a decimal, which needs your yes: press the key again to be asked."
	if m.confirm != nil || m.prompt == nil || m.prompt.input.Value() != "rate" || m.status.text != want {
		t.Fatalf("dialog %v, prompt %+v, status %q; want %q", m.confirm != nil, m.prompt, m.status.text, want)
	}
	if got := s.Do(t, "GET", "ratelimit:x"); got != "151" {
		t.Fatalf("Redis holds %q", got)
	}
}

// The dashboard and countertop incr treat a key alike, by what Redis holds:
// "007" is no integer INCRBY takes, so + sends INCRBYFLOAT, which Redis
// rewrites as 8; a decimal amount asks nothing, as the application's INCR
// fails on "007" already (internal/cli's TestIncrAgreesWithTheDashboard).
func TestAnIncrementOfAPaddedNumberGoesAsINCRBYFLOAT(t *testing.T) {
	s, c := realWriter(t)
	s.Do(t, "SET", "ratelimit:padded", "007", "EX", "600")
	m := newModel(t, c, 120, 40, append(fixture(), str("ratelimit:padded", "007", 600_000))...)
	m = selectKey(t, m, "ratelimit:padded")
	if c, _ := m.store.Get("ratelimit:padded"); c.Value.Kind != model.KindFloat {
		t.Fatalf("007 is kind %v, want KindFloat: INCR refuses it", c.Value.Kind)
	}
	m, cmd := press(m, "+")
	if st := statusText(m); st != "INCRBYFLOAT ratelimit:padded 1 …" {
		t.Errorf("while sent: status %q", st)
	}
	m = run(t, m, cmd)
	if st := statusText(m); !strings.HasPrefix(st, "INCRBYFLOAT ratelimit:padded 1 -> 8, TTL ") || s.Do(t, "GET", "ratelimit:padded") != "8" {
		t.Errorf("status %q, Redis %q", st, s.Do(t, "GET", "ratelimit:padded"))
	}
	s.Do(t, "SET", "ratelimit:padded", "007", "KEEPTTL")
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{str("ratelimit:padded", "007", 600_000)}}}})
	m, cmd = press(m, "i2.5<enter>")
	m = run(t, m, cmd)
	if m.confirm != nil || s.Do(t, "GET", "ratelimit:padded") != "9.5" {
		t.Errorf("2.5 on 007: dialog %v, Redis %q; want 9.5 unasked", m.confirm != nil, s.Do(t, "GET", "ratelimit:padded"))
	}
}

// The amount prompt asks for an integer or a decimal, and takes only
// those: hexadecimal, which Redis would read, and a step too fine for
// Redis to count stay in the prompt to mend, and nothing is sent.
func TestTheAmountPromptRefusesWhatWouldNotBeSentAsTyped(t *testing.T) {
	s, c := realWriter(t)
	s.Do(t, "SET", "ratelimit:x", "151", "EX", "600")
	for in, want := range map[string]string{
		"0x10":     `Nothing was sent: "0x10" is not an amount: give an integer like 5 or -1, or a decimal like 2.5; mend it, or esc to cancel.`,
		"2.5e-400": "Nothing was sent: 2.5e-400 is too small to count: Redis keeps 17 digits after the point, so INCRBYFLOAT would add 0; give at least 0.00000000000000001; mend it, or esc to cancel.",
	} {
		t.Run(in, func(t *testing.T) {
			m := newModel(t, c, 200, 40, append(fixture(), str("ratelimit:x", "151", 600_000))...)
			m = selectKey(t, m, "ratelimit:x")
			m, cmd := press(m, "i"+in+"<enter>")
			if cmd != nil || m.prompt == nil || m.prompt.input.Value() != in || m.prompt.problem != want {
				t.Errorf("%s: prompt %+v", in, m.prompt)
			}
		})
	}
	if got := s.Do(t, "GET", "ratelimit:x"); got != "151" {
		t.Errorf("Redis holds %q", got)
	}
}

// + on a counter stuck without a TTL gives it one in the same atomic step:
// a repair, which the status line says. It says so from what Redis did,
// not from the row, which may be out of date either way.
func TestAnIncrementThatGivesATTLSaysSo(t *testing.T) {
	s, c := realWriter(t)
	s.Do(t, "SET", "ratelimit:api:stuck", "150")
	m := newModel(t, c, 120, 40, append(fixture(), str("ratelimit:api:stuck", "150", model.PTTLNoExpiry))...)
	m = selectKey(t, m, "ratelimit:api:stuck")
	plus := func(m *Model) (*Model, string) {
		t.Helper()
		m, cmd := press(m, "+")
		m = run(t, m, cmd)
		return m, statusText(m)
	}

	m, st := plus(m)
	if want := "INCRBY ratelimit:api:stuck 1 -> 151; it had no TTL, now 1m00s"; st != want {
		t.Errorf("status %q, want %q", st, want)
	}
	if m, st = plus(m); !strings.HasPrefix(st, "INCRBY ratelimit:api:stuck 1 -> 152, TTL ") {
		t.Errorf("with its TTL now: status %q", st)
	}

	// Someone removed the TTL since the row was read: the row says it has
	// one, Redis none.
	s.Do(t, "PERSIST", "ratelimit:api:stuck")
	if m, st = plus(m); st != "INCRBY ratelimit:api:stuck 1 -> 153; it had no TTL, now 1m00s" {
		t.Errorf("the row out of date: status %q", st)
	}
	// Someone gave it one since the row was read: the row says none.
	s.Do(t, "EXPIRE", "ratelimit:api:stuck", "100")
	m, _ = send(m, batchesMsg{batches: []model.Batch{{Observed: []model.Observation{str("ratelimit:api:stuck", "153", model.PTTLNoExpiry)}}}})
	if _, st = plus(m); !strings.HasPrefix(st, "INCRBY ratelimit:api:stuck 1 -> 154, TTL 1m") || strings.Contains(st, "had no TTL") {
		t.Errorf("repaired by someone else: status %q", st)
	}
}
