package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/countertop/countertop/internal/redistest"
)

// A redis-cli user's habits reach the server they name: host:port for
// --url, -h -p -n, -s, -a and --user; and the password is never echoed.
func TestRedisCLIHabits(t *testing.T) {
	for _, v := range []string{"REDIS_URL", "REDIS_USERNAME", "REDIS_PASSWORD"} {
		t.Setenv(v, "")
	}
	sock, err := os.MkdirTemp("", "ct-sock") // a socket's path is limited to about 100 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sock) })
	sock = filepath.Join(sock, "redis.sock")
	s := redistest.Start(t, "--requirepass", "pw", "--unixsocket", sock, "--unixsocketperm", "700")
	s.Do(t, "ACL", "SETUSER", "dash", "on", ">s3cret", "~*", "+@all")
	s.Do(t, "SET", "ratelimit:db0", "1", "EX", "100")
	s.Do(t, "SET", "ratelimit:db1", "2", "EX", "100")
	s.Do(t, "MOVE", "ratelimit:db1", "1")
	port := strconv.Itoa(s.Port)
	config := writeFile(t, "countertop.toml", "")

	for _, tc := range []struct {
		name string
		args []string
		want string // a line of the snapshot
	}{
		{"--url host:port", []string{"--url", "127.0.0.1:" + port, "-a", "pw"}, "ratelimit:db0,"},
		{"--url :port", []string{"--url", ":" + port, "--pass", "pw"}, "ratelimit:db0,"},
		{"-u", []string{"-u", "redis://127.0.0.1:" + port + "/1", "-a", "pw"}, "ratelimit:db1,"},
		{"-h -p -n --user -a", []string{"-h", "127.0.0.1", "-p", port, "-n", "1", "--user", "dash", "-a", "s3cret"}, "ratelimit:db1,"},
		{"-p alone", []string{"-p", port, "-a", "pw"}, "ratelimit:db0,"},
		{"-s", []string{"-s", sock, "-a", "pw"}, "ratelimit:db0,"},
		{"-s -n --user -a", []string{"-s", sock, "-n", "1", "--user", "dash", "-a", "s3cret"}, "ratelimit:db1,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"snapshot", "--config", config, "--format", "csv", "--pattern", "ratelimit:*"}, tc.args...)
			code, out, errOut := run(args...)
			if code != exitOK || !strings.Contains(out, "\n"+tc.want) || strings.Count(out, "\n") != 2 {
				t.Errorf("%q: exit %d, stderr %q, stdout:\n%s\nwant the one row of %s", args, code, errOut, out, tc.want)
			}
		})
	}

	code, out, errOut := run("check", "--config", config, "-p", port, "--user", "dash", "-a", "hunter2")
	if code != exitFailed || out != "" || !strings.HasPrefix(errOut, "countertop: could not check: ") || strings.Contains(errOut, "hunter2") {
		t.Errorf("a wrong -a: exit %d, stdout %q, stderr %q; want exit 2 and a sentence without the password", code, out, errOut)
	}
	code, _, errOut = run("check", "--config", config, "--url", s.URL(), "-p", port)
	if want := "countertop: -p cannot go with --url, which names the host, port and database: give one or the other\n"; code != exitFailed || errOut != want {
		t.Errorf("--url with -p: exit %d, stderr %q, want %q", code, errOut, want)
	}
	// redis-cli's -h is the host, so help is --help; -h alone says so.
	code, _, errOut = run("-h")
	if want := "countertop: -h needs a host, as in redis-cli (-h HOST): for help, run 'countertop --help'\n"; code != exitFailed || errOut != want {
		t.Errorf("-h alone: exit %d, stderr %q, want %q", code, errOut, want)
	}
}
