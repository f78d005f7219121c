package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/countertop/countertop/model"
)

// The detail screen explains a key no rule matched by what applies to it,
// the default, not by a rule it does not have; and a counter with no limit
// is not said to be under one.
func TestDetailSpeaksOfTheDefaultForKeysNoRuleMatched(t *testing.T) {
	obs := append(fixture(), str("other:1", "5", model.PTTLNoExpiry))
	w := newFakeWriter().seed(obs...)
	m := newModel(t, w, 120, 40, obs...)
	m = selectKey(t, m, "other:1")
	m, _ = press(m, "<enter>")
	screen := flat(m)
	if strings.Contains(screen, "its rule") {
		t.Errorf("the detail of a key no rule matched speaks of its rule:\n%s", plain(m))
	}
	want := "No TTL, though counters are expected to have one (no rule matched; the default): it will never reset."
	if !strings.Contains(screen, want) {
		t.Errorf("the detail does not say %q:\n%s", want, plain(m))
	}

	// Repaired (the window is asked for, no rule or --window gives one).
	m, _ = press(m, "e")
	m, cmd := press(m, "30s<enter>")
	m = run(t, m, cmd)
	screen = flat(m)
	if strings.Contains(screen, "under its limit") {
		t.Errorf("a counter with no limit is said to be under its limit:\n%s", plain(m))
	}
	want = "A counter with no limit to reach (no rule matched, and no --limit was given); it resets when it expires in 30s."
	if !strings.Contains(screen, want) {
		t.Errorf("the detail does not say %q:\n%s", want, plain(m))
	}
}

// Under a rule with no limit, the detail says so of the rule.
func TestDetailOfACounterWhoseRuleHasNoLimit(t *testing.T) {
	rules := testRules()
	rules.List = append(rules.List, model.Rule{Pattern: "jobs:*", ExpectTTL: true})
	store := model.NewStore(rules)
	store.Apply(model.Batch{Observed: []model.Observation{str("jobs:1", "3", 10_000)}})
	m := New(Options{Store: store, Now: testNow})
	m, _ = send(m, tea.WindowSizeMsg{Width: 120, Height: 40})
	m, _ = press(m, "<enter>")
	want := "A counter with no limit to reach (its rule sets none); it resets when it expires in 8.5s."
	if !strings.Contains(flat(m), want) {
		t.Errorf("the detail does not say %q:\n%s", want, plain(m))
	}
}

// On a narrow screen the rule and the window go on under their label
// rather than being cut: "none matched (the --limit/--window fallback
// applies)" is read whole.
func TestNarrowDetailWrapsTheRule(t *testing.T) {
	m := newModel(t, nil, 40, 40, str("orphan:key", "3", model.PTTLNoExpiry))
	m = selectKey(t, m, "orphan:key")
	m, _ = press(m, "<enter>")
	if s := flat(m); !strings.Contains(s, "rule none matched (the --limit/--window fallback applies)") {
		t.Errorf("the rule is not whole at 40 columns:\n%s", plain(m))
	}
}

// The detail screen of a past window's key without a TTL says it is a
// leak and why that matters, how the key was read, and the window's
// identity; a GCRA key's says when it frees, not a count.
func TestDetailSaysHowAKeyWasRead(t *testing.T) {
	past := strconv.FormatInt(t0.Unix()/60-5, 10)
	obs := []model.Observation{
		str("ratelimit:win:"+past, "7", model.PTTLNoExpiry),
		str("ratelimit:gcra:1", gcraTAT(t0.Add(12*time.Second)), 12_000),
	}
	m := newModel(t, newFakeWriter().seed(obs...), 120, 40, obs...)
	m = selectKey(t, m, "ratelimit:win:"+past)
	m, _ = press(m, "<enter>")
	screen := flat(m)
	for _, want := range []string{
		"status leak",
		"never evicted",
		"volatile-*",
		"Press e to send",
		"layout window",
		`identity "ratelimit:win", window "` + past + `"`,
		"a past window",
		"read ",
	} {
		if !strings.Contains(screen, want) {
			t.Errorf("the leaked window's detail does not say %q:\n%s", want, plain(m))
		}
	}
	if strings.Contains(screen, "more hits allowed") {
		t.Errorf("a past window's detail offers hits nobody will make:\n%s", plain(m))
	}
	m, _ = press(m, "<esc>")
	m = selectKey(t, m, "ratelimit:gcra:1")
	m, _ = press(m, "<enter>")
	screen = flat(m)
	for _, want := range []string{"layout gcra", "value frees in 1", "not a count"} {
		if !strings.Contains(screen, want) {
			t.Errorf("the GCRA key's detail does not say %q:\n%s", want, plain(m))
		}
	}
}

// The detail screen says what a reading suggests beyond its status: a TTL
// of a day under a rule of 60 s is likely the wrong number or unit, and a
// negative counter without a TTL likely a decrement after it expired.
func TestDetailNotes(t *testing.T) {
	for _, tc := range []struct {
		key, raw string
		pttl     int64
		want     string
	}{
		{"ratelimit:api:day", "4", 86_400_000, "Note: TTL 1d00h is more than twice its rule's window of 1m00s: likely an expiry set with the wrong number or unit."},
		{"ratelimit:api:undo", "-1", model.PTTLNoExpiry, "Note: negative and without a TTL: likely a decrement after the key expired, which DECR starts again from 0 without a TTL."},
		{"ratelimit:api:fine", "4", 60_000, ""},
	} {
		t.Run(tc.key, func(t *testing.T) {
			m := newModel(t, nil, 120, 40, str(tc.key, tc.raw, tc.pttl))
			m, _ = press(m, "<enter>")
			screen := flat(m)
			if tc.want == "" && strings.Contains(screen, "Note:") || !strings.Contains(screen, tc.want) {
				t.Errorf("%s: the detail does not say %q, or notes what is fine:\n%s", tc.key, tc.want, plain(m))
			}
		})
	}
}

// A counter pushed back as it grows is not called extending before it
// has grown so for longer than its window: until then the detail says
// what is seen and when it will be known; after, it is extending, and the
// detail says why.
func TestDetailOfAKeyPushedBackAsItGrows(t *testing.T) {
	store := model.NewStore(testRules()) // ratelimit:* has a window of a minute
	at := t0
	push := func(n int) {
		for range n {
			at = at.Add(time.Second)
			v, _ := store.Get("ratelimit:retry")
			n, _ := v.Value.Number()
			o := str("ratelimit:retry", strconv.Itoa(int(n)+1), 10_000)
			o.At = at
			store.Apply(model.Batch{Observed: []model.Observation{o}})
		}
	}
	push(20) // 20 s of hits from t0+1s, each pushing the TTL back to 10 s
	now := at
	m := New(Options{Store: store, Now: func() time.Time { return now }})
	m, _ = send(m, tea.WindowSizeMsg{Width: 160, Height: 40})
	m, _ = press(m, "<enter>")
	since, known := t0.Add(time.Second).Local().Format("15:04:05"), t0.Add(62*time.Second).Local().Format("15:04:05")
	want := "its TTL has been pushed back as it grows since " + since +
		": it is extending if it keeps growing past its window of 1m00s, known by " + known + " (in 42s)"
	if c, _ := store.Get("ratelimit:retry"); c.Status == model.StatusExtending || !strings.Contains(flat(m), want) {
		t.Errorf("status %s; the detail does not say %q:\n%s", c.Status, want, plain(m))
	}

	push(45)
	now = at
	m, _ = send(m, tea.WindowSizeMsg{Width: 160, Height: 40})
	want = "It kept growing for longer than a whole window while its TTL was pushed back (EXPIRE without NX on every hit)"
	if c, _ := store.Get("ratelimit:retry"); c.Status != model.StatusExtending || !strings.Contains(flat(m), want) || strings.Contains(flat(m), "known by") {
		t.Errorf("status %s; the detail does not say %q, alone:\n%s", c.Status, want, plain(m))
	}
}
