package redistest

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// monitorTimeout bounds the wait for the next command a Monitor reads.
const monitorTimeout = 10 * time.Second

// Monitor is a MONITOR connection to a server: every command the server
// runs, those a script runs included, in the order it runs them. Tests use
// it to see what was sent, as the server received it.
type Monitor struct {
	conn net.Conn
	r    *bufio.Reader
}

// Monitor starts MONITOR on a connection of its own, closed when the test
// ends. What the server ran before Monitor returned is not seen.
func (s *Server) Monitor(t testing.TB) *Monitor {
	t.Helper()
	if s.TLS != nil {
		t.Fatal("redistest: Monitor does not speak TLS")
	}
	conn, err := net.DialTimeout("tcp", s.Addr, readyTimeout)
	if err != nil {
		t.Fatalf("redistest: MONITOR: %v", err)
	}
	t.Cleanup(func() { conn.Close() })
	m := &Monitor{conn: conn, r: bufio.NewReader(conn)}
	if s.Password != "" {
		m.send(t, "AUTH", s.Password)
	}
	m.send(t, "MONITOR")
	return m
}

// send writes one command and fails the test unless Redis answers +OK.
func (m *Monitor) send(t testing.TB, args ...string) {
	t.Helper()
	if _, err := m.conn.Write(command(args...)); err != nil {
		t.Fatalf("redistest: %s: %v", args[0], err)
	}
	if line := m.line(t); line != "+OK" {
		t.Fatalf("redistest: %s answered %q", args[0], line)
	}
}

// line reads one reply line, without its CRLF.
func (m *Monitor) line(t testing.TB) string {
	t.Helper()
	if err := m.conn.SetReadDeadline(time.Now().Add(monitorTimeout)); err != nil {
		t.Fatal(err)
	}
	line, err := m.r.ReadString('\n')
	if err != nil {
		t.Fatalf("redistest: MONITOR read: %v", err)
	}
	return strings.TrimSuffix(line, "\r\n")
}

// Next returns the next command named name (any case) that the server
// ran, skipping others, as its arguments (the name first, as it was sent),
// and whether a script ran it. It fails the test when none comes within
// 10s.
func (m *Monitor) Next(t testing.TB, name string) (args []string, byScript bool) {
	t.Helper()
	for {
		line := m.line(t)
		args, source, err := parseMonitorLine(line)
		if err != nil {
			t.Fatalf("redistest: MONITOR line %q: %v", line, err)
		}
		if len(args) > 0 && strings.EqualFold(args[0], name) {
			return args, source == "lua"
		}
	}
}

// Ran is one command a Monitor read: its arguments (the name first, as
// it was sent) and whether a script ran it.
type Ran struct {
	Args     []string
	ByScript bool
}

// Until returns every command the server ran up to the next one named
// name (any case), which it does not return: a test sends that one
// (ECHO, say) once what it watches is done, and gets all that ran before
// it. It fails the test when none comes within 10s of the last.
func (m *Monitor) Until(t testing.TB, name string) []Ran {
	t.Helper()
	var ran []Ran
	for {
		line := m.line(t)
		args, source, err := parseMonitorLine(line)
		if err != nil {
			t.Fatalf("redistest: MONITOR line %q: %v", line, err)
		}
		if len(args) > 0 && strings.EqualFold(args[0], name) {
			return ran
		}
		ran = append(ran, Ran{args, source == "lua"})
	}
}

// parseMonitorLine reads `+1700000000.123456 [0 127.0.0.1:5000] "SET" "k"
// "1"`: the source in brackets ("lua" for a script's commands) and the
// arguments, which Redis quotes with C escapes (\", \\, \n, \xNN).
func parseMonitorLine(line string) (args []string, source string, err error) {
	_, rest, ok := strings.Cut(line, " [")
	if !ok {
		return nil, "", fmt.Errorf("no [db source]")
	}
	where, rest, ok := strings.Cut(rest, "] ")
	if !ok {
		return nil, "", fmt.Errorf("no [db source]")
	}
	_, source, _ = strings.Cut(where, " ")
	for rest != "" {
		if rest[0] != '"' {
			return nil, "", fmt.Errorf("an argument not in quotes at %q", rest)
		}
		end := 1
		for end < len(rest) && rest[end] != '"' {
			if rest[end] == '\\' {
				end++
			}
			end++
		}
		if end >= len(rest) {
			return nil, "", fmt.Errorf("an unterminated argument")
		}
		arg, err := strconv.Unquote(rest[:end+1])
		if err != nil {
			return nil, "", err
		}
		args = append(args, arg)
		rest = strings.TrimPrefix(rest[end+1:], " ")
	}
	return args, source, nil
}
