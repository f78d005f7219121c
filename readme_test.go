package main

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/model"
)

// The README's commands per layout are the bounds redisclient reads with
// (model's constants), so that the cost a user is told is the cost paid.
func TestReadmeSaysTheBoundsTheReadsUse(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.Join(strings.Fields(string(b)), " ") // as read, whatever the line breaks
	for _, want := range []string{
		"GETRANGE 0 " + strconv.Itoa(model.MaxRaw-1) + "`",
		"GETRANGE key 0 " + strconv.Itoa(model.MaxRaw-1) + "`",
		"`LRANGE 0 " + strconv.Itoa(model.MaxListScan-1) + "` for a list of " + formatThousands(model.MaxListScan) + " entries or fewer",
		"`HGETALL` (" + strconv.Itoa(model.MaxHashFields) + " fields or fewer)",
		"hash of more than " + strconv.Itoa(model.MaxHashFields) + " fields",
		strconv.Itoa(model.MaxRaw>>10) + " KiB or more",
	} {
		if !strings.Contains(readme, want) {
			t.Errorf("README.md does not say %q", want)
		}
	}
	for _, stale := range []string{"GETRANGE 0 511", "GETRANGE key 0 511"} {
		if strings.Contains(readme, stale) {
			t.Errorf("README.md says %q, which redisclient does not send", stale)
		}
	}
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
