package config_test

import (
	"strings"
	"testing"
)

// host:port, as redis-cli users give a server, is redis://host:port/0,
// from every source; the local host when only the port is given.
func TestHostPortIsARedisURL(t *testing.T) {
	for typed, want := range map[string]string{
		"localhost:6380":   "redis://localhost:6380/0",
		":6380":            "redis://127.0.0.1:6380/0",
		"[::1]:6380":       "redis://[::1]:6380/0",
		"10.0.0.5:7000":    "redis://10.0.0.5:7000/0",
		"redis.internal:1": "redis://redis.internal:1/0",
	} {
		t.Run(typed, func(t *testing.T) {
			c, err := load(t, nil, "--url", typed)
			if err != nil || c.Redis.URL != want || c.Redis.URLFrom != "--url" {
				t.Errorf("--url %s: URL %q from %q, %v; want %q from --url", typed, c.Redis.URL, c.Redis.URLFrom, err, want)
			}
		})
	}
	if c, err := load(t, map[string]string{"REDIS_URL": "cache:6381"}); err != nil || c.Redis.URL != "redis://cache:6381/0" {
		t.Errorf("REDIS_URL=cache:6381: %q, %v", c.Redis.URL, err)
	}
	file := writeFile(t, t.TempDir(), "c.toml", "[redis]\nurl = \"cache:6382\"\n")
	if c, err := load(t, nil, "--config", file); err != nil || c.Redis.URL != "redis://cache:6382/0" {
		t.Errorf("url = \"cache:6382\": %q, %v", c.Redis.URL, err)
	}
	for typed, want := range map[string]string{
		"localhost:abc": `--url: "localhost:abc" has port abc, which does not exist (use a port from 1 to 65535, like 6379)`,
		":70000":        `--url: ":70000" has port 70000, which does not exist (use a port from 1 to 65535, like 6379)`,
		"localhost":     `--url: "localhost" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`,
		"me:pw@host:1":  `--url: "me:***@host:1" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`,
		"localhost:1/2": `--url: "localhost:1/2" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`,
	} {
		t.Run(typed, func(t *testing.T) {
			if _, err := load(t, nil, "--url", typed); err == nil || err.Error() != want {
				t.Errorf("--url %s: %v\nwant %s", typed, err, want)
			}
		})
	}
}

// redis-cli's -h, -p, -s, -n, -a, --user and -u mean what they mean there.
// -h, -p and -n replace those of the URL the environment or the file
// gives, so that -n 3 is database 3 of the server configured.
func TestRedisCLIFlags(t *testing.T) {
	for _, tc := range []struct {
		name           string
		env            map[string]string
		args           []string
		url, user, pwd string
	}{
		{"-u", nil, []string{"-u", "redis://h:7000/1"}, "redis://h:7000/1", "", ""},
		{"-u host:port", nil, []string{"-u", "h:7000"}, "redis://h:7000/0", "", ""},
		{"-h", nil, []string{"-h", "redis.internal"}, "redis://redis.internal:6379/0", "", ""},
		{"-p", nil, []string{"-p", "6380"}, "redis://127.0.0.1:6380/0", "", ""},
		{"-n", nil, []string{"-n", "2"}, "redis://127.0.0.1:6379/2", "", ""},
		{"-h -p -n", nil, []string{"-h", "10.0.0.5", "-p", "7000", "-n", "3"}, "redis://10.0.0.5:7000/3", "", ""},
		{"-h IPv6", nil, []string{"-h", "::1", "-p", "7000"}, "redis://[::1]:7000/0", "", ""},
		{"-n of the environment's server", map[string]string{"REDIS_URL": "rediss://:secret@prod:7000/1?db=1&dial_timeout=3s"}, []string{"-n", "4"},
			"rediss://:secret@prod:7000/4?dial_timeout=3s", "", ""},
		{"-h keeps the environment's port", map[string]string{"REDIS_URL": "redis://prod:7000/1"}, []string{"-h", "replica"}, "redis://replica:7000/1", "", ""},
		{"-a and --user", nil, []string{"-a", "s3cret", "--user", "dashboard"}, "redis://127.0.0.1:6379/0", "dashboard", "s3cret"},
		{"--pass", nil, []string{"--pass", "s3cret"}, "redis://127.0.0.1:6379/0", "", "s3cret"},
		{"-a beats the environment", map[string]string{"REDIS_PASSWORD": "env", "REDIS_USERNAME": "envuser"}, []string{"-a", "flag"}, "redis://127.0.0.1:6379/0", "envuser", "flag"},
		{"-a beats the URL's", nil, []string{"-u", "redis://me:url@h:1/0", "-a", "flag"}, "redis://me:url@h:1/0", "", "flag"},
		{"long names", nil, []string{"--host", "10.0.0.5", "--port", "7000", "--db", "3"}, "redis://10.0.0.5:7000/3", "", ""},
		{"-s", nil, []string{"-s", "/run/redis.sock"}, "unix:///run/redis.sock", "", ""},
		{"-s -n", nil, []string{"-s", "/run/redis.sock", "-n", "2"}, "unix:///run/redis.sock?db=2", "", ""},
		{"-s keeps the environment's database and password", map[string]string{"REDIS_URL": "redis://:secret@prod:7000/3?dial_timeout=3s"}, []string{"--socket", "/run/redis.sock"},
			"unix://:secret@/run/redis.sock?db=3&dial_timeout=3s", "", ""},
		{"-s in place of the environment's socket", map[string]string{"REDIS_URL": "unix:///tmp/a.sock?db=4"}, []string{"-s", "/tmp/b.sock"}, "unix:///tmp/b.sock?db=4", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.URL != tc.url || c.Redis.Username != tc.user || c.Redis.Password != tc.pwd {
				t.Errorf("URL %q, user %q, password %q; want %q, %q, %q", c.Redis.URL, c.Redis.Username, c.Redis.Password, tc.url, tc.user, tc.pwd)
			}
		})
	}
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--url", "redis://h:1/0", "-h", "other"}, "-h cannot go with --url, which names the host, port and database: give one or the other"},
		{nil, []string{"-u", "h:1", "-p", "2", "-n", "3"}, "-p and -n cannot go with -u, which names the host, port and database: give one or the other"},
		{nil, []string{"-a", "hunter2", "--pass", "hunter2"}, "-a and --pass are the same flag: give it once"},
		{nil, []string{"-s", "/run/redis.sock", "-h", "h", "-p", "1"}, "-s names a socket, and -h and -p a host and port: give one or the other"},
		{nil, []string{"-u", "h:1", "-s", "/run/redis.sock"}, "-s cannot go with -u, which names the host, port and database: give one or the other"},
		{nil, []string{"-s", ""}, "-s is empty: give the path of the server's socket, like /run/redis/redis.sock"},
		{nil, []string{"-a", "hunter2", "-p", "0"}, `-p "0" is not a port (use a number from 1 to 65535, like 6379)`},
		{nil, []string{"-p", "redis"}, `-p "redis" is not a port (use a number from 1 to 65535, like 6379)`},
		{nil, []string{"-n", "-1"}, `-n "-1" is not a database (use a number from 0 up, like 0)`},
		{nil, []string{"-n", "two"}, `-n "two" is not a database (use a number from 0 up, like 0)`},
		{nil, []string{"-h", "redis://h"}, `-h "redis://h" is not a host (use a name or an address, like redis.internal or 10.0.0.5)`},
		{nil, []string{"-h", ""}, `-h "" is not a host (use a name or an address, like redis.internal or 10.0.0.5)`},
		{map[string]string{"REDIS_URL": "unix:///tmp/redis.sock"}, []string{"-n", "1"},
			"-n can only change a redis:// or rediss:// URL, and REDIS_URL is not one: give the server with --url instead"},
		{map[string]string{"REDIS_URL": "redis+sentinel://:hunter2@s1:26379/0?master_name=m"}, []string{"-h", "x", "-p", "1"},
			"-h and -p can only change a redis:// or rediss:// URL, and REDIS_URL is not one: give the server with --url instead"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := load(t, tc.env, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("%q: %v\nwant %s", tc.args, err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("%q: the error shows the password: %v", tc.args, err)
			}
		})
	}
}
