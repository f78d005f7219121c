package ui

import (
	"image/color"

	"charm.land/bubbles/v2/help"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

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
		model.StatusNoExpiry:   redStyle,
		model.StatusOver:       plain,
		model.StatusWarn:       plain,
		model.StatusOK:         plain,
		model.StatusNotCounter: dim,
	}
	return s
}
