package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
	"github.com/countertop/countertop/redisclient"
)

// fieldModel is a dashboard on a real Redis whose rule reads the field
// hits of rl:field:* hashes as the counter, with the keys read as the feed
// reads them.
func fieldModel(t *testing.T, keys ...string) (*Model, func(args ...any) any) {
	t.Helper()
	s, c := realWriter(t)
	do := func(args ...any) any { return s.Do(t, args...) }
	s.Do(t, "HSET", "rl:field:a", "hits", "5", "note", "x")
	s.Do(t, "HSET", "rl:largest:b", "login", "3", "api", "7") // no rule field: the largest is read
	rules := &model.Rules{
		List: []model.Rule{
			{Pattern: "rl:field:*", Limit: 100, Window: time.Minute, ExpectTTL: true, Field: "hits"},
			{Pattern: "rl:*", Limit: 100, Window: time.Minute, ExpectTTL: true},
		},
		Fallback: model.Rule{ExpectTTL: true},
	}
	return fetchedModel(t, c, rules, 120, 40, keys...), do
}

// fetchedModel is a dashboard of width x height writing through c, its
// Store under rules holding keys as the feed reads them.
func fetchedModel(t *testing.T, c *redisclient.Client, rules *model.Rules, width, height int, keys ...string) *Model {
	t.Helper()
	obs, err := c.Fetch(context.Background(), keys)
	if err != nil {
		t.Fatal(err)
	}
	store := model.NewStore(rules)
	store.Apply(model.Batch{Observed: obs})
	m, _ := send(New(Options{Store: store, Writer: c, Now: time.Now}), tea.WindowSizeMsg{Width: width, Height: height})
	return m
}

// +, - and i on a hash field counter add to that field with HINCRBY, as its
// limiter does, and give the hash its window when it has none, in one
// step; the row shows the new count at once.
func TestIncrementsAddToAHashFieldCounter(t *testing.T) {
	m, do := fieldModel(t, "rl:field:a", "rl:largest:b")
	if c, _ := m.store.Get("rl:field:a"); c.Layout != model.LayoutCounter || c.Field != "hits" {
		t.Fatalf("rl:field:a read as %s field %q, want a counter in field hits", c.Layout, c.Field)
	}
	m = selectKey(t, m, "rl:field:a")
	m, cmd := press(m, "+")
	if st := statusText(m); st != "HINCRBY rl:field:a hits 1 …" {
		t.Errorf("while sent: status %q", st)
	}
	m = run(t, m, cmd)
	if got := do("HGET", "rl:field:a", "hits"); got != "6" {
		t.Fatalf("+: Redis holds hits = %v, want 6 (status %q)", got, statusText(m))
	}
	if ttl := do("PTTL", "rl:field:a").(int64); ttl <= 50_000 || ttl > 60_000 {
		t.Errorf("the hash's TTL is %dms, want the rule's window of 1m", ttl)
	}
	if st := statusText(m); !strings.HasPrefix(st, "HINCRBY rl:field:a hits 1 -> 6; it had no TTL, now ") {
		t.Errorf("status %q", st)
	}
	if c, _ := m.store.Get("rl:field:a"); c.Value.Int != 6 || c.PTTL < 0 {
		t.Errorf("the row shows %d with PTTL %d, want 6 with a TTL", c.Value.Int, c.PTTL)
	}

	m, cmd = press(m, "i10<enter>")
	m = run(t, m, cmd)
	m, cmd = press(m, "-")
	m = run(t, m, cmd)
	if got := do("HGET", "rl:field:a", "hits"); got != "15" {
		t.Fatalf("i10 then -: Redis holds hits = %v, want 15 (status %q)", got, statusText(m))
	}
	if got := do("HGET", "rl:field:a", "note"); got != "x" {
		t.Errorf("another field changed: note = %v", got)
	}

	// A field found by detection (the largest) counts the same way.
	m = selectKey(t, m, "rl:largest:b")
	m, cmd = press(m, "+")
	m = run(t, m, cmd)
	if got := do("HGET", "rl:largest:b", "api"); got != "8" {
		t.Fatalf("+ on the detected field: api = %v, want 8 (status %q)", got, statusText(m))
	}
}

// A hash written again as a string since the dashboard read it is left
// alone: the check is in the same atomic step as the write, and the status
// says what the key is now.
func TestAHashFieldIncrementLeavesAKeyThatIsNoHashAlone(t *testing.T) {
	m, do := fieldModel(t, "rl:field:a")
	do("DEL", "rl:field:a")
	do("SET", "rl:field:a", "41")
	m = selectKey(t, m, "rl:field:a")
	m, cmd := press(m, "+")
	m = run(t, m, cmd)
	if got := do("GET", "rl:field:a"); got != "41" || do("PTTL", "rl:field:a") != int64(-1) {
		t.Fatalf("the string was changed: %v", got)
	}
	want := "HINCRBY rl:field:a hits 1 was not sent: rl:field:a holds a string, not a hash whose field hits counts"
	if st := statusText(m); !strings.Contains(st, want) {
		t.Errorf("status %q, want it to say %q", st, want)
	}
}

// A decimal amount on an integer field asks first, naming the hash command.
func TestADecimalOnAHashFieldAsksFirst(t *testing.T) {
	m, do := fieldModel(t, "rl:field:a")
	m = selectKey(t, m, "rl:field:a")
	m, cmd := press(m, "i0.5<enter>")
	m = run(t, m, cmd)
	question := "HINCRBYFLOAT turns field hits of rl:field:a into a decimal; the application's HINCRBY will then fail with 'value is not an integer'. Send it?"
	if m.confirm == nil || m.confirm.question != question {
		t.Fatalf("dialog %+v, status %q; want %q", m.confirm, statusText(m), question)
	}
	if got := do("HGET", "rl:field:a", "hits"); got != "5" {
		t.Fatalf("Redis holds %v before the answer", got)
	}
	m, cmd = press(m, "y")
	run(t, m, cmd)
	if got := do("HGET", "rl:field:a", "hits"); got != "5.5" {
		t.Fatalf("y: Redis holds %v, want 5.5", got)
	}
}
