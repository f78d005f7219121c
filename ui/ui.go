package ui

import (
	"context"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/countertop/countertop/model"
)

// Writer makes the changes the dashboard's write keys ask for. redisclient
// implements it; the ui knows only this interface, so it can run without one
// (read-only) and be tested with a fake.
type Writer interface {
	// Incr adds by to key (INCRBY, or INCRBYFLOAT for a decimal amount or
	// a key holding a decimal) and returns its new state, the command that
	// ran and whether it gave the key its first TTL. In the same atomic
	// step it gives the key window as its TTL when it has none (EXPIRE
	// NX), so a crash cannot leave an immortal counter. window 0, for keys
	// meant to live forever, is a plain INCRBY. A decimal amount is not
	// sent to a key holding an integer, or none, without by.AllowFloat:
	// the error wraps model.ErrMakesDecimal.
	Incr(ctx context.Context, key string, by model.Amount, window time.Duration) (model.Incremented, error)
	// IncrField is Incr for field of the hash key (HINCRBY, HINCRBYFLOAT),
	// the hash getting window as its TTL when it has none. A key that is
	// no hash when it runs is left alone: the error wraps model.ErrNotHash.
	IncrField(ctx context.Context, key, field string, by model.Amount, window time.Duration) (model.Incremented, error)
	// Expire runs the repair e: in one atomic step it sends e.Command only
	// while the key still holds e.Shape and has no TTL, and says which it
	// found (a key that changed or is gone is no error). obs is the key's
	// state afterwards.
	Expire(ctx context.Context, e model.Expiry) (outcome model.ExpiryOutcome, obs model.Observation, err error)
	// Delete removes key; existed is false when there was none to remove
	// (it expired, or someone deleted it first).
	Delete(ctx context.Context, key string) (existed bool, err error)
}

// Options is what New needs to build the dashboard.
type Options struct {
	// Store holds the counters; from now on the dashboard owns it.
	Store *model.Store
	// Feed delivers observations; closing it stops listening. nil: the
	// Store is shown as it is.
	Feed <-chan model.Batch
	// Writer sends writes; nil means no write is possible.
	Writer Writer
	// Servers are the servers watched, when more than one: each batch of
	// the feed names its own (model.Batch.Server), and each server's
	// Writer takes the writes on its rows. nil with one server.
	Servers []Server
	// ReadOnly refuses every write before anything is sent.
	ReadOnly bool
	// Now is the clock TTL countdowns are computed with; nil is time.Now.
	Now func() time.Time
	// Title leads the header and names the terminal window; "" is
	// "countertop".
	Title string
	// Patterns are those the feed watches: a key written that none of
	// them matches gets no row, as the feed would not read it again. The
	// header names them.
	Patterns []string
	// DB is the database the feed reads (the /N of --url), for the header
	// and for the empty screen's advice.
	DB int
	// ConfigFile is the config file that was read, shown in the header so
	// that a countertop.toml picked up from the directory does not go
	// unnoticed; "" when none was.
	ConfigFile string
	// Mouse turns the mouse on: the wheel scrolls, a click selects a row
	// or sorts by a column. Off, the terminal keeps the mouse for its own
	// text selection.
	Mouse bool
	// Theme is ThemeAuto (or ""): the colours suit the background the
	// terminal reports, dark until it does; ThemeDark or ThemeLight
	// choose, for a terminal that does not answer or answers wrong.
	Theme string
	// Hint is the status line until the first action: what to try (the
	// demo's tour); "" leaves it empty.
	Hint string
	// OnScreen, when not nil, is told the keys on screen each time they
	// change (the rows of the table, or the key of the detail screen), so
	// that the feed reads them first. It is called from Update and must
	// not block.
	OnScreen func(keys []string)
}

// Model is the dashboard. *Model is the tea.Model: Update changes the
// Model in place and returns the same pointer, so there is one copy of its
// state, the one New returned.
type Model struct {
	store    *model.Store
	feed     <-chan model.Batch
	writer   Writer
	servers  []*serverFeed // with several servers, each one's feed (see servers.go); nil with one
	readOnly bool
	patterns []string // the feed's, to tell when a key written is outside them
	db       int
	config   string // the config file read, "" for none
	now      func() time.Time
	title    string
	mouse    bool // the wheel and clicks are the dashboard's (Options.Mouse)

	keys  keyMap
	theme *theme // built anew by restyle, never changed in place
	help  help.Model
	dark  bool                 // the terminal's background is dark
	fixed bool                 // dark was chosen (Options.Theme): the terminal's answer is not taken
	color colorprofile.Profile // what colours the terminal shows

	width, height int

	feedState  model.FeedState
	feedClosed bool
	lastData   time.Time // when the feed last brought data
	health     model.Health
	liveAt     time.Time // when the feed was last live (see live): no row is older
	downSince  time.Time // the last data before the feed last said Redis was unreachable
	// stallError is the feed's error that came while a server was silent,
	// a sentence about that stall; stallOver, that every server has
	// answered since, and the header shows it no more (see endStall).
	stallError string
	stallOver  bool

	// The selection is a row (a key's, or a hash field's); cursor and
	// offset are derived from it after every change so that it stays on
	// the same row when rows move. Until the user picks a row (moves, or
	// acts on one), the cursor stays on the first row while rows arrive,
	// as the view does.
	selected rowRef
	picked   bool
	// lost is the picked row, since gone from the rows by itself (see
	// followFeed): the next write on the selection, now the row that took
	// its place, is refused rather than sent to a row the user did not pick.
	lost   rowRef
	cursor int // selected's index in the filtered, sorted order
	offset int // index of the first row on screen

	paused   bool
	pausedAt time.Time // the frozen clock while paused
	held     held
	tickGen  int  // the live tick chain; ticks of older chains are dropped
	framing  bool // a frameMsg is on its way (see drawAgain)

	screen   screen
	detail   rowRef   // the row the detail screen shows
	siblings siblings // the other windows of detail's identity, when a window key
	showHelp bool     // the full help covers the screen
	overview bool     // o: the overview panel is on, above the table
	scroll   int      // how many lines the help or the detail screen is scrolled down
	prompt   *prompt
	confirm  *confirm
	repair   repairJob
	status   statusLine
	// statusSince is when an action last changed status (zero for the
	// hint New shows): see fadeStatus.
	statusSince time.Time

	// filters are the filters kept this session (enter in the / prompt),
	// oldest first, for ↑ and ↓ in the prompt.
	filters []string

	// given is the window the user typed for each key this session, so a
	// key no rule gives one is asked about once, not at every +.
	given map[string]time.Duration

	// widestKey is the widest key name the table has shown (measureKeys).
	widestKey int

	onScreen func(keys []string) // see Options.OnScreen
	told     []string            // the keys onScreen was last told
}

// screen is what fills the space between the header and the status line.
type screen uint8

const (
	screenTable screen = iota
	screenDetail
)

// New returns the dashboard for o, ready for tea.NewProgram.
func New(o Options) *Model {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	title := o.Title
	if title == "" {
		title = "countertop"
	}
	m := &Model{
		store:    o.Store,
		feed:     o.Feed,
		writer:   o.Writer,
		readOnly: o.ReadOnly,
		patterns: o.Patterns,
		db:       o.DB,
		config:   o.ConfigFile,
		now:      now,
		title:    title,
		mouse:    o.Mouse,
		onScreen: o.OnScreen,
		keys:     defaultKeyMap(),
		help:     help.New(),
		dark:     true,
		color:    colorprofile.ANSI256,
	}
	switch o.Theme {
	case ThemeDark:
		m.fixed = true
	case ThemeLight:
		m.dark, m.fixed = false, true
	}
	m.keys.readOnly = o.ReadOnly
	if len(o.Servers) > 1 {
		for _, s := range o.Servers {
			m.servers = append(m.servers, &serverFeed{Server: s})
		}
	}
	if o.Hint != "" {
		m.status = info("%s", o.Hint)
	}
	m.restyle()
	return m
}

// Init starts listening to the feed and the clock, and asks the terminal for
// its background colour so the styles can suit it, unless Options.Theme
// chose.
func (m *Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tick(m.tickGen)}
	if !m.fixed {
		cmds = append(cmds, tea.RequestBackgroundColor)
	}
	if m.feed != nil {
		cmds = append(cmds, listen(m.feed))
	}
	return tea.Batch(cmds...)
}

// restyle builds the theme for what is known of the terminal.
func (m *Model) restyle() {
	t := newTheme(m.dark, m.color)
	m.theme = &t
	m.help.Styles = m.theme.Help
}
