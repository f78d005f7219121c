package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
)

// The commands per layout that the README's pages give are the bounds
// redisclient reads with (model's constants), so that the cost a user is
// told is the cost paid.
func TestReadmeSaysTheBoundsTheReadsUse(t *testing.T) {
	for page, wants := range map[string][]string{
		"docs/layouts.md": {
			"GETRANGE 0 " + strconv.Itoa(model.MaxRaw-1) + "`",
			"`LRANGE 0 " + strconv.Itoa(model.MaxListScan-1) + "` for a list of " + formatThousands(model.MaxListScan) + " entries or fewer",
			"`HGETALL` (" + strconv.Itoa(model.MaxHashFields) + " fields or fewer)",
		},
		"docs/modes.md": {
			"GETRANGE key 0 " + strconv.Itoa(model.MaxRaw-1) + "`",
		},
		"docs/limits.md": {
			"GETRANGE 0 " + strconv.Itoa(model.MaxRaw-1) + "`",
			"hash of more than " + strconv.Itoa(model.MaxHashFields) + " fields",
			strconv.Itoa(model.MaxRaw>>10) + " KiB or more",
		},
	} {
		text := readPage(t, page)
		for _, want := range wants {
			if !strings.Contains(text, want) {
				t.Errorf("%s does not say %q", page, want)
			}
		}
	}
	for _, page := range readmePages(t) {
		text := readPage(t, page)
		for _, stale := range []string{"GETRANGE 0 511", "GETRANGE key 0 511"} {
			if strings.Contains(text, stale) {
				t.Errorf("%s says %q, which redisclient does not send", page, stale)
			}
		}
	}
}

// readmePages are README.md and the pages under docs/ it links.
func readmePages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"README.md"}, pages...)
}

// readPage is the text of page with every run of spaces and line breaks
// one space: a claim reads the same wherever its lines break.
func readPage(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(strings.Fields(string(b)), " ")
}

// formatThousands is n with a comma between thousands, as the README
// writes numbers: 1,000.
func formatThousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
