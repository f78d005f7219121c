package redisclient_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/internal/redistest"
	"github.com/countertop/countertop/redisclient"
)

func TestConnectBadURL(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, want, secret string }{
		{"http://x", "--url is not a valid Redis URL (invalid URL scheme: http) — write it as redis://[user:password@]host:port/db", ""},
		{"redis://host:notaport", `invalid port ":notaport"`, ""},
		{"redis://host/zero", `invalid database number: "zero"`, ""},
		{"redis://host/0?colour=red", "unexpected option: colour", ""},
		{"redis://127.0.0.1:99999/0", "--url has port 99999, which does not exist — use a port from 1 to 65535, like 6379", ""},
		{"rediss://:s3cret@[::1]:0", "--url has port 0, which does not exist — use a port from 1 to 65535, like 6379", "s3cret"},
		// An unencoded '/' in the password makes url.Parse quote part of it.
		{"redis://user:pa/ss@host:1", "percent-encode", "pa/ss@"},
		// go-redis quotes the path, which here holds the end of the password.
		{"redis://:p@ss/w:rd@127.0.0.1:31010/0", "percent-encode", "w:rd"},
		{"redis+sentinel://:p@ss/w:rd@127.0.0.1:26379/0?master_name=m", "percent-encode", "w:rd"},
		// A URL with a password still says what is wrong elsewhere in it.
		{"redis://:s3cret@host/abc", `--url is not a valid Redis URL (invalid database number: "abc") — write it as redis://[user:password@]host:port/db`, "s3cret"},
		{"redis://user:s3cret@host/0?colour=red", "--url is not a valid Redis URL (unexpected option: colour) — write it as", "s3cret"},
		{"redis://:s3cret@host/0?dial_timeout=soon", `--url is not a valid Redis URL (invalid dial_timeout duration: "soon") — write it as`, "s3cret"},
		{"redis://:s3cret@host/0?pool_fifo=perhaps", `(invalid pool_fifo boolean: expected true/false/1/0 or an empty string, got "perhaps")`, "s3cret"},
		{"redis://host/0?db=abc", `(invalid database number: "abc")`, ""},
		{"redis://:s3cret@host/0?max_retries=many", `(invalid max_retries number: "many")`, "s3cret"},
		{"http://:s3cret@x", "--url is not a valid Redis URL (invalid URL scheme: http)", "s3cret"},
		{"redis://:s3cret@host:notaport", `--url is not a valid Redis URL (invalid port ":notaport" after host)`, "s3cret"},
		{"redis://:p%40ss%2Fw%3Ard@host/abc", `(invalid database number: "abc")`, "p%40ss"},
		{"redis://:p%40ss%2Fw%3Ard@host/abc", `(invalid database number: "abc")`, "w%3Ard"},
		{"redis://:p@QZ:w/JKrd@host/abc", `(invalid database number: "abc")`, "JKrd"},
		{"redis://:p@QZ:w/JKrd@host/abc", `(invalid database number: "abc")`, "QZ"},
		{"redis+sentinel://:s3cret@127.0.0.1:26379/abc?master_name=m", `(invalid database number: "abc")`, "s3cret"},
		// Unencoded, a '/', '?' or '#' ends the user info: the parsers
		// would quote the rest of the password as a path, an option or a
		// port, and Redis would be looked for at a host made of it.
		{"redis://:pa/XYss@host", "--url is not a valid Redis URL (if the user name or password has characters a URL reserves, like @, / or ?, percent-encode them: %40, %2F, %3F) — write it as redis://[user:password@]host:port/db", "XYss"},
		{"redis://:pa?XYss@host", "percent-encode", "XYss"},
		{"redis://u:99999#x@host", "percent-encode", "99999"},
		{"redis://u:6380#x@host", "percent-encode", "6380"},
		{"redis://:pa%zz@host", "percent-encode", "zz"},
		{"redis:/user:s3cret@host", "percent-encode", "s3cret"},
		{"redis:///:XYs3cret@host:7000/0", "percent-encode", "XYs3cret"}, // three slashes: no host before the user info
		{"redis:///u:XYs3cret@host", "percent-encode", "XYs3cret"},
		{"redis://:99999?x=XQs3cret@host/0", "percent-encode", "XQs3cret"}, // a '?' in the password, not options
		{"redis://:pw/0?x=XQs3cret@127.0.0.1:7000/0", "percent-encode", "XQs3cret"},
		{"redis://:XQp@zzq#wqx@127.0.0.1:7000/0", "percent-encode", "zzq"}, // go-redis drops a fragment: the host would be "zzq"
		{"redis://:XQpw@127.0.0.1:5555#tail@127.0.0.1:7000/0", "percent-encode", "XQpw"},
		{"redis+sentinel://:pw/0?x=XQs3cret@127.0.0.1:7000", "percent-encode", "XQs3cret"},
		{"unix://:p@/XQss@/tmp/nosuch.sock", "percent-encode", "XQss"}, // the password p@/XQss: which path is the socket?
		{"unix://:pw/XYsecret@/tmp/nosuch.sock", "percent-encode", "XYsecret"},
		{"redis+sentinel://:QWpa/ss:99999@host:26379/0?master_name=m", "percent-encode", "QWpa"},
	} {
		t.Run(caseName(tc.url, tc.secret), func(t *testing.T) {
			checkSentence(t, connectErr(t, redisclient.Options{URL: tc.url}), tc.want, tc.secret)
		})
	}
}

// A URL from REDIS_URL or the config file is named as such.
func TestConnectBadURLSaysWhereItCameFrom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ url, from, want string }{
		{"redis://host/zero", "REDIS_URL", `REDIS_URL is not a valid Redis URL (invalid database number: "zero") — write it as redis://[user:password@]host:port/db, or rediss:// for TLS`},
		{"redis://127.0.0.1:99999/0", "countertop.toml:3: url", "countertop.toml:3: url has port 99999, which does not exist — use a port from 1 to 65535, like 6379"},
		{"redis://:pa/ss@host", "countertop.toml:3: url", "countertop.toml:3: url is not a valid Redis URL (if the user name or password has characters a URL reserves"},
		{"redis://host/zero", "", `--url is not a valid Redis URL (invalid database number: "zero")`},
	} {
		t.Run(caseName(tc.url, tc.from), func(t *testing.T) {
			checkSentence(t, connectErr(t, redisclient.Options{URL: tc.url, URLFrom: tc.from}), tc.want, "")
		})
	}
}

// A password may hold any character: '@' and ':' as they are, the ones
// that end the user info percent-encoded.
func TestConnectPasswordWithReservedCharacters(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t, "--requirepass", "p@ss:w/rd?#")
	for _, url := range []string{
		"redis://:p@ss:w%2Frd%3F%23@" + s.Addr + "/0",
		"redis://:p%40ss%3Aw%2Frd%3F%23@" + s.Addr,
		"redis+sentinel://:p@ss:w%2Frd%3F%23@" + s.Addr + "/0?master_name=m", // only parsed: no Sentinel there
		// An '@' in the options is no user info.
		"redis://:p%40ss%3Aw%2Frd%3F%23@" + s.Addr + "/0?client_name=me@laptop",
		"redis+sentinel://:p%40ss%3Aw%2Frd%3F%23@" + s.Addr + "/0?master_name=a@b",
	} {
		t.Run(caseName(strings.ReplaceAll(url, s.Addr, "ADDR")), func(t *testing.T) {
			c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: url, DialTimeout: time.Second})
			if strings.HasPrefix(url, "redis+sentinel") {
				if err == nil || strings.Contains(err.Error(), "not a valid Redis URL") {
					t.Errorf("Connect(%s): %v; want it parsed, and no Sentinel found", url, err)
				}
				return
			}
			if err != nil {
				t.Errorf("Connect(%s): %v", url, err)
				return
			}
			c.Close()
		})
	}
}

// An '@' after the host, in the options or in a socket's path, is no user
// info: such URLs are taken as they are.
func TestConnectURLWithAnAtAfterTheHost(t *testing.T) {
	t.Parallel()
	s := redistest.Start(t)
	for _, url := range []string{
		s.URL() + "?client_name=me@laptop",
		"redis://" + s.Addr + "?client_name=me@laptop", // no database path
		"redis://:@" + s.Addr + "?client_name=me@laptop",
	} {
		t.Run(caseName(strings.ReplaceAll(url, s.Addr, "ADDR")), func(t *testing.T) {
			c, err := redisclient.Connect(context.Background(), redisclient.Options{URL: url})
			if err != nil {
				t.Fatalf("%s: %v", url, err)
			}
			c.Close()
		})
	}
	for _, url := range []string{"unix://u:p@/tmp/nosuch/a@b.sock", "unix:///tmp/nosuch/a@b.sock"} {
		t.Run(caseName(url), func(t *testing.T) {
			checkSentence(t, connectErr(t, redisclient.Options{URL: url}), "no Redis socket at /tmp/nosuch/a@b.sock", "")
		})
	}
	checkSentence(t, connectErr(t, redisclient.Options{URL: "unix:///tmp/nosuch/a@/b.sock"}), "no Redis socket at /tmp/nosuch/a@/b.sock", "")
}
