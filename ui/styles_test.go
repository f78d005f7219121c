package ui

import (
	"fmt"
	"testing"

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
