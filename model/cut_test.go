package model

import (
	"strings"
	"testing"
)

// A name too long for its width keeps its beginning and its end, where the
// keys of a pattern differ, in at most width cells, wide characters and
// emoji counted as two.
func TestCutMiddleKeepsBothEnds(t *testing.T) {
	base := "ratelimit:api:POST:/v2/organizations/projects/deployments/rollback:user:"
	for width := range 80 {
		for _, s := range []string{base + "1001", "日本語:" + base + "😀😀:1002", "日本語:" + strings.Repeat("語", 40)} {
			got := CutMiddle(s, width)
			if Cells(got) > width || strings.Contains(got, "…") != (width > 0 && Cells(s) > width) {
				t.Errorf("CutMiddle(%q, %d) = %q (%d cells)", s, width, got, Cells(got))
			}
		}
	}
	if got, want := CutMiddle(base+"1001", 41), "ratelimit:api:POST:/…s/rollback:user:1001"; got != want {
		t.Errorf("CutMiddle = %q, want %q", got, want)
	}
	if got := CutMiddle("short", 5); got != "short" {
		t.Errorf("a name that fits is cut: %q", got)
	}
	if got, want := Cells("日本😀a"), 7; got != want {
		t.Errorf("Cells = %d, want %d", got, want)
	}
}

// A name cut in its middle loses whole escapes, never part of one: what is
// left of "\e[31m" would read as the text "e[31m", or "31m".
func TestCutMiddleKeepsEscapesWhole(t *testing.T) {
	evil := Printable("ratelimit:evil:\x1b[31mRED")
	for width := 3; width < Cells(evil); width++ {
		if _, right, _ := strings.Cut(CutMiddle(evil, width), "…"); strings.HasPrefix(right, "31m") || strings.HasPrefix(right, "[31m") || strings.HasPrefix(right, "1m") {
			t.Errorf("CutMiddle(%q, %d) leaves part of the control sequence: %q", evil, width, right)
		}
	}
	for _, raw := range []string{"ratelimit:evil:\x1b[31mRED\n", "a\xffb\u202ec:\\d\x00e", "日本\x7f語:\U000e0041x"} {
		t.Run(raw, func(t *testing.T) {
			key := Printable(raw)
			// Each side of the cut is the escaped form of a part of the name.
			isPrefix := func(p string) bool {
				for k := 0; k <= len(raw); k++ {
					if Printable(raw[:k]) == p {
						return true
					}
				}
				return false
			}
			isSuffix := func(p string) bool {
				for k := 0; k <= len(raw); k++ {
					if Printable(raw[k:]) == p {
						return true
					}
				}
				return false
			}
			for width := 3; width < Cells(key); width++ {
				got := CutMiddle(key, width)
				left, right, _ := strings.Cut(got, "…")
				if Cells(got) > width || !isPrefix(left) || !isSuffix(right) {
					t.Errorf("CutMiddle(%q, %d) = %q: a side is not the escaped form of part of the name", key, width, got)
				}
			}
		})
	}
}

// A name cut again, narrower, as the snapshot table cuts a row when it
// reads it and then to fit the terminal, still fits and still keeps a
// beginning and an end of the name itself.
func TestCutMiddleTwice(t *testing.T) {
	key := Printable("ratelimit:" + strings.Repeat("tenant-\x1b", 50) + "日本:42")
	for wide := 3; wide < 120; wide += 7 {
		once := CutMiddle(key, wide)
		for narrow := 3; narrow <= wide; narrow++ {
			got := CutMiddle(once, narrow)
			left, right, _ := strings.Cut(got, "…")
			if Cells(got) > narrow || !strings.HasPrefix(key, left) || !strings.HasSuffix(key, right) || strings.Contains(right, "…") {
				t.Fatalf("cut to %d then %d: %q", wide, narrow, got)
			}
		}
	}
}
