package model

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// caseName is a subtest's name for a case given by a string: never empty,
// short, and with spaces, control and invalid bytes spelled out (t.Run
// would fold " 1" and "\t1" into the same "_1"), so that
// `go test -run 'TestX/name'` picks out one case.
func caseName(s string) string {
	if s == "" {
		return "empty"
	}
	suffix := ""
	if len(s) > 24 {
		cut := 16
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s, suffix = s[:cut], fmt.Sprintf("…(%d_bytes)", len(s))
	}
	q := strconv.Quote(s)
	return strings.ReplaceAll(q[1:len(q)-1], " ", "␣") + suffix
}
