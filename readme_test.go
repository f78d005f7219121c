package main

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/countertop/countertop/internal/cli"
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

// Every relative link of the README, its pages and the two other top-level
// documents leads somewhere: to a file that exists and, after a #, to a
// heading of that page, so that a section moved to another page cannot
// leave a link to where it was.
func TestReadmeLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{} // page -> its headings' anchors
	anchorsOf := func(page string) map[string]bool {
		if anchors[page] == nil {
			anchors[page] = headingAnchors(readFile(t, page))
		}
		return anchors[page]
	}
	links := 0
	for _, page := range append(readmePages(t), "ARCHITECTURE.md", "BENCHMARKS.md") {
		for _, dest := range linkDestinations(readFile(t, page)) {
			if strings.Contains(dest, "://") || strings.HasPrefix(dest, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(dest, "#")
			target := page
			if path != "" {
				unescaped, err := url.PathUnescape(path)
				if err != nil {
					t.Errorf("%s: link %q: %v", page, dest, err)
					continue
				}
				target = filepath.Join(filepath.Dir(page), unescaped)
				if _, err := os.Stat(target); err != nil {
					t.Errorf("%s: link %q: no file %s", page, dest, target)
					continue
				}
			}
			if anchor != "" && !anchorsOf(target)[anchor] {
				t.Errorf("%s: link %q: %s has no heading whose anchor is #%s", page, dest, target, anchor)
			}
		}
	}
	if links < 20 {
		t.Errorf("found %d relative links, fewer than the pages hold: the link reader is broken", links)
	}
}

// Every command line the README and its pages give, in their sh blocks,
// parses: countertop (or go run .) with its flags and --help after them
// prints the command's help and exits 0, which it does only when each
// flag before --help is one of that command's, with a value where it
// needs one. Nothing connects to a server.
func TestReadmeCommandsParse(t *testing.T) {
	var all []string
	for _, page := range readmePages(t) {
		for _, block := range shBlocks(readFile(t, page)) {
			for _, args := range countertopCommands(block) {
				all = append(all, strings.Join(args, " "))
				t.Run(page+": "+strings.Join(args, " "), func(t *testing.T) {
					var stdout, stderr bytes.Buffer
					code := cli.Run(append(slices.Clip(args), "--help"), &stdout, &stderr)
					if code != 0 || stderr.Len() > 0 || stdout.Len() == 0 {
						t.Errorf("countertop %s --help: exit %d, stderr %q, %d bytes of help", strings.Join(args, " "), code, stderr.String(), stdout.Len())
					}
				})
			}
		}
	}
	// The reader of the blocks finds the commands behind environment
	// variables, in pipes, after a redirect, in <(...) and over a \ line.
	for _, want := range []string{
		"demo",
		"--url rediss://redis.internal:6380/0 --tls-ca ca.pem",
		"snapshot --format csv",
		"completion bash",
		"completion zsh",
		"--sentinel-master mymaster --sentinel 10.0.0.7:26379 --sentinel 10.0.0.8:26379",
		"check --pattern ratelimit:* --pattern quota:* --min-keys 1",
	} {
		if !slices.Contains(all, want) {
			t.Errorf("the sh blocks' commands do not include countertop %s: the block reader is broken", want)
		}
	}
}

// The block reader itself: what a line of shell gives countertop.
func TestCountertopCommands(t *testing.T) {
	for _, tc := range []struct {
		block string
		want  [][]string
	}{
		{"countertop incr k --by 5   # k = 5", [][]string{{"incr", "k", "--by", "5"}}},
		{`A=1 B="x y" countertop --url 'a b' | jq '.x | .y' > out.csv`, [][]string{{"--url", "a b"}}},
		{"source <(countertop completion bash)   # in ~/.bashrc", [][]string{{"completion", "bash"}}},
		{"countertop check || page-someone && countertop snapshot 2>/dev/null", [][]string{{"check"}, {"snapshot"}}},
		{"X=... \\\n  countertop --sentinel a:1 \\\n  --sentinel b:2", [][]string{{"--sentinel", "a:1", "--sentinel", "b:2"}}},
		{"go run . demo     # the dashboard", [][]string{{"demo"}}},
		{"make man && man -l bin/countertop.1\n# countertop --not-a-command", nil},
	} {
		t.Run(tc.block, func(t *testing.T) {
			got := countertopCommands(tc.block)
			if !slices.EqualFunc(got, tc.want, slices.Equal[[]string]) {
				t.Errorf("countertopCommands(%q) = %q, want %q", tc.block, got, tc.want)
			}
		})
	}
}

// Anchors as GitHub makes them from headings.
func TestHeadingAnchors(t *testing.T) {
	got := headingAnchors("# Layouts: how a key is read\n## The overview panel (`o`)\n" +
		"### At scale: 5,000 changes/s over 100,000 keys (issue 6, target 4)\n## Keys\n## Keys\n" +
		"```sh\n# not a heading\n```\n")
	for _, want := range []string{
		"layouts-how-a-key-is-read", "the-overview-panel-o",
		"at-scale-5000-changess-over-100000-keys-issue-6-target-4", "keys", "keys-1",
	} {
		if !got[want] {
			t.Errorf("no anchor %q among %v", want, got)
		}
	}
	if got["not-a-heading"] {
		t.Error("a comment in a code block was taken for a heading")
	}
}

// readFile is page's text.
func readFile(t *testing.T, page string) string {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fence opens or closes a fenced code block; its group is the info string.
var fence = regexp.MustCompile("^\\s*(?:```|~~~)\\s*(\\S*)")

// prose is text's lines outside fenced code blocks, and shBlocks the
// contents of its sh (or bash, shell) blocks.
func prose(text string) []string {
	var out []string
	in := false
	for _, line := range strings.Split(text, "\n") {
		if fence.MatchString(line) {
			in = !in
			continue
		}
		if !in {
			out = append(out, line)
		}
	}
	return out
}

func shBlocks(text string) []string {
	var blocks []string
	var block []string
	in, sh := false, false
	for _, line := range strings.Split(text, "\n") {
		if m := fence.FindStringSubmatch(line); m != nil {
			if in && sh {
				blocks = append(blocks, strings.Join(block, "\n"))
			}
			in, sh, block = !in, !in && slices.Contains([]string{"sh", "bash", "shell"}, m[1]), nil
			continue
		}
		if in {
			block = append(block, line)
		}
	}
	return blocks
}

// withoutCodeSpans is text with its `code spans` left out: a link or a
// heading's markup inside one is not markup.
func withoutCodeSpans(text string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(text, '`')
		if i < 0 {
			return b.String() + text
		}
		b.WriteString(text[:i])
		n := len(text[i:]) - len(strings.TrimLeft(text[i:], "`"))
		ticks, rest := text[i:i+n], text[i+n:]
		end := strings.Index(rest, ticks)
		for end >= 0 && strings.HasPrefix(rest[end+n:], "`") { // a longer run is not the closer
			next := strings.Index(rest[end+n:], ticks)
			if next < 0 {
				end = -1
				break
			}
			end += n + next
		}
		if end < 0 { // no closer: the backticks are text
			b.WriteString(ticks)
			text = rest
			continue
		}
		text = rest[end+n:]
	}
}

var (
	inlineLink = regexp.MustCompile(`\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)`)
	linkDef    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+"[^"]*")?\s*$`)
	heading    = regexp.MustCompile(`^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$`)
	linkText   = regexp.MustCompile(`!?\[([^\]]*)\]\([^)]*\)`)
)

// linkDestinations are the destinations of text's links and images, inline
// and defined, outside code.
func linkDestinations(text string) []string {
	body := withoutCodeSpans(strings.Join(prose(text), "\n"))
	var dests []string
	for _, m := range inlineLink.FindAllStringSubmatch(body, -1) {
		dests = append(dests, m[1])
	}
	for _, m := range linkDef.FindAllStringSubmatch(body, -1) {
		dests = append(dests, m[1])
	}
	return dests
}

// headingAnchors are the anchors GitHub gives text's headings: the text
// as shown (a link's text, a code span's content), lower-cased, every
// character but letters, digits, spaces, - and _ left out, spaces made -,
// and -1, -2, ... after a repeated one.
func headingAnchors(text string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	for _, line := range prose(text) {
		m := heading.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		shown := linkText.ReplaceAllString(m[1], "$1")
		var b strings.Builder
		for _, r := range strings.ToLower(shown) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case unicode.IsLetter(r), unicode.IsNumber(r), r == '-', r == '_':
				b.WriteRune(r)
			}
		}
		anchor := b.String()
		if n := seen[anchor]; n > 0 {
			seen[anchor]++
			anchor += "-" + strconv.Itoa(n)
		} else {
			seen[anchor] = 1
		}
		anchors[anchor] = true
	}
	return anchors
}

// countertopCommands are the arguments of each countertop command (or
// go run .) in block, a shell script: lines continued with \ are joined,
// comments, environment assignments before the command, redirects and
// whatever follows |, ||, &&, ; or ( are left out, and quotes are read as
// the shell reads them.
func countertopCommands(block string) [][]string {
	var cmds [][]string
	for _, words := range simpleCommands(strings.ReplaceAll(block, "\\\n", " ")) {
		for len(words) > 0 && envAssignment.MatchString(words[0]) {
			words = words[1:]
		}
		switch {
		case len(words) > 0 && words[0] == "countertop":
			cmds = append(cmds, words[1:])
		case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == ".":
			cmds = append(cmds, words[3:])
		}
	}
	return cmds
}

var envAssignment = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// simpleCommands splits script into its simple commands, each a list of
// words with quotes removed, leaving out comments and redirects' targets.
func simpleCommands(script string) [][]string {
	var cmds [][]string
	var words []string
	var word strings.Builder
	inWord, skipNext := false, false
	endWord := func() {
		if inWord {
			if !skipNext {
				words = append(words, word.String())
			}
			skipNext = false
		}
		word.Reset()
		inWord = false
	}
	endCommand := func() {
		endWord()
		if len(words) > 0 {
			cmds = append(cmds, words)
		}
		words = nil
	}
	for i := 0; i < len(script); i++ {
		c := script[i]
		switch {
		case c == '\'':
			j := strings.IndexByte(script[i+1:], '\'')
			if j < 0 {
				j = len(script) - i - 1
			}
			word.WriteString(script[i+1 : i+1+j])
			inWord, i = true, i+1+j
		case c == '"':
			inWord = true
			for i++; i < len(script) && script[i] != '"'; i++ {
				if script[i] == '\\' && i+1 < len(script) && strings.IndexByte("\"\\$`", script[i+1]) >= 0 {
					i++
				}
				word.WriteByte(script[i])
			}
		case c == '\\' && i+1 < len(script):
			word.WriteByte(script[i+1])
			inWord, i = true, i+1
		case c == '#' && !inWord:
			for i < len(script) && script[i] != '\n' {
				i++
			}
			endCommand()
		case c == '\n' || c == ';' || c == '|' || c == '&' || c == '(' || c == ')':
			endCommand()
		case c == '$' && i+1 < len(script) && script[i+1] == '(':
			endCommand()
			i++
		case c == '<' && i+1 < len(script) && script[i+1] == '(':
			endCommand()
			i++
		case c == '>' || c == '<':
			if inWord && strings.Trim(word.String(), "0123456789") == "" {
				word.Reset() // 2>file: the 2 is the redirect's
				inWord = false
			}
			endWord()
			for i+1 < len(script) && (script[i+1] == '>' || script[i+1] == '&') {
				i++
			}
			skipNext = true
		case c == ' ' || c == '\t':
			endWord()
		default:
			word.WriteByte(c)
			inWord = true
		}
	}
	endCommand()
	return cmds
}
