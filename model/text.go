package model

import (
	"strings"
	"unicode/utf8"
)

// Printable returns s safe to put on a terminal: printable UTF-8 is kept,
// control characters (C0, DEL, C1) become \n \t \r \e or \xNN / \uNNNN
// escapes, invalid UTF-8 bytes become \xNN, and a literal backslash becomes
// "\\" so that an escape cannot be forged. Fast path: returns s unchanged
// (no allocation) when nothing needs escaping.
//
// Text in any script, emoji included, is kept as it is. Each escape names
// exactly one byte or character, so the original can always be read back:
//
//	\\       a backslash
//	\n \t \r newline, tab, carriage return
//	\e       ESC (0x1b), which starts terminal escape sequences
//	\xNN     any other ASCII control byte (0x00-0x1f, 0x7f), or a byte
//	         that is not part of valid UTF-8
//	\uNNNN   a character a terminal could act on: a C1 control
//	         (U+0080-U+009F), a line or paragraph separator (U+2028,
//	         U+2029), or a bidirectional control that could reorder the
//	         text around it (U+061C, U+200E, U+200F, U+202A-U+202E,
//	         U+2066-U+2069); or one it draws as nothing, which would
//	         make two keys look alike (U+200B, U+FEFF, U+00AD, ...: see
//	         invisible)
//	\UNNNNNNNN such a character past the basic plane (a tag, U+E0041)
//
// Hex digits are lower case.
func Printable(s string) string { return escape(s, true) }

// SafeText is s with what a terminal could act on escaped as Printable
// escapes it, but with backslashes kept: for text whose untrusted parts
// were escaped with Printable where it was written (countertop's error
// sentences quote key names that way), so that a second pass neither
// shows those escapes twice ("\\xff") nor lets a control character through.
func SafeText(s string) string { return escape(s, false) }

// escape is Printable, or SafeText when backslashes are kept.
func escape(s string, backslash bool) string {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if i+8 <= len(s) && plain8(s[i:i+8], backslash) {
				i += 8
				continue
			}
			if c < 0x20 || c == 0x7f || c == '\\' && backslash {
				return escapeFrom(s, i, backslash)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 || EscapedRune(r) { // size 1 here: an invalid byte
			return escapeFrom(s, i, backslash)
		}
		i += size
	}
	return s
}

// plain8 reports whether none of the 8 bytes of s needs escaping: each is
// printable ASCII (0x20-0x7e) and, when backslash, not a backslash. It
// tests the 8 at once, as bits of one word, which makes the common key (a
// few dozen such bytes) several times quicker to pass than byte by byte;
// a snapshot of 100,000 rows spends much of its time here.
func plain8(s string, backslash bool) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	bad := (x - 0x20*ones) &^ x // the high bit of a byte below 0x20
	bad |= (x + ones) | x       // of a byte above 0x7e (0x7f + 1 or 0x80 on)
	if backslash {
		y := x ^ '\\'*ones // a zero byte where x has a backslash
		bad |= (y - ones) &^ y
	}
	return bad&highs == 0
}

// EscapedRune reports whether Printable escapes the non-ASCII rune r as
// \uNNNN; the snapshot's JSON (internal/report) escapes the same runes.
func EscapedRune(r rune) bool {
	switch {
	case 0x80 <= r && r <= 0x9f, // C1 controls
		r == 0x061c, r == 0x200e, r == 0x200f, // ALM, LRM, RLM
		0x2028 <= r && r <= 0x202e, // line and paragraph separators; LRE, RLE, PDF, LRO, RLO
		0x2066 <= r && r <= 0x2069: // LRI, RLI, FSI, PDI
		return true
	}
	return Invisible(r)
}

// Invisible reports whether r is a character terminals draw as nothing,
// so that two keys told apart only by it would look the same: Unicode's
// default-ignorable characters and the basic plane's two noncharacters.
// The zero-width joiner and non-joiner and the variation selectors are
// kept: emoji and several scripts are written with them.
func Invisible(r rune) bool {
	switch {
	case r == 0x00ad, // soft hyphen
		r == 0x034f,              // combining grapheme joiner
		r == 0x115f, r == 0x1160, // Hangul fillers
		r == 0x17b4, r == 0x17b5, // Khmer inherent vowels
		0x180b <= r && r <= 0x180f, // Mongolian variation selectors, vowel separator
		r == 0x200b,                // zero-width space
		0x2060 <= r && r <= 0x2065, // word joiner, invisible operators
		0x206a <= r && r <= 0x206f, // deprecated format characters
		r == 0x3164, r == 0xffa0,   // Hangul fillers
		r == 0xfeff,                // zero-width no-break space (BOM)
		0xfff0 <= r && r <= 0xfffb, // unassigned, default-ignorable; interlinear annotation
		r == 0xfffe, r == 0xffff,   // noncharacters
		0x1bca0 <= r && r <= 0x1bca3,                                 // shorthand format controls
		0x1d173 <= r && r <= 0x1d17a,                                 // musical symbol format controls
		0xe0000 <= r && r <= 0xe0fff && (r < 0xe0100 || r > 0xe01ef): // tags (which can smuggle text); not the ideographic variation selectors
		return true
	}
	return false
}

const hexDigits = "0123456789abcdef"

// escapeFrom is escape's slow path: s[:i] needs no escaping.
func escapeFrom(s string, i int, backslash bool) string {
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	for i < len(s) {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '\\' && backslash:
				b.WriteString(`\\`)
			case c == '\n':
				b.WriteString(`\n`)
			case c == '\t':
				b.WriteString(`\t`)
			case c == '\r':
				b.WriteString(`\r`)
			case c == 0x1b:
				b.WriteString(`\e`)
			case c < 0x20 || c == 0x7f:
				writeHexByte(&b, c)
			default:
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case size == 1:
			writeHexByte(&b, c)
		case EscapedRune(r) && r > 0xffff:
			b.WriteString(`\U`)
			for shift := 28; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[r>>shift&0xf])
			}
		case EscapedRune(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hexDigits[r>>shift&0xf])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// writeHexByte writes c as \xNN.
func writeHexByte(b *strings.Builder, c byte) {
	b.WriteString(`\x`)
	b.WriteByte(hexDigits[c>>4])
	b.WriteByte(hexDigits[c&0xf])
}

// JSONKey returns the string to put in JSON for a key name: valid UTF-8 is
// kept as is (the JSON encoder then writes control characters as \u
// escapes), and each byte that is not valid UTF-8 becomes the four
// characters \xNN (JSON text "\\xNN"). Everything else, backslashes
// included, is the real key name, so scripts can act on it.
func JSONKey(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			writeHexByte(&b, s[i])
		} else {
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}
