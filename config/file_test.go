package config

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"github.com/countertop/countertop/model"
)

// keyLinesCases are TOML documents whose keys sit on known lines, written to
// trip a scanner that does not follow TOML's strings, arrays and comments.
var keyLinesCases = []struct {
	name string
	src  string
	want []int
}{
	{"empty", "", nil},
	{"tables and arrays of tables", "a = 1\n[redis]\nurl = \"x\"\n\n[[rule]]\npattern = \"a\"\n[[rule]]\npattern = \"b\"\n", []int{1, 2, 3, 5, 6, 7, 8}},
	{"comments", "# x = 1\n[t] # [u]\n  k = 2 # k = 3\n", []int{2, 3}},
	{"dotted and quoted keys", "a.b = 1\n\"c = d\".'e#f' = 2\n[x . \"y]\"]\nz = 3\n", []int{1, 2, 3, 4}},
	{"multi-line array", "a = [\n  \"x\", # not = a key\n  'y',\n]\nb = 1\n", []int{1, 5}},
	{"inline tables", "a = { b = 1, c = { d = 2 }, e = [{ f = 3 }, {}] }\ng = {}\nh = 4\n", []int{1, 1, 1, 1, 1, 1, 2, 3}},
	{"multi-line basic string", "a = \"\"\"\n[b]\nc = \"d\"\n\"\"\"\ne = 1\n", []int{1, 5}},
	{"multi-line literal string", "a = '''\nb = 1\\'''\nc = 2\n", []int{1, 3}},
	{"escapes", "a = \"q\\\"[b]\\\\\"\nc = \"\"\"x\\\n  y\"\"\"\nd = 1\n", []int{1, 2, 4}},
	{"quotes ending a multi-line string", "a = \"\"\"x\"\"\"\"\"\nb = '''y'''''\nc = 1\n", []int{1, 2, 3}},
	{"empty strings", "a = \"\"\nb = ''\nc = [\"\", '']\nd = 1\n", []int{1, 2, 3, 4}},
	{"CRLF and BOM", "\ufeffa = 1\r\n\r\n[t]\r\nb = 2\r\n", []int{1, 3, 4}},
	{"no final newline", "[t]\nb = 2", []int{1, 2}},
}

func TestKeyLines(t *testing.T) {
	for _, tc := range keyLinesCases {
		t.Run(tc.name, func(t *testing.T) {
			var doc map[string]any
			md, err := toml.Decode(tc.src, &doc)
			if err != nil {
				t.Fatalf("test document is not valid TOML: %v", err)
			}
			got := keyLines(tc.src)
			if !slices.Equal(got, tc.want) {
				t.Errorf("keyLines = %v, want %v", got, tc.want)
			}
			if len(got) != len(md.Keys()) {
				t.Errorf("keyLines found %d keys, toml found %d: %v", len(got), len(md.Keys()), md.Keys())
			}
		})
	}
}

// FuzzKeyLines checks that keyLines finds one line per key, in step with
// toml.MetaData.Keys, for every document the TOML decoder accepts.
func FuzzKeyLines(f *testing.F) {
	for _, tc := range keyLinesCases {
		f.Add(tc.src)
	}
	f.Fuzz(func(t *testing.T, src string) {
		var doc map[string]any
		md, err := toml.Decode(src, &doc)
		if err != nil {
			return
		}
		lines := keyLines(src)
		if len(lines) != len(md.Keys()) {
			t.Fatalf("keyLines found %d keys %v, toml found %d: %v", len(lines), lines, len(md.Keys()), md.Keys())
		}
		if !slices.IsSorted(lines) {
			t.Fatalf("keyLines out of order: %v", lines)
		}
	})
}

// TestSyntaxErrorLine checks that a TOML syntax error names the line a
// person has to fix, even when the decoder stops at the newline ending it.
func TestSyntaxErrorLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
	}{
		{"unclosed table header alone", "[redis\n", 1},
		{"unclosed table header at the end", "[redis", 1},
		{"unclosed table header", "[redis\nurl = \"redis://h:7000\"\n", 1},
		{"unclosed array-of-tables header", "[redis]\nmode = \"poll\"\n[[rule]\npattern = \"a:*\"\n", 3},
		{"unclosed header, CRLF", "[redis\r\nmode = \"poll\"\r\n", 1},
		{"unclosed header after a BOM", "\ufeff\n[redis\nmode = \"poll\"\n", 2},
		{"key without a value", "[redis]\nmode =\ninterval = \"1s\"\n", 2},
		{"unterminated string", "[redis]\nurl = \"redis://h:7000\nmode = \"poll\"\n", 2},
		{"unclosed inline table", "[redis]\nx = { a = 1\n", 2},
		{"value not quoted", "[redis]\ninterval = 1s\n", 2},
		{"after a multi-line string", "a = \"\"\"\n[b\n\"\"\"\n[c\n", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := (&Config{}).applyTOML("c.toml", tc.src)
			want := fmt.Sprintf("c.toml:%d: not valid TOML: ", tc.line)
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error = %v\nwant it to start %q", err, want)
			}
		})
	}
}

// TestRuleKeys keeps ruleKeys, which "did you mean" offers for a rule's and
// [defaults]' keys, the keys setRule takes, pattern first.
func TestRuleKeys(t *testing.T) {
	if ruleKeys[0] != "pattern" {
		t.Errorf("ruleKeys begins with %q, not pattern", ruleKeys[0])
	}
	for _, k := range ruleKeys {
		if err := setRule(&model.Rule{}, k, nil); errors.Is(err, errUnknownKey) {
			t.Errorf("setRule does not know %q", k)
		}
	}
}
