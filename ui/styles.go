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
// Severity colours are the terminal's own ANSI red and yellow, so they follow
// the user's theme; "over" is orange, deliberately not red, because red is
// reserved for counters that will never reset.
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

	// Status is the look of each status's STATUS cell.
	Status [model.NumStatuses]lipgloss.Style
	// Gauge colours the LIMIT gauge: as Status, but green while ok.
	Gauge [model.NumStatuses]lipgloss.Style
	// Row is the look of a whole row by status: red for counters that have
	// no expiry, dim for keys that are not counters, plain otherwise.
	Row [model.NumStatuses]lipgloss.Style
	// rows are the table's rows by status, off and under the cursor, as
	// inks: what Row, Selected and the cell styles render, made cheap.
	rows [model.NumStatuses][2]rowLook

	Help help.Styles
}

var (
	red    = lipgloss.Red
	yellow = lipgloss.Yellow
	green  = lipgloss.Green
)

// newTheme returns the styles for a dark or light terminal background and a
// colour profile. Only 16-colour terminals need their own choices: orange
// would become bright red there, and a dark grey background black.
func newTheme(isDark bool, p colorprofile.Profile) theme {
	lightDark := lipgloss.LightDark(isDark)
	pick := func(c16, c256 color.Color) color.Color {
		if p == colorprofile.ANSI {
			return c16
		}
		return c256
	}
	orange := pick(lipgloss.BrightYellow, lipgloss.Color("208"))
	plain := lipgloss.NewStyle()
	dim := plain.Faint(true)
	redStyle := plain.Foreground(red)

	s := theme{
		Title:   plain.Bold(true),
		Dim:     dim,
		Bold:    plain.Bold(true),
		Badge:   plain.Bold(true).Reverse(true).Padding(0, 1),
		Alarm:   redStyle.Bold(true),
		Error:   redStyle,
		Success: plain.Foreground(green),
		Heading: plain.Bold(true),
		Selected: plain.Background(lightDark(
			pick(lipgloss.White, lipgloss.Color("254")),
			pick(lipgloss.BrightBlack, lipgloss.Color("237")))),
		Dialog: plain.Border(lipgloss.RoundedBorder()).
			BorderForeground(lightDark(lipgloss.Color("244"), lipgloss.Color("248"))).
			Padding(0, 1),
		Label: dim,
		Help:  help.DefaultStyles(isDark),
	}
	s.Status = [model.NumStatuses]lipgloss.Style{
		model.StatusStuck:      redStyle.Bold(true),
		model.StatusExtending:  redStyle.Bold(true),
		model.StatusNoExpiry:   redStyle,
		model.StatusOver:       plain.Foreground(orange).Bold(true),
		model.StatusWarn:       plain.Foreground(yellow),
		model.StatusOK:         plain,
		model.StatusNotCounter: dim,
	}
	s.Gauge = s.Status
	s.Gauge[model.StatusOK] = plain.Foreground(green)
	s.Row = [model.NumStatuses]lipgloss.Style{
		model.StatusStuck:      redStyle.Bold(true),
		model.StatusExtending:  redStyle.Bold(true),
		model.StatusNoExpiry:   redStyle,
		model.StatusOver:       plain,
		model.StatusWarn:       plain,
		model.StatusOK:         plain,
		model.StatusNotCounter: dim,
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
