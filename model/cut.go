package model

import (
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// Cells returns how many terminal cells s, one line of Printable text,
// takes: one a byte for printable ASCII, which most key names are, else
// grapheme by grapheme as lipgloss.Width counts them (wide characters two).
func Cells(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

// CutMiddle returns s, a name in Printable form, in at most width cells:
// whole when it fits, else with its middle taken out and marked "…", as
// the dashboard cuts names. Keys of a pattern share their beginning and
// differ at their end (a user, an address), which must stay in sight.
func CutMiddle(s string, width int) string {
	return CutMiddleAt(s, width, (width-1)/2)
}

// CutMiddleAt is CutMiddle with the part taken out starting head cells in.
// Under 3 cells, s is cut at its end. A cut takes whole escapes (see
// Printable), never part of one: what is left of "\e[31m" would read as
// the text "e[31m", or "31m".
func CutMiddleAt(s string, width, head int) string {
	n := Cells(s)
	if n <= width {
		return s
	}
	if width < 3 {
		return ansi.Truncate(s, max(width, 0), "…")
	}
	left, right := ansi.Truncate(s, head, ""), ansi.TruncateLeft(s, n-(width-1-head), "")
	if len(left) > 0 {
		if start, end := EscapeAt(s, len(left)-1); end > len(left) {
			left = left[:start]
		}
	}
	if off := len(s) - len(right); off < len(s) {
		if start, end := EscapeAt(s, off); start < off {
			right = s[end:]
		}
	}
	// TruncateLeft keeps a wide character it cuts through: the name would
	// take a cell more than width.
	for right != "" && Cells(left)+1+Cells(right) > width {
		_, end := EscapeAt(right, 0)
		right = right[end:]
	}
	return left + "…" + right
}

// csiLength is how many bytes at the start of s, after an ESC, are a
// control sequence's "[", parameters and final byte (ECMA-48); 0 when s
// does not start one.
func csiLength(s string) int {
	if s == "" || s[0] != '[' {
		return 0
	}
	j := 1
	for j < len(s) && s[j] >= 0x20 && s[j] <= 0x3f { // parameters and intermediates
		j++
	}
	if j < len(s) && s[j] >= 0x40 && s[j] <= 0x7e {
		j++
	}
	return j
}

// EscapeAt returns where the character or escape of s (as Printable
// writes them: \\, \n, \e, \xNN, \uNNNN, \UNNNNNNNN) that holds byte off
// starts and ends; off, off when off is at the end of s. An \e that starts
// a terminal's control sequence, \e[31m, counts with the sequence: what is
// left of it, 31m, would read as text of the name.
func EscapeAt(s string, off int) (start, end int) {
	for i := 0; i < len(s); {
		n := 1
		if s[i] == '\\' && i+1 < len(s) {
			switch s[i+1] {
			case 'x':
				n = 4
			case 'u':
				n = 6
			case 'U':
				n = 10
			case 'e':
				n = 2 + csiLength(s[i+2:])
			default:
				n = 2
			}
		} else if s[i] >= utf8.RuneSelf {
			_, n = utf8.DecodeRuneInString(s[i:])
		}
		if off < i+n {
			return i, min(i+n, len(s))
		}
		i += n
	}
	return off, off
}
