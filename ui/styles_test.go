package ui

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"testing"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/colorprofile"

	"github.com/countertop/countertop/model"
)

// TestInksRenderAsTheirStyles: the table draws with inks, which must write
// exactly what lipgloss would for every row and cell style of every theme.
func TestInksRenderAsTheirStyles(t *testing.T) {
	texts := []string{"", " ", "ratelimit:api:42", "  17  ", "█▊░░░░", "∞ persistent", "a\tb", "two\nlines"}
	check := func(name string, k ink) {
		t.Helper()
		for _, text := range texts {
			if got, want := k.render(text), k.style.Render(text); got != want {
				t.Errorf("%s: ink renders %q as %q, its style as %q", name, text, got, want)
			}
		}
	}
	for _, dark := range []bool{true, false} {
		for _, p := range []colorprofile.Profile{colorprofile.TrueColor, colorprofile.ANSI256, colorprofile.ANSI, colorprofile.Ascii} {
			th := newTheme(dark, p)
			for st, looks := range th.rows {
				for sel, look := range looks {
					name := fmt.Sprintf("dark %v, %v, %v row, selected %v", dark, p, model.Status(st), sel == 1)
					check(name+", base", look.base)
					for tn, k := range look.tones {
						check(fmt.Sprintf("%s, tone %d", name, tn), k)
					}
					for i := range look.status {
						check(fmt.Sprintf("%s, %v status", name, model.Status(i)), look.status[i])
						check(fmt.Sprintf("%s, %v gauge", name, model.Status(i)), look.gauge[i])
					}
				}
			}
		}
	}
	// A style that does more than colour is left to lipgloss.
	padded := newInk(lipgloss.NewStyle().Bold(true).Padding(0, 1))
	if padded.fast {
		t.Error("a padded style was reduced to an escape sequence")
	}
	check("padded", padded)
}

// themeName names the subtest of the dark theme or the light.
func themeName(dark bool) string {
	if dark {
		return ThemeDark
	}
	return ThemeLight
}

// luminance is c's relative luminance, as WCAG 2 defines it.
func luminance(c color.Color) float64 {
	r, g, b, _ := c.RGBA()
	lin := func(v uint32) float64 {
		s := float64(v) / 0xffff
		if s <= 0.04045 {
			return s / 12.92
		}
		return math.Pow((s+0.055)/1.055, 2.4)
	}
	return 0.2126*lin(r) + 0.7152*lin(g) + 0.0722*lin(b)
}

// contrast is WCAG 2's contrast ratio of two colours, 1 to 21.
func contrast(a, b color.Color) float64 {
	la, lb := luminance(a), luminance(b)
	return (max(la, lb) + 0.05) / (min(la, lb) + 0.05)
}

// Every colour text is drawn in stands out from every background it is
// drawn on by 4.5:1 or more (WCAG AA), in the dark theme and the light:
// the status colours, the gauge and the rows on the terminal's background
// (as dark, or as light, as terminals commonly have it) and on the
// selected row's; the status line's, the header's alarms and the help on
// the terminal's. The colours are checked as a 256-colour terminal is
// sent them.
func TestEveryColourIsReadableOnItsBackground(t *testing.T) {
	for _, dark := range []bool{true, false} {
		t.Run(themeName(dark), func(t *testing.T) {
			th := newTheme(dark, colorprofile.ANSI256)
			if len(th.backdrops) == 0 {
				t.Fatalf("dark %v: the theme names no background it is made for", dark)
			}
			selected := th.Selected.GetBackground()
			type text struct {
				name  string
				style lipgloss.Style
				rows  bool // drawn on the selected row too
			}
			texts := []text{
				{"error", th.Error, false}, {"success", th.Success, false}, {"alarm", th.Alarm, false},
				{"help key", th.Help.ShortKey, false}, {"help description", th.Help.ShortDesc, false},
			}
			for st := range model.Status(model.NumStatuses) {
				texts = append(texts,
					text{st.String() + " status", th.Status[st], true},
					text{st.String() + " gauge", th.Gauge[st], true},
					text{st.String() + " row", th.Row[st], true})
			}
			for _, tx := range texts {
				fg := tx.style.GetForeground()
				if _, none := fg.(lipgloss.NoColor); none {
					continue // the terminal's own text colour, on its own background
				}
				fg = colorprofile.ANSI256.Convert(fg)
				backgrounds := th.backdrops
				if tx.rows {
					backgrounds = append(slices.Clone(backgrounds), selected)
				}
				for _, bg := range backgrounds {
					if r := contrast(fg, colorprofile.ANSI256.Convert(bg)); r < 4.5 {
						t.Errorf("dark %v: %s %v on %v has a contrast of %.2f:1, under 4.5:1", dark, tx.name, fg, bg, r)
					}
				}
			}
		})
	}
}

// The theme's statuses are told apart by colour: no two of the coloured
// ones share one.
func TestStatusColoursDiffer(t *testing.T) {
	for _, dark := range []bool{true, false} {
		t.Run(themeName(dark), func(t *testing.T) {
			th := newTheme(dark, colorprofile.ANSI256)
			seen := map[string]model.Status{}
			for _, st := range []model.Status{model.StatusNoExpiry, model.StatusOver, model.StatusWarn, model.StatusNotCounter} {
				c := fmt.Sprint(th.Status[st].GetForeground())
				if other, ok := seen[c]; ok {
					t.Errorf("dark %v: %v and %v share the colour %s", dark, other, st, c)
				}
				seen[c] = st
			}
		})
	}
}

// Options.Theme chooses the colours for a light or dark background, or
// (auto) takes the background the terminal reports.
func TestThemeOption(t *testing.T) {
	dark := newTheme(true, colorprofile.ANSI256).Status[model.StatusWarn].GetForeground()
	light := newTheme(false, colorprofile.ANSI256).Status[model.StatusWarn].GetForeground()
	white := tea.BackgroundColorMsg{Color: color.White}
	black := tea.BackgroundColorMsg{Color: color.Black}
	for _, tc := range []struct {
		name       string
		theme      string
		background tea.Msg
		want       color.Color
	}{
		{"unset", "", nil, dark}, // until the terminal answers
		{"auto on white", ThemeAuto, white, light},
		{"auto on black", ThemeAuto, black, dark},
		{"light on black", ThemeLight, black, light},
		{"dark on white", ThemeDark, white, dark},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newModelWith(t, Options{Theme: tc.theme}, 120, 40, fixture()...)
			if tc.background != nil {
				m, _ = send(m, tc.background)
			}
			// The warn row's STATUS cell, as a terminal draws it.
			term := terminal(t, m)
			if got := keyCells(t, m, term, "warn")[0]; !sameColor(got, tc.want) {
				t.Errorf("theme %q, background %v: warn is drawn in %v, want %v", tc.theme, tc.background, got, tc.want)
			}
		})
	}
}
