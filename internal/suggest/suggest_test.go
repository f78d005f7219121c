package suggest

import "testing"

// A typo gets the word it was meant to be; a word that is no typo of any
// gets nothing, rather than a wild guess.
func TestNearest(t *testing.T) {
	t.Parallel()
	known := []string{"snapshot", "check", "incr", "repair", "interval", "mode"}
	for typed, want := range map[string]string{
		"snapshto":  "snapshot", // two letters swapped
		"intervall": "interval", // one too many
		"chekc":     "check",
		"mdoe":      "mode",
		"Repair":    "repair", // case ignored
		"inc":       "incr",
		"status":    "",
		"x":         "",
		"":          "",
	} {
		if got := Nearest(typed, known); got != want {
			t.Errorf("Nearest(%q) = %q, want %q", typed, got, want)
		}
	}
}
