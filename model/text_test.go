package model

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

var printableCases = []struct{ in, want string }{
	{"", ""},
	{"ratelimit:ip:203.0.113.5", "ratelimit:ip:203.0.113.5"},
	{"naïve:日本語:😀:👨‍👩‍👧", "naïve:日本語:😀:👨‍👩‍👧"}, // ZWJ emoji sequences stay whole
	{"\ufffd", "\ufffd"}, // a real replacement character is text
	{`a\b`, `a\\b`},
	{"a\nb\tc\rd", `a\nb\tc\rd`},
	{"\x1b[31mred\x1b[0m", `\e[31mred\e[0m`},
	{"\x1b]0;owned\x07", `\e]0;owned\x07`},
	{"\x00\x01\x1f\x7f", `\x00\x01\x1f\x7f`},
	{"a\xffb", `a\xffb`},
	{"\xe4\xbd", `\xe4\xbd`},           // a truncated sequence: each byte escaped
	{"\xc2\x9b31m", `\u009b31m`},       // C1 CSI, encoded as UTF-8
	{"\x9b31m", `\x9b31m`},             // C1 CSI as a lone byte
	{"\u0085", `\u0085`},               // NEL
	{"\u00a0", "\u00a0"},               // the first character after C1 is kept
	{"abc\u202eevil", `abc\u202eevil`}, // RLO would show "live"
	{"\u2066x\u2069", `\u2066x\u2069`},
	{"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
	{"line\u2028next\u2029", `line\u2028next\u2029`},
	{`\x41`, `\\x41`}, // text that looks like an escape is not one
	// Characters drawn as nothing would make two keys look alike.
	{"rl:a\u200bb", `rl:a\u200bb`},
	{"\ufeffrl:x", `\ufeffrl:x`},
	{"soft\u00adhyphen\u2060", `soft\u00adhyphen\u2060`},
	{"\u3164\uffff\ufff9", `\u3164\uffff\ufff9`},
	{"rl:x\U000e0041y", `rl:x\U000e0041y`}, // a tag character: invisible text
	{"\U0001d173", `\U0001d173`},
	{"葛\U000e0100", "葛\U000e0100"},                         // an ideographic variation selector writes the character's form
	{"👨\u200d👩\u200d👧 ❤\ufe0f", "👨\u200d👩\u200d👧 ❤\ufe0f"}, // joiners and variation selectors write emoji
}

func TestPrintable(t *testing.T) {
	for _, tc := range printableCases {
		t.Run(caseName(tc.in), func(t *testing.T) {
			if got := Printable(tc.in); got != tc.want {
				t.Errorf("Printable(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// An error sentence quotes a key the way Printable shows it; the screen
// that shows the sentence must neither escape it again nor let through
// what the sentence's writer forgot to escape.
func TestSafeText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"INCRBY " + Printable("ratelimit:a\\b\xff") + " 1 failed", `INCRBY ratelimit:a\\b\xff 1 failed`},
		{`already \e[31m escaped`, `already \e[31m escaped`},
		{"raw \x1b[2J and \a", `raw \e[2J and \x07`},
		{"bidi \u202e and C1 \u009b", `bidi \u202e and C1 \u009b`},
		{"bad \xff byte", `bad \xff byte`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			if got := SafeText(tc.in); got != tc.want {
				t.Errorf("SafeText(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

// invisible holds what Unicode says is ignorable when drawn (its
// Other_Default_Ignorable_Code_Point, format characters, the Mongolian
// variation selectors) or no character at all, and all of the first table
// in the basic plane; never the joiners and variation selectors that emoji
// and scripts are written with.
func TestInvisible(t *testing.T) {
	for r := rune(0); r <= unicode.MaxRune; r++ {
		ignorable := unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) || unicode.Is(unicode.Cf, r) ||
			unicode.Is(unicode.Variation_Selector, r) || unicode.Is(unicode.Noncharacter_Code_Point, r)
		if Invisible(r) && !ignorable {
			t.Errorf("Invisible(%U), which Unicode does not say is ignorable", r)
		}
		if unicode.Is(unicode.Other_Default_Ignorable_Code_Point, r) && !Invisible(r) {
			t.Errorf("Invisible(%U) = false for a default-ignorable character", r)
		}
	}
	for _, r := range []rune{0x200c, 0x200d, 0xfe0f, 0x00a0, 0x202f} {
		t.Run(fmt.Sprintf("%U", r), func(t *testing.T) {
			if Invisible(r) {
				t.Errorf("Invisible(%U): it is part of written text", r)
			}
		})
	}
}

func TestPrintableDoesNotAllocateForPlainText(t *testing.T) {
	for _, s := range []string{"ratelimit:user:12345", "日本語:😀"} {
		t.Run(s, func(t *testing.T) {
			if n := testing.AllocsPerRun(100, func() { Printable(s) }); n != 0 {
				t.Errorf("Printable(%q) allocated %v times", s, n)
			}
		})
	}
}

// unprintable reads Printable's output back, so tests can check that no two
// strings look alike on screen.
func unprintable(t *testing.T, s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' {
			b.WriteByte(s[i])
			continue
		}
		i++
		if i == len(s) {
			t.Fatalf("%q ends in a lone backslash", s)
		}
		switch s[i] {
		case '\\':
			b.WriteByte('\\')
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case 'x':
			n, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if err != nil {
				t.Fatalf("%q: bad \\x escape", s)
			}
			b.WriteByte(byte(n))
			i += 2
		case 'u':
			n, err := strconv.ParseUint(s[i+1:i+5], 16, 32)
			if err != nil {
				t.Fatalf("%q: bad \\u escape", s)
			}
			b.WriteRune(rune(n))
			i += 4
		case 'U':
			n, err := strconv.ParseUint(s[i+1:i+9], 16, 32)
			if err != nil {
				t.Fatalf("%q: bad \\U escape", s)
			}
			b.WriteRune(rune(n))
			i += 8
		default:
			t.Fatalf("%q: unknown escape \\%c", s, s[i])
		}
	}
	return b.String()
}

func TestPrintableReadsBack(t *testing.T) {
	for _, tc := range printableCases {
		t.Run(caseName(tc.in), func(t *testing.T) {
			if got := unprintable(t, Printable(tc.in)); got != tc.in {
				t.Errorf("Printable(%q) reads back as %q", tc.in, got)
			}
		})
	}
}

func FuzzPrintable(f *testing.F) {
	for _, tc := range printableCases {
		f.Add(tc.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := Printable(s)
		if !utf8.ValidString(out) {
			t.Fatalf("Printable(%q) = %q: not UTF-8", s, out)
		}
		for _, r := range out {
			if r < 0x20 || (0x7f <= r && r <= 0x9f) || EscapedRune(r) {
				t.Fatalf("Printable(%q) = %q: holds %U", s, out, r)
			}
		}
		if got := unprintable(t, out); got != s {
			t.Fatalf("Printable(%q) = %q reads back as %q", s, out, got)
		}
		plain := true
		for i := 0; i < len(s); i++ {
			plain = plain && 0x20 <= s[i] && s[i] < 0x7f && s[i] != '\\'
		}
		if plain && out != s {
			t.Fatalf("Printable(%q) = %q: plain ASCII changed", s, out)
		}
		if again := SafeText(out); again != out {
			t.Fatalf("SafeText(Printable(%q)) = %q, want it unchanged: %q", s, again, out)
		}
		safe := SafeText(s)
		for _, r := range safe {
			if r < 0x20 || (0x7f <= r && r <= 0x9f) || EscapedRune(r) {
				t.Fatalf("SafeText(%q) = %q: holds %U", s, safe, r)
			}
		}
		if !utf8.ValidString(safe) || strings.ReplaceAll(out, `\\`, `\`) != safe {
			t.Fatalf("SafeText(%q) = %q: not Printable's %q with backslashes kept", s, safe, out)
		}
	})
}

func TestJSONKey(t *testing.T) {
	for in, want := range map[string]string{
		"plain":          "plain",
		`back\slash`:     `back\slash`,
		"ctl\x1b\n":      "ctl\x1b\n", // left for the JSON encoder's \u escapes
		"日本":             "日本",
		"bad\xffbyte":    `bad\xffbyte`,
		"\xe4\xbd":       `\xe4\xbd`,
		"ok\xc3\xa9\xc3": `ok` + "é" + `\xc3`,
	} {
		t.Run(in, func(t *testing.T) {
			if got := JSONKey(in); got != want {
				t.Errorf("JSONKey(%q) = %q, want %q", in, got, want)
			}
		})
	}
}

func BenchmarkPrintable(b *testing.B) {
	for name, s := range map[string]string{
		"plain":   "ratelimit:user:1234567:login",
		"unicode": "ratelimit:用户:😀:login",
		"escaped": "ratelimit:\x1b[31mred\x1b[0m:\xff",
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Printable(s)
			}
		})
	}
}

// plain8 lets escape skip 8 bytes at a time: it must say no for every byte
// Printable or SafeText would escape, wherever it is among the 8 and
// whatever its neighbours (a carry or borrow from one byte to the next
// must not hide another).
func TestPlain8EveryByteEverywhere(t *testing.T) {
	for _, fill := range []byte{' ', 'a', '~', 0x1f, 0x7f, 0xff} {
		for pos := range 8 {
			for b := range 256 {
				block := bytes.Repeat([]byte{fill}, 8)
				block[pos] = byte(b)
				for _, backslash := range []bool{true, false} {
					want := true
					for _, c := range block {
						want = want && 0x20 <= c && c <= 0x7e && (c != '\\' || !backslash)
					}
					if got := plain8(string(block), backslash); got != want {
						t.Errorf("plain8(%q, backslash %v) = %v, want %v", block, backslash, got, want)
					}
				}
			}
		}
	}
}
