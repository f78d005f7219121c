package ui

import (
	"image/color"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"

	"github.com/countertop/countertop/model"
)

// theme is every colour and attribute the dashboard uses, in one place.
// "over" is orange, deliberately not red, because red is reserved for
// counters that will never reset.
//
// The colours are of the 256-colour palette, whose shades every terminal
// draws alike, chosen so that each stands out from the background it is
// drawn on by 4.5:1 or more (WCAG's contrast for text): the terminal's own,
// as dark (or light) as terminals commonly have it (backdrops), and the
// selected row's. On a 16-colour terminal the shades are the terminal's,
// and the theme picks by name.
type theme struct {
	Title    lipgloss.Style
	Dim      lipgloss.Style
	Bold     lipgloss.Style
	Badge    lipgloss.Style // PAUSED, READ-ONLY
	Alarm    lipgloss.Style // header counts of stuck / no-expiry keys when > 0
	Error    lipgloss.Style // the status line after a failure, the feed's last error
	Success  lipgloss.Style // the status line after a write
	Heading  lipgloss.Style // table column titles
	Selected lipgloss.Style // added to every cell of the row under the cursor
	Dialog   lipgloss.Style // confirmation box
	Label    lipgloss.Style // field names in the detail view
	Shared   lipgloss.Style // a row two shards of one limiter hold: its SERVER mark, the header's count, the detail's copies

	// Status is the look of each status's STATUS cell.
	Status [model.NumStatuses]lipgloss.Style
	// Gauge colours the LIMIT gauge: as Status, but green while ok.
	Gauge [model.NumStatuses]lipgloss.Style
	// Row is the look of a whole row by status: red for counters that have
	// no expiry (stuck, no-expiry, leak), grey for keys that are not
	// counters, plain otherwise.
	Row [model.NumStatuses]lipgloss.Style
	// rows are the table's rows by status, off and under the cursor, as
	// inks: what Row, Selected and the cell styles render, made cheap.
	rows [model.NumStatuses][2]rowLook

	Help help.Styles

	// backdrops are the terminal backgrounds the colours are made for: the
	// darkest and the lightest a terminal of this kind commonly has.
	backdrops []color.Color
}

// palette is the colours of a theme, one per meaning.
type palette struct {
	red, orange, yellow, green, grey color.Color
	selected                         color.Color // the selected row's background
	helpKey, helpDesc, helpSep       color.Color
	backdrops                        []color.Color
}

// The palettes for a dark and a light background, of the 256-colour
// palette, and of the 16 colours the terminal defines. Yellow and orange
// readable on white are dark shades (olive, amber): every bright one is
// too close to white. A light 16-colour terminal has no such shade: warn
// and over take blue and magenta there. The dark palette is made for
// backgrounds from black to #262626, about where most dark themes' lie
// (gruvbox's, Dracula's), the light one for white down to #eeeeee; the
// selected row's is as dark (as light) as they go, so that red on it still
// reads.
var (
	darkPalette = palette{
		red: lipgloss.Color("203"), orange: lipgloss.Color("208"), yellow: lipgloss.Color("220"),
		green: lipgloss.Color("114"), grey: lipgloss.Color("248"),
		selected: lipgloss.Color("235"),
		helpKey:  lipgloss.Color("252"), helpDesc: lipgloss.Color("247"), helpSep: lipgloss.Color("240"),
		backdrops: []color.Color{lipgloss.Color("16"), lipgloss.Color("235")},
	}
	lightPalette = palette{
		red: lipgloss.Color("124"), orange: lipgloss.Color("94"), yellow: lipgloss.Color("58"),
		green: lipgloss.Color("22"), grey: lipgloss.Color("241"),
		selected: lipgloss.Color("255"),
		helpKey:  lipgloss.Color("238"), helpDesc: lipgloss.Color("242"), helpSep: lipgloss.Color("250"),
		backdrops: []color.Color{lipgloss.Color("231"), lipgloss.Color("255")},
	}
	darkANSI = palette{
		red: lipgloss.Red, orange: lipgloss.BrightYellow, yellow: lipgloss.Yellow, green: lipgloss.Green, grey: lipgloss.BrightBlack,
		selected: lipgloss.BrightBlack, helpKey: lipgloss.White, helpDesc: lipgloss.White, helpSep: lipgloss.BrightBlack,
	}
	lightANSI = palette{
		red: lipgloss.Red, orange: lipgloss.Magenta, yellow: lipgloss.Blue, green: lipgloss.Green, grey: lipgloss.BrightBlack,
		selected: lipgloss.White, helpKey: lipgloss.Black, helpDesc: lipgloss.BrightBlack, helpSep: lipgloss.White,
	}
)

// Theme names, as Options.Theme takes them.
const (
	ThemeAuto  = "auto"  // the terminal's background says (tea.BackgroundColorMsg)
	ThemeDark  = "dark"  // for a dark background, whatever the terminal says
	ThemeLight = "light" // for a light background
)

// newTheme returns the styles for a dark or light terminal background and a
// colour profile.
func newTheme(isDark bool, p colorprofile.Profile) theme {
	c := lightPalette
	switch {
	case isDark && p == colorprofile.ANSI:
		c = darkANSI
	case p == colorprofile.ANSI:
		c = lightANSI
	case isDark:
		c = darkPalette
	}
	plain := lipgloss.NewStyle()
	dim := plain.Faint(true)
	redStyle := plain.Foreground(c.red)
	grey := plain.Foreground(c.grey)

	s := theme{
		Title:    plain.Bold(true),
		Dim:      dim,
		Bold:     plain.Bold(true),
		Badge:    plain.Bold(true).Reverse(true).Padding(0, 1),
		Alarm:    redStyle.Bold(true),
		Error:    redStyle,
		Success:  plain.Foreground(c.green),
		Heading:  plain.Bold(true),
		Selected: plain.Background(c.selected),
		Dialog: plain.Border(lipgloss.RoundedBorder()).
			BorderForeground(c.grey).
			Padding(0, 1),
		Label:     dim,
		Shared:    plain.Foreground(c.orange).Bold(true), // as over: the copies let a client past its limit
		backdrops: c.backdrops,
	}
	key, desc, sep := plain.Foreground(c.helpKey), plain.Foreground(c.helpDesc), plain.Foreground(c.helpSep)
	s.Help = help.Styles{ShortKey: key, ShortDesc: desc, ShortSeparator: sep, Ellipsis: sep, FullKey: key, FullDesc: desc, FullSeparator: sep}
	s.Status = [model.NumStatuses]lipgloss.Style{
		model.StatusStuck:      redStyle.Bold(true),
		model.StatusExtending:  redStyle.Bold(true),
		model.StatusNoExpiry:   redStyle,
		model.StatusLeak:       redStyle,
		model.StatusOver:       plain.Foreground(c.orange).Bold(true),
		model.StatusWarn:       plain.Foreground(c.yellow),
		model.StatusOK:         plain,
		model.StatusNotCounter: grey,
	}
	s.Gauge = s.Status
	s.Gauge[model.StatusOK] = plain.Foreground(c.green)
	s.Row = [model.NumStatuses]lipgloss.Style{
		model.StatusStuck:      redStyle.Bold(true),
		model.StatusExtending:  redStyle.Bold(true),
		model.StatusNoExpiry:   redStyle,
		model.StatusLeak:       redStyle,
		model.StatusOver:       plain,
		model.StatusWarn:       plain,
		model.StatusOK:         plain,
		model.StatusNotCounter: grey,
	}
	for st, row := range s.Row {
		s.rows[st] = [2]rowLook{newRowLook(&s, row), newRowLook(&s, row.Inherit(s.Selected))}
	}
	return s
}

// tone is the style of a cell that depends on its value, such as the TTL.
type tone uint8

const (
	tonePlain    tone = iota
	toneDim           // nothing to see: "—", a rate of 0, a TTL that does not matter
	toneNoExpiry      // red: a counter that should expire and never will
)

// style is the lipgloss style of tone.
func (t *theme) style(tn tone) lipgloss.Style {
	switch tn {
	case toneDim:
		return t.Dim
	case toneNoExpiry:
		return t.Status[model.StatusNoExpiry]
	case tonePlain:
	}
	return lipgloss.NewStyle()
}

// rowLook is how one table row is drawn: the row's own style, and each
// cell style on top of it (as Style.Inherit puts it), as inks.
type rowLook struct {
	base   ink
	tones  [3]ink // by tone
	status [model.NumStatuses]ink
	gauge  [model.NumStatuses]ink
}

// newRowLook returns the look of a row drawn in row, with t's cell styles.
func newRowLook(t *theme, row lipgloss.Style) rowLook {
	on := func(s lipgloss.Style) ink { return newInk(s.Inherit(row)) }
	l := rowLook{base: newInk(row)}
	for tn := range l.tones {
		l.tones[tn] = on(t.style(tone(tn)))
	}
	for st := range model.NumStatuses {
		l.status[st] = on(t.Status[st])
		l.gauge[st] = on(t.Gauge[st])
	}
	return l
}

// ink draws text with the bytes its style's Render would produce, for
// less: the table draws many cells every frame, and Render works the whole
// style out each time. Only a style of colours and attributes is drawn
// with its opening sequence; any other is left to Render.
type ink struct {
	style *lipgloss.Style
	fast  bool   // style reduces to open
	open  string // the sequence before the text; "" for a style that changes nothing
}

// inkProbe is what newInk renders to learn a style; it holds a space
// because some styles treat spaces apart.
const inkProbe = "a b"

// newInk returns the ink of s, learning from one Render whether s reduces
// to its opening sequence.
func newInk(s lipgloss.Style) ink {
	k := ink{style: &s}
	out := s.Render(inkProbe)
	if out == inkProbe {
		k.fast = true
	} else if open, ok := strings.CutSuffix(out, inkProbe+ansi.ResetStyle); ok && ansi.Strip(open) == "" {
		k.fast, k.open = true, open
	}
	return k
}

// render is Render(text) of the style the ink was made from.
func (k ink) render(text string) string {
	switch {
	case !k.fast || strings.ContainsAny(text, "\t\r\n"): // Render converts tabs and styles each line
		return k.style.Render(text)
	case k.open == "":
		return text
	}
	return k.open + text + ansi.ResetStyle
}
