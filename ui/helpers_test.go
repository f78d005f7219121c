package ui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

func TestMain(m *testing.M) {
	time.Local = time.UTC // the detail screen shows deadlines in local time
	code := m.Run()
	if copyprogPath != "" {
		os.Remove(copyprogPath) // built by startTmux
	}
	os.Exit(code)
}

// t0 is when the fixture's keys were read; the screen is drawn 1.5s later.
var t0 = time.Date(2025, 3, 14, 15, 9, 26, 0, time.UTC)

func testNow() time.Time { return t0.Add(1500 * time.Millisecond) }

// testPatterns are what a feed of the fixture's keys would watch.
var testPatterns = []string{"ratelimit:*", "views:*", "quota:*", "session:*", "cache:*"}

func testRules() *model.Rules {
	return &model.Rules{
		List: []model.Rule{
			{Pattern: "ratelimit:*", Limit: 100, Window: time.Minute, ExpectTTL: true},
			{Pattern: "views:*", ExpectTTL: false},
			{Pattern: "quota:*", Limit: 10, ExpectTTL: true}, // no window of its own
		},
		Fallback: model.Rule{ExpectTTL: true},
	}
}

func str(key, raw string, pttl int64) model.Observation {
	return model.Observation{Key: key, Type: "string", Raw: raw, PTTL: pttl, At: t0}
}

// fixture is a screenful with one counter of every status.
func fixture() []model.Observation {
	return []model.Observation{
		str("ratelimit:api:42", "17", 43_000),
		str("ratelimit:api:7", "85", 12_400),
		str("ratelimit:api:9", "130", 125_000),
		str("ratelimit:legacy", "100", model.PTTLNoExpiry),
		str("ratelimit:orphan", "3", model.PTTLNoExpiry),
		str("views:home", "1042", model.PTTLNoExpiry),
		str("quota:batch", "2.5", 3_725_000),
		str("ratelimit:api:expired", "4", 1_000),
		{Key: "session:abc", Type: "hash", PTTL: 1_800_000, At: t0},
		str("cache:greeting", "hello", model.PTTLNoExpiry),
	}
}

// newModel is a dashboard sized w×h, holding obs, writing through w (nil:
// no writer).
func newModel(t *testing.T, w Writer, width, height int, obs ...model.Observation) *Model {
	t.Helper()
	return newModelWith(t, Options{Writer: w}, width, height, obs...)
}

// newModelWith is newModel with more of the Options: its Store and clock
// are the fixture's.
func newModelWith(t *testing.T, o Options, width, height int, obs ...model.Observation) *Model {
	t.Helper()
	store := model.NewStore(testRules())
	store.Apply(model.Batch{Observed: obs})
	o.Store, o.Now = store, testNow
	m := New(o)
	m, _ = send(m, tea.WindowSizeMsg{Width: width, Height: height})
	m, _ = send(m, batchesMsg{batches: []model.Batch{{State: &model.FeedState{
		Mode: model.WatchPoll, Phase: model.FeedWatching, Interval: time.Second, Addr: "127.0.0.1:7000", Connected: true,
		UpdatedAt: t0.Add(1100 * time.Millisecond),
	}, Health: &model.Health{At: t0.Add(1200 * time.Millisecond), Commands: 240}}}})
	return m
}

// send runs msgs through Update and returns the model and the last command.
func send(m *Model, msgs ...tea.Msg) (*Model, tea.Cmd) {
	var cmd tea.Cmd
	for _, msg := range msgs {
		var next tea.Model
		next, cmd = m.Update(msg)
		m = next.(*Model)
	}
	return m, cmd
}

// keys are key presses: each rune of s is typed as is, except names in
// angle brackets, like <enter>, <esc>, <up>.
func keys(s string) []tea.Msg {
	special := map[string]rune{
		"enter": tea.KeyEnter, "esc": tea.KeyEscape, "up": tea.KeyUp, "down": tea.KeyDown,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "backspace": tea.KeyBackspace,
	}
	var msgs []tea.Msg
	for s != "" {
		if name, rest, ok := strings.Cut(s[1:], ">"); s[0] == '<' && ok {
			code, known := special[name]
			if !known {
				panic("unknown key " + name)
			}
			msgs = append(msgs, tea.KeyPressMsg{Code: code})
			s = rest
			continue
		}
		r := []rune(s)[0]
		msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
		s = s[len(string(r)):]
	}
	return msgs
}

// press types s (see keys) into m.
func press(m *Model, s string) (*Model, tea.Cmd) { return send(m, keys(s)...) }

// run executes a write command (or a batch of them) and feeds the results
// back into the model, with what those bring in turn (a repair's next
// writes). Messages of other packages (a prompt's cursor blinking, which
// would go on for ever) are dropped. Only call it with commands that do not
// wait on timers or the feed.
func run(t *testing.T, m *Model, cmd tea.Cmd) *Model {
	t.Helper()
	if cmd == nil {
		t.Fatal("expected a command, got none")
	}
	pending := []tea.Cmd{cmd}
	for len(pending) > 0 {
		c := pending[0]
		pending = pending[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			pending = append(pending, msg...)
		case nil:
		default:
			if !strings.HasPrefix(fmt.Sprintf("%T", msg), "ui.") {
				continue
			}
			var next tea.Cmd
			m, next = send(m, msg)
			pending = append(pending, next)
		}
	}
	return m
}

// plain is the screen as text, without styles.
func plain(m *Model) string { return ansi.Strip(m.View().Content) }

// statusText is the status as text, its lines (when it is wrapped) joined
// by a space, as they are read.
func statusText(m *Model) string { return ansi.Strip(strings.Join(m.statusView(), " ")) }

// fakeWriter records the writes it is asked for and answers from a small
// in-memory copy of Redis.
type fakeWriter struct {
	mu     sync.Mutex
	calls  []string
	values map[string]float64
	fields map[string]map[string]float64 // hashes: field -> value
	ttls   map[string]time.Duration
	err    error            // returned by every call when set
	now    func() time.Time // when its answers are read
}

func newFakeWriter() *fakeWriter {
	return &fakeWriter{values: map[string]float64{}, ttls: map[string]time.Duration{}, now: testNow}
}

func (f *fakeWriter) record(format string, a ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, a...))
}

func (f *fakeWriter) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func (f *fakeWriter) state(key string) model.Observation {
	o := model.Observation{Key: key, Type: "string", PTTL: model.PTTLNoExpiry, At: f.now()}
	v, ok := f.values[key]
	if !ok {
		o.PTTL, o.Type = model.PTTLMissing, "none"
		return o
	}
	o.Raw = fmt.Sprint(v)
	if ttl, ok := f.ttls[key]; ok {
		o.PTTL = ttl.Milliseconds()
	}
	return o
}

func (f *fakeWriter) Incr(_ context.Context, key string, by model.Amount, window time.Duration) (model.Incremented, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	consent := ""
	if by.AllowFloat {
		consent = " (may make it decimal)"
	}
	f.record("INCR %s %s %s%s", key, by, window, consent)
	if f.err != nil {
		return model.Incremented{}, f.err
	}
	if _, hasTTL := f.ttls[key]; window == model.WindowUnknown && !hasTTL { // as redisclient.Client does
		return model.Incremented{}, fmt.Errorf("%s has no TTL: %w", model.Printable(key), model.ErrNeedsWindow)
	}
	v, exists := f.values[key]
	whole := v == math.Trunc(v)
	if by.IsFloat && !by.AllowFloat && whole { // as redisclient.Client does
		return model.Incremented{Observation: f.state(key)}, fmt.Errorf("%s holds an integer or nothing: %w", model.Printable(key), model.ErrMakesDecimal)
	}
	r := model.Incremented{Command: by.Command()}
	if !whole {
		r.Command = "INCRBYFLOAT"
	}
	if by.IsFloat {
		f.values[key] += by.Float
	} else {
		f.values[key] += float64(by.Int)
	}
	if _, ok := f.ttls[key]; !ok && window > 0 {
		f.ttls[key] = window
		r.GaveTTL = exists
	}
	r.Observation = f.state(key)
	return r, nil
}

// IncrField adds to a field of a hash, kept apart from the string
// counters: the fake checks no types, as the ui's own refusals are what is
// tested against it (redisclient's tests check the script).
func (f *fakeWriter) IncrField(_ context.Context, key, field string, by model.Amount, window time.Duration) (model.Incremented, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("HINCR %s %s %s %s", key, field, by, window)
	if f.err != nil {
		return model.Incremented{}, f.err
	}
	if _, hasTTL := f.ttls[key]; window == model.WindowUnknown && !hasTTL {
		return model.Incremented{}, fmt.Errorf("%s has no TTL: %w", model.Printable(key), model.ErrNeedsWindow)
	}
	if f.fields == nil {
		f.fields = map[string]map[string]float64{}
	}
	if f.fields[key] == nil {
		f.fields[key] = map[string]float64{}
	}
	f.fields[key][field] += float64(by.Int) + by.Float
	r := model.Incremented{Command: by.CommandOn(field), Field: field, FieldValue: fmt.Sprint(f.fields[key][field])}
	if _, ok := f.ttls[key]; !ok && window > 0 {
		f.ttls[key] = window
	}
	r.Observation = model.Observation{Key: key, Type: "hash", PTTL: model.PTTLNoExpiry, At: f.now()}
	if ttl, ok := f.ttls[key]; ok {
		r.PTTL = ttl.Milliseconds()
	}
	for name, v := range f.fields[key] {
		r.Fields = append(r.Fields, model.Field{Name: name, Value: fmt.Sprint(v)})
	}
	slices.SortFunc(r.Fields, func(a, b model.Field) int { return strings.Compare(a.Name, b.Name) })
	r.Len = int64(len(r.Fields))
	return r, nil
}

func (f *fakeWriter) Expire(_ context.Context, e model.Expiry) (model.ExpiryOutcome, model.Observation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("EXPIRE %s %s", e.Key, e.Window)
	if f.err != nil {
		return model.ExpiryFailed, model.Observation{}, f.err
	}
	_, exists := f.values[e.Key]
	_, hasTTL := f.ttls[e.Key]
	switch {
	case !exists:
		return model.ExpiryGone, f.state(e.Key), nil
	case hasTTL:
		return model.ExpiryHadTTL, f.state(e.Key), nil
	}
	f.ttls[e.Key] = e.Window
	return model.ExpirySet, f.state(e.Key), nil
}

func (f *fakeWriter) Delete(_ context.Context, key string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record("DEL %s", key)
	if f.err != nil {
		return false, f.err
	}
	_, existed := f.values[key]
	delete(f.values, key)
	delete(f.ttls, key)
	return existed, nil
}

// seed puts obs into the fake Redis too, so writes start from what the
// dashboard shows.
func (f *fakeWriter) seed(obs ...model.Observation) *fakeWriter {
	for _, o := range obs {
		if o.Type == "hash" {
			f.seedHash(o)
			continue
		}
		var v float64
		if _, err := fmt.Sscan(o.Raw, &v); err != nil {
			continue
		}
		f.values[o.Key] = v
		if o.PTTL >= 0 {
			f.ttls[o.Key] = time.Duration(o.PTTL) * time.Millisecond
		}
	}
	return f
}

// seedHash puts the numeric fields of the hash o into the fake.
func (f *fakeWriter) seedHash(o model.Observation) {
	if f.fields == nil {
		f.fields = map[string]map[string]float64{}
	}
	f.fields[o.Key] = map[string]float64{}
	for _, fl := range o.Fields {
		var v float64
		if _, err := fmt.Sscan(fl.Value, &v); err == nil {
			f.fields[o.Key][fl.Name] = v
		}
	}
	if o.PTTL >= 0 {
		f.ttls[o.Key] = time.Duration(o.PTTL) * time.Millisecond
	}
}

//lint:ignore ST1005 a replica's reply, word for word as Redis sends it
var errReplica = errors.New("READONLY You can't write against a read only replica.")
