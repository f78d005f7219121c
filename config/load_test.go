package config_test

import (
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
	"github.com/spf13/pflag"
)

// load parses args as the common flags and loads the Config, with env as
// the whole environment. The working directory (this package's) holds no
// countertop.toml, so only --config or env can bring in a file.
func load(t *testing.T, env map[string]string, args ...string) (config.Config, error) {
	t.Helper()
	fs := pflag.NewFlagSet("countertop", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	f := config.Register(fs)
	line, err := config.Prepare(fs, args)
	if err != nil {
		t.Fatalf("prepare %q: %v", args, err)
	}
	if err := fs.Parse(line.Args); err != nil {
		t.Fatalf("parse %q: %v", args, err)
	}
	return config.Load(f, line.Typed, func(k string) string { return env[k] })
}

// writeFile writes content to name in dir, creating directories as needed,
// and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// defaultRedis is the [redis] section of a Config that nothing sets.
var defaultRedis = config.Redis{
	URL:           config.DefaultURL,
	Mode:          model.WatchAuto,
	Interval:      time.Second,
	DiscoverEvery: time.Second,
	ResyncEvery:   30 * time.Second,
	ScanCount:     1000,
	MaxFields:     int64(model.DefaultMaxFields),
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Redis:    defaultRedis,
		Patterns: []string{"*"},
		Rules:    model.Rules{Fallback: model.Rule{ExpectTTL: true}},
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", "[redis]\nurl = \"redis://file-host:7000/0\"\ninterval = \"5s\"\n")
	env := map[string]string{"REDIS_URL": "redis://env-host:7001/0"}
	tests := []struct {
		name         string
		env          map[string]string
		args         []string
		wantURL      string
		wantInterval time.Duration
	}{
		{"defaults", nil, nil, config.DefaultURL, time.Second},
		{"file beats defaults", nil, []string{"--config", file}, "redis://file-host:7000/0", 5 * time.Second},
		{"env beats file", env, []string{"--config", file}, "redis://env-host:7001/0", 5 * time.Second},
		{"flags beat env and file", env, []string{"--config", file, "--url", "redis://flag-host:7002/0", "--interval", "250ms"}, "redis://flag-host:7002/0", 250 * time.Millisecond},
		{"flags beat defaults", nil, []string{"--url", "redis://flag-host:7002/0", "--interval", "2s"}, "redis://flag-host:7002/0", 2 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.env, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.URL != tc.wantURL || c.Redis.Interval != tc.wantInterval {
				t.Errorf("url, interval = %s, %v; want %s, %v", c.Redis.URL, c.Redis.Interval, tc.wantURL, tc.wantInterval)
			}
			if c.Redis.DiscoverEvery != tc.wantInterval {
				t.Errorf("discover every %v, want the interval %v", c.Redis.DiscoverEvery, tc.wantInterval)
			}
		})
	}
}

func TestCredentialsFromEnvBeatFile(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", "[redis]\nusername = \"file-user\"\npassword = \"file-pass\"\n")
	c, err := load(t, map[string]string{"REDIS_USERNAME": "env-user", "REDIS_PASSWORD": "env-pass"}, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.Username != "env-user" || c.Redis.Password != "env-pass" {
		t.Errorf("username, password = %q, %q; want the environment's", c.Redis.Username, c.Redis.Password)
	}
	c, err = load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.Username != "file-user" || c.Redis.Password != "file-pass" {
		t.Errorf("username, password = %q, %q; want the file's", c.Redis.Username, c.Redis.Password)
	}
}

// TestFileErrors checks that each bad config file is refused with a message
// naming the line and the field, in the words a user can act on.
func TestFileErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		src  string
		want string // the error, after the file's path
	}{
		{"window not a duration",
			"[[rule]]\npattern = \"a:*\"\nwindow = \"60s\"\n\n[[rule]]\npattern = \"b:*\"\nwindow = \"6O s\"\n",
			`:7: rule[2].window: "6O s" is not a duration (like 60s or 1m30s)`},
		{"window a bare number",
			"[[rule]]\npattern = \"a:*\"\nwindow = 60\n",
			`:3: rule[1].window: must be a duration in quotes, like "60s", not an integer`},
		{"window zero",
			"[[rule]]\npattern = \"a:*\"\nwindow = \"0s\"\n",
			`:3: rule[1].window: "0s" must be positive (use at least 1ms)`},
		{"window negative",
			"[[rule]]\npattern = \"a:*\"\nwindow = \"-60s\"\n",
			`:3: rule[1].window: "-60s" must be positive (use at least 1ms)`},
		{"window too short",
			"[[rule]]\npattern = \"a:*\"\nwindow = \"999us\"\n",
			`:3: rule[1].window: "999us" is too short (use at least 1ms)`},
		{"window finer than a millisecond",
			"[[rule]]\npattern = \"a:*\"\nwindow = \"1.5ms\"\n",
			`:3: rule[1].window: "1.5ms" is not a whole number of milliseconds, which is what a Redis TTL counts (like 1500ms or 2s)`},
		{"limit zero",
			"[[rule]]\npattern = \"a:*\"\nlimit = 0\n",
			`:3: rule[1].limit: 0 is not a limit (use a number more than 0)`},
		{"limit negative float",
			"[[rule]]\npattern = \"a:*\"\nlimit = -2.5\n",
			`:3: rule[1].limit: -2.5 is not a limit (use a number more than 0)`},
		{"limit infinite",
			"[[rule]]\npattern = \"a:*\"\nlimit = inf\n",
			`:3: rule[1].limit: +Inf is not a limit (use a number more than 0)`},
		{"limit a string",
			"[[rule]]\npattern = \"a:*\"\nlimit = \"100\"\n",
			`:3: rule[1].limit: must be a number, not a string`},
		{"warn_at above 1",
			"[[rule]]\npattern = \"a:*\"\nwarn_at = 1.5\n",
			`:3: rule[1].warn_at: 1.5 is not a fraction of the limit (use a number more than 0 and at most 1, like 0.8)`},
		{"expect_ttl a string",
			"[[rule]]\npattern = \"a:*\"\nexpect_ttl = \"no\"\n",
			`:3: rule[1].expect_ttl: must be true or false, not a string`},
		{"layout unknown",
			"[[rule]]\npattern = \"a:*\"\nlayout = \"sliding\"\n",
			`:3: rule[1].layout: layout "sliding" is not one countertop knows: use auto, counter, window, log, bucket, gcra, timestamp, opaque or block`},
		{"layout other, which only detection gives",
			"[[rule]]\npattern = \"a:*\"\nlayout = \"other\"\n",
			`:3: rule[1].layout: layout "other" is not one countertop knows: use auto, counter, window, log, bucket, gcra, timestamp, opaque or block`},
		{"layout not a string",
			"[[rule]]\npattern = \"a:*\"\nlayout = 1\n",
			`:3: rule[1].layout: must be a string in quotes, not an integer`},
		{"field empty",
			"[[rule]]\npattern = \"a:*\"\nfield = \"\"\n",
			`:3: rule[1].field: "" names no hash field: give the field's name, or leave field out`},
		{"field with a layout that reads no hash, written after it",
			"[[rule]]\npattern = \"a:*\"\nfield = \"hits\"\nlayout = \"log\"\n",
			`:3: rule[1].field: a field is read of a hash, and layout = "log" reads none: remove field, or use layout = "counter" (the field's count), "bucket" (its tokens) or "gcra" (its time)`},
		{"field with a layout that reads no hash, in its place among the errors",
			"[[rule]]\npattern = \"a:*\"\nlayout = \"window\"\nfield = \"hits\"\nlimit = 0\n",
			`:4: rule[1].field: a field is read of a hash, and layout = "window" reads none: remove field, or use layout = "counter" (the field's count), "bucket" (its tokens) or "gcra" (its time)` +
				"\nPATH:5: rule[1].limit: 0 is not a limit (use a number more than 0)"},
		{"field of [defaults] with a layout that reads no hash",
			"[defaults]\nlayout = \"timestamp\"\nfield = \"until\"\n",
			`:3: defaults.field: a field is read of a hash, and layout = "timestamp" reads none: remove field, or use layout = "counter" (the field's count), "bucket" (its tokens) or "gcra" (its time)`},
		{"json_field empty",
			"[[rule]]\npattern = \"a:*\"\njson_field = \"\"\n",
			`:3: rule[1].json_field: "" names no field: give the name of the field that holds the count in a JSON or msgpack value, or leave json_field out`},
		{"json_field with a layout that reads no JSON, written after it",
			"[[rule]]\npattern = \"a:*\"\njson_field = \"n\"\nlayout = \"gcra\"\n",
			`:3: rule[1].json_field: json_field is read of a JSON or msgpack value, and layout = "gcra" reads none: remove json_field, or use layout = "counter", "window" or "bucket"`},
		{"json_field of [defaults] with a layout that reads no JSON",
			"[defaults]\nlayout = \"timestamp\"\njson_field = \"n\"\n",
			`:3: defaults.json_field: json_field is read of a JSON or msgpack value, and layout = "timestamp" reads none: remove json_field, or use layout = "counter", "window" or "bucket"`},
		{"json_field not a string",
			"[[rule]]\npattern = \"a:*\"\njson_field = 3\n",
			`:3: rule[1].json_field: must be a string in quotes, not an integer`},
		{"empty pattern",
			"[[rule]]\npattern = \"\"\n",
			`:2: rule[1].pattern: "" is not a pattern (use a glob like "ratelimit:*" or "*")`},
		{"missing pattern, named at the rule",
			"[[rule]]\npattern = \"a:*\"\n\n[[rule]]\nlimit = 5\n",
			`:4: rule[2]: has no pattern (add pattern = "..." to it)`},
		{"rule in single brackets",
			"[rule]\npattern = \"a:*\"\n",
			`:1: rule: must be written as [[rule]] tables, one per rule`},
		{"rules as an inline array",
			"rule = [{ pattern = \"a:*\" }]\n",
			`:1: rule: must be written as [[rule]] tables, one per rule`},
		{"bad mode",
			"[redis]\nmode = \"fast\"\n",
			`:2: redis.mode: "fast" is not a mode (use auto, events, tracking or poll)`},
		{"interval too short",
			"[redis]\ninterval = \"1us\"\n",
			`:2: redis.interval: "1us" is too short (use at least 1ms)`},
		{"resync_every negative",
			"[redis]\nresync_every = \"-30s\"\n",
			`:2: redis.resync_every: "-30s" must be positive (use at least 1ms)`},
		{"scan_count zero",
			"[redis]\nscan_count = 0\n",
			`:2: redis.scan_count: 0 is not a SCAN count (use a whole number more than 0, like 1000)`},
		{"client_name with a space",
			"[redis]\nclient_name = \"count ertop\"\n",
			`:2: redis.client_name: "count ertop" cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters (use letters, digits and punctuation, like countertop-eu-1)`},
		{"max_commands negative",
			"[redis]\nmax_commands = -5\n",
			`:2: redis.max_commands: -5 commands a second is too few for the rows on screen to be read every interval (use 100 or more, like 20000, or 0 for no limit)`},
		{"max_fields a string",
			"[redis]\nmax_fields = \"100\"\n",
			`:2: redis.max_fields: must be a whole number, not a string`},
		{"field_ttls a string",
			"[[rule]]\npattern = \"fq:*\"\nfield_ttls = \"yes\"\n",
			`:3: rule[1].field_ttls: must be true or false, not a string`},
		{"scan_count a float",
			"[redis]\nscan_count = 10.5\n",
			`:2: redis.scan_count: must be a whole number, not a float`},
		{"cluster a string",
			"[redis]\ncluster = \"yes\"\n",
			`:2: redis.cluster: must be true or false, not a string`},
		{"url scheme, password hidden",
			"[redis]\nurl = \"http://user:hunter2@host:7000\"\n",
			`:2: redis.url: "http://user:***@host:7000" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`},
		{"url without scheme or port",
			"[redis]\nurl = \"localhost\"\n",
			`:2: redis.url: "localhost" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`},
		{"url port out of range",
			"[redis]\nurl = \"redis://user:hunter2@127.0.0.1:99999/0\"\n",
			`:2: redis.url: "redis://user:***@127.0.0.1:99999/0" has port 99999, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"url database negative",
			"[redis]\nurl = \"redis://user:hunter2@h:7000/-1\"\n",
			`:2: redis.url: "redis://user:***@h:7000/-1" has database -1, which does not exist (use a database number from 0 up, like /0)`},
		{"password not a string, value not shown",
			"[redis]\npassword = 12345\n",
			`:2: redis.password: must be a string in quotes, not an integer`},
		{"tls file missing, relative to the file",
			"[redis]\ntls_ca = \"certs/ca.pem\"\n",
			`:2: redis.tls_ca: "` + filepath.Join(dir, "certs", "ca.pem") + `" does not exist`},
		{"patterns not an array",
			"[redis]\npatterns = \"a:*\"\n",
			`:2: redis.patterns: must be an array of globs in quotes, like ["ratelimit:*"], not a string`},
		{"patterns with an empty glob",
			"[redis]\npatterns = [\"a:*\", \"\"]\n",
			`:2: redis.patterns: "" is not a pattern (use a glob like "ratelimit:*" or "*")`},
		{"unknown key",
			"[redis]\nurl = \"redis://h:7000\"\nmdoe = \"poll\"\n",
			`:3: redis.mdoe: unknown key (did you mean "mode"?)`},
		{"unknown key in the second rule",
			"[[rule]]\npattern = \"a:*\"\nlimit = 1\n[[rule]]\npattern = \"b:*\"\nlimt = 1\n",
			`:6: rule[2].limt: unknown key (did you mean "limit"?)`},
		{"unknown table, reported once",
			"[redsi]\nurl = \"redis://h:7000\"\nmode = \"poll\"\n",
			`:1: redsi: unknown key (did you mean "redis"?)`},
		{"unknown dotted key",
			"redis.tls.ca = \"x\"\n",
			`:1: redis.tls.ca: unknown key (did you mean "tls_ca"?)`},
		{"mistyped key",
			"[redis]\nintervall = \"2s\"\n",
			`:2: redis.intervall: unknown key (did you mean "interval"?)`},
		{"mistyped key of the fallback",
			"[defaults]\nwarnat = 0.5\n",
			`:2: defaults.warnat: unknown key (did you mean "warn_at"?)`},
		{"key in the wrong case",
			"[[rule]]\nPattern = \"a:*\"\n",
			":1: rule[1]: has no pattern (add pattern = \"...\" to it)\n" +
				`PATH:2: rule[1].Pattern: unknown key (did you mean "pattern"?)`},
		{"mistyped table",
			"[[rules]]\npattern = \"a:*\"\n",
			`:1: rules: unknown key (did you mean "rule"?)`},
		{"no key near enough to guess",
			"[redis]\nspeed = \"fast\"\n",
			`:2: redis.speed: unknown key`},
		{"top-level patterns belong in [redis]",
			"patterns = [\"a:*\"]\n",
			`:1: patterns: unknown key`},
		{"same pattern twice",
			"[[rule]]\npattern = \"rl:*\"\nlimit = 1\n\n[[rule]]\nlimit = 2\npattern = \"rl:*\"\n",
			`:7: rule[2].pattern: "rl:*" repeats the pattern of rule[1] at line 2, so this rule would never apply: remove one, or merge them`},
		{"same pattern three times, each named against the first",
			"[[rule]]\npattern = \"rl:*\"\n[[rule]]\npattern = \"views:*\"\n[[rule]]\npattern = \"rl:*\"\n[[rule]]\npattern = \"views:*\"\n[[rule]]\npattern = \"rl:*\"\nlimit = 0\n",
			":6: rule[3].pattern: \"rl:*\" repeats the pattern of rule[1] at line 2, so this rule would never apply: remove one, or merge them\n" +
				"PATH:8: rule[4].pattern: \"views:*\" repeats the pattern of rule[2] at line 4, so this rule would never apply: remove one, or merge them\n" +
				"PATH:10: rule[5].pattern: \"rl:*\" repeats the pattern of rule[1] at line 2, so this rule would never apply: remove one, or merge them\n" +
				"PATH:11: rule[5].limit: 0 is not a limit (use a number more than 0)"},
		{"same pattern in an inline table",
			"[[rule]]\npattern = 'rl:*'\n[[rule]]\nx = { a = 1 }\npattern = \"rl:*\"\n",
			":4: rule[2].x: unknown key\n" +
				"PATH:5: rule[2].pattern: \"rl:*\" repeats the pattern of rule[1] at line 2, so this rule would never apply: remove one, or merge them"},
		{"no pattern in defaults",
			"[defaults]\npattern = \"a:*\"\n",
			`:2: defaults.pattern: unknown key`},
		{"redis not a table",
			"redis = \"redis://h:7000\"\n",
			`:1: redis: must be a table: write [redis] and put its keys under it`},
		{"every problem, in file order",
			"[redis]\nmode = \"fast\"\n[[rule]]\npattern = \"a:*\"\nlimit = -1\nwindow = \"x\"\n",
			":2: redis.mode: \"fast\" is not a mode (use auto, events, tracking or poll)\n" +
				"PATH:5: rule[1].limit: -1 is not a limit (use a number more than 0)\n" +
				"PATH:6: rule[1].window: \"x\" is not a duration (like 60s or 1m30s)"},
		{"syntax error",
			"[redis]\nmode = \"poll\"\ninterval = 1s\n",
			`:3: not valid TOML: expected a top-level item to end with a newline, comment, or EOF, but got 's' instead`},
		{"syntax error quoting a password",
			"[redis]\npassword = hunter2\n",
			`:2: not valid TOML: expected value but found "***" instead`},
		{"duplicate key",
			"[redis]\nmode = \"poll\"\nmode = \"auto\"\n",
			`:3: not valid TOML: Key 'redis.mode' has already been defined.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, "countertop.toml", tc.src)
			_, err := load(t, nil, "--config", path)
			want := path + strings.ReplaceAll(tc.want, "PATH", path)
			if err == nil || err.Error() != want {
				t.Errorf("error:\n got %v\nwant %s", err, want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestFlagAndEnvErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "missing.pem")
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"window", nil, []string{"--window", "6O s"}, `--window: "6O s" is not a duration (like 60s or 1m30s)`},
		{"limit not a number", nil, []string{"--limit", "lots"}, `--limit: "lots" is not a limit (use a number more than 0)`},
		{"limit zero", nil, []string{"--limit", "0"}, `--limit: 0 is not a limit (use a number more than 0)`},
		{"mode", nil, []string{"--mode", "push"}, `--mode: "push" is not a mode (use auto, events, tracking or poll)`},
		{"interval", nil, []string{"--interval", "0"}, `--interval: "0" must be positive (use at least 1ms)`},
		{"window negative", nil, []string{"--window=-60s"}, `--window: "-60s" must be positive (use at least 1ms)`},
		{"window too short", nil, []string{"--window", "500us"}, `--window: "500us" is too short (use at least 1ms)`},
		{"window finer than a millisecond", nil, []string{"--window", "1.0005s"}, `--window: "1.0005s" is not a whole number of milliseconds, which is what a Redis TTL counts (like 1500ms or 2s)`},
		{"discover-every negative", nil, []string{"--discover-every", "-1s"}, `--discover-every: "-1s" must be positive (use at least 1ms)`},
		{"discover-every", nil, []string{"--discover-every", "soon"}, `--discover-every: "soon" is not a duration (like 60s or 1m30s)`},
		{"resync-every", nil, []string{"--resync-every", "1ns"}, `--resync-every: "1ns" is too short (use at least 1ms)`},
		{"scan-count", nil, []string{"--scan-count", "-1"}, `--scan-count: -1 is not a SCAN count (use a whole number more than 0, like 1000)`},
		{"max-commands too few", nil, []string{"--max-commands", "50"}, `--max-commands: 50 commands a second is too few for the rows on screen to be read every interval (use 100 or more, like 20000, or 0 for no limit)`},
		{"max-commands not a number", nil, []string{"--max-commands", "10k"}, `--max-commands: "10k" is not a number of commands a second (use a whole number, like 20000, or 0 for no limit)`},
		{"max-fields zero", nil, []string{"--max-fields", "0"}, `--max-fields: 0 is not a number of fields to show a key (use a whole number from 1 to 10000, like 100)`},
		{"max-fields too many", map[string]string{"COUNTERTOP_MAX_FIELDS": "1000000"}, nil, `COUNTERTOP_MAX_FIELDS: 1000000 is not a number of fields to show a key (use a whole number from 1 to 10000, like 100)`},
		{"max-fields not a number", nil, []string{"--max-fields", "all"}, `--max-fields: "all" is not a number of fields (use a whole number from 1 to 10000, like 100)`},
		{"scan-count not a number", nil, []string{"--scan-count", "1e3"}, `--scan-count: "1e3" is not a SCAN count (use a whole number more than 0, like 1000)`},
		{"client-name with a newline", nil, []string{"--client-name", "dash\nboard"}, `--client-name: "dash\nboard" cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters (use letters, digits and punctuation, like countertop-eu-1)`},
		{"empty pattern", nil, []string{"--pattern", "a:*", "--pattern", ""}, `--pattern: "" is not a pattern (use a glob like "ratelimit:*" or "*")`},
		{"url, password hidden", nil, []string{"--url", "ftp://me:hunter2@host"}, `--url: "ftp://me:***@host" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`},
		{"tls-ca missing", nil, []string{"--tls-ca", missing}, `--tls-ca: "` + missing + `" does not exist`},
		{"tls-cert is a directory", nil, []string{"--tls-cert", os.TempDir(), "--tls-key", os.TempDir()}, `--tls-cert: "` + os.TempDir() + `" is a directory, not a file` + "\n" + `--tls-key: "` + os.TempDir() + `" is a directory, not a file`},
		{"url port out of range", nil, []string{"--url", "redis://127.0.0.1:99999/0"}, `--url: "redis://127.0.0.1:99999/0" has port 99999, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"url port zero", nil, []string{"--url", "rediss://[::1]:0"}, `--url: "rediss://[::1]:0" has port 0, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"sentinel url port out of range", nil, []string{"--url", "redis+sentinel://s1:26379,s2:265379/0?master_name=m"}, `--url: "redis+sentinel://s1:26379,s2:265379/0?master_name=m" has port 265379, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"--url password read as options", nil, []string{"--url", "redis+sentinel://:pw/0?master_name=XQsecret@127.0.0.1:7000"},
			`--url: "redis+sentinel://***@127.0.0.1:7000" has a user name or password with characters a URL reserves (like @, / or :): percent-encode them (%40 for @, %2F for /, %3A for :)`},
		{"--url with a password and a bad port", nil, []string{"--url", "redis://:s3cret@127.0.0.1:abc/0"},
			`--url: "redis://:***@127.0.0.1:abc/0" has port abc, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"--url password not encoded", nil, []string{"--url", "redis://user:pa:99999/ss@host:7000/0"},
			`--url: "redis://user:***@host:7000/0" has a user name or password with characters a URL reserves (like @, / or :): percent-encode them (%40 for @, %2F for /, %3A for :)`},
		{"REDIS_URL password not encoded", map[string]string{"REDIS_URL": "redis://:p@ss/w:rd@127.0.0.1:31010/0"}, nil,
			`REDIS_URL: "redis://:***@127.0.0.1:31010/0" has a user name or password with characters a URL reserves (like @, / or :): percent-encode them (%40 for @, %2F for /, %3A for :)`},
		{"REDIS_URL port out of range", map[string]string{"REDIS_URL": "redis://:hunter2@h:70000"}, nil, `REDIS_URL: "redis://:***@h:70000" has port 70000, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"REDIS_URL", map[string]string{"REDIS_URL": "127.0.0.1/7000"}, nil, `REDIS_URL: "127.0.0.1/7000" is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)`},
		{"url database negative", nil, []string{"--url", "redis://127.0.0.1:7000/-1"}, `--url: "redis://127.0.0.1:7000/-1" has database -1, which does not exist (use a database number from 0 up, like /0)`},
		{"url database encoded", nil, []string{"--url", "redis://h/%2D1"}, `--url: "redis://h/%2D1" has database -1, which does not exist (use a database number from 0 up, like /0)`},
		{"url database option negative", nil, []string{"--url", "unix:///tmp/redis.sock?db=-2"}, `--url: "unix:///tmp/redis.sock?db=-2" has database -2, which does not exist (use a database number from 0 up, like db=0)`},
		{"sentinel url database negative", nil, []string{"--url", "redis+sentinel://s1:26379,s2/-1?master_name=m"}, `--url: "redis+sentinel://s1:26379,s2/-1?master_name=m" has database -1, which does not exist (use a database number from 0 up, like /0)`},
		{"REDIS_URL database negative", map[string]string{"REDIS_URL": "rediss://:hunter2@h/-1"}, nil, `REDIS_URL: "rediss://:***@h/-1" has database -1, which does not exist (use a database number from 0 up, like /0)`},
		{"config missing", nil, []string{"--config", missing}, `--config: "` + missing + `" does not exist`},
		{"several at once", nil, []string{"--mode", "push", "--limit", "0"}, "--limit: 0 is not a limit (use a number more than 0)\n--mode: \"push\" is not a mode (use auto, events, tracking or poll)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(t, tc.env, tc.args...)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error:\n got %v\nwant %s", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "hunter2") {
				t.Errorf("error shows the password: %v", err)
			}
		})
	}
}

func TestBadEnvIgnoredWhenFlagGiven(t *testing.T) {
	c, err := load(t, map[string]string{"REDIS_URL": "not a url"}, "--url", "redis://flag-host:7002/0")
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.URL != "redis://flag-host:7002/0" {
		t.Errorf("url = %s, want the flag's", c.Redis.URL)
	}
}

// TestEveryFlag sets every flag over a file that says the opposite, to
// check that each flag reaches its field and beats the file.
func TestEveryFlag(t *testing.T) {
	dir := t.TempDir()
	ca := writeFile(t, dir, "ca.pem", "")
	cert := writeFile(t, dir, "cert.pem", "")
	key := writeFile(t, dir, "key.pem", "")
	file := writeFile(t, dir, "c.toml", `
[redis]
url = "redis://file-host:7000/0"
patterns = ["file:*"]
mode = "events"
interval = "5s"
discover_every = "6s"
resync_every = "7s"
scan_count = 5
max_commands = 0
max_fields = 7
cluster = true
read_only = true
client_name = "file-name"
enable_events = true
tls_skip_verify = true

[defaults]
limit = 5
window = "5s"
`)
	c, err := load(t, nil,
		"--config", file,
		"--url", "rediss://flag-host:7002/1",
		"--pattern", "a:*", "--pattern", "b:*",
		"--limit", "2.5",
		"--window", "90s",
		"--mode", "poll",
		"--interval", "250ms",
		"--discover-every", "3s",
		"--resync-every", "1m",
		"--scan-count", "50",
		"--max-commands", "2500",
		"--max-fields", "250",
		"--read-only=false",
		"--client-name", "flag-name",
		"--cluster=false",
		"--enable-events=false",
		"--tls-ca", ca,
		"--tls-cert", cert,
		"--tls-key", key,
		"--tls-skip-verify=false",
	)
	if err != nil {
		t.Fatal(err)
	}
	want := config.Config{
		Redis: config.Redis{
			URL:           "rediss://flag-host:7002/1",
			URLFrom:       "--url",
			Mode:          model.WatchPoll,
			Interval:      250 * time.Millisecond,
			DiscoverEvery: 3 * time.Second,
			ResyncEvery:   time.Minute,
			ScanCount:     50,
			MaxCommands:   2500,
			MaxFields:     250,
			ClientName:    "flag-name",
			TLS:           config.TLS{CAFile: ca, CertFile: cert, KeyFile: key},
		},
		Patterns: []string{"a:*", "b:*"},
		Rules:    model.Rules{Fallback: model.Rule{Limit: 2.5, Window: 90 * time.Second, ExpectTTL: true}},
		File:     file,
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config:\n got %+v\nwant %+v", c, want)
	}
}

func TestTLSFilesRelativeToConfigFile(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "certs/ca.pem", "")
	writeFile(t, dir, "certs/client.pem", "")
	writeFile(t, dir, "certs/client-key.pem", "")
	file := writeFile(t, dir, "c.toml", "[redis]\ntls_ca = \"certs/ca.pem\"\ntls_cert = \"certs/client.pem\"\ntls_key = \""+filepath.Join(dir, "certs/client-key.pem")+"\"\n")
	c, err := load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	want := config.TLS{
		CAFile:   filepath.Join(dir, "certs/ca.pem"),
		CertFile: filepath.Join(dir, "certs/client.pem"),
		KeyFile:  filepath.Join(dir, "certs/client-key.pem"),
	}
	if c.Redis.TLS != want {
		t.Errorf("TLS = %+v, want %+v", c.Redis.TLS, want)
	}
}

func TestClientCertificateNeedsKey(t *testing.T) {
	cert := writeFile(t, t.TempDir(), "cert.pem", "")
	_, err := load(t, nil, "--tls-cert", cert)
	want := "a TLS client certificate needs both a certificate and a key file: set both --tls-cert and --tls-key (tls_cert and tls_key in [redis])"
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

func TestPatterns(t *testing.T) {
	dir := t.TempDir()
	rules := "[[rule]]\npattern = \"ratelimit:*\"\n[[rule]]\npattern = \"views:*\"\n[[rule]]\npattern = \"ratelimit:login:*\"\nlimit = 1\n"
	withRules := writeFile(t, dir, "rules.toml", rules)
	withPatterns := writeFile(t, dir, "patterns.toml", "[redis]\npatterns = [\"file:*\", \"other:*\"]\n"+rules)
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"nothing: every key", nil, []string{"*"}},
		{"the rules' patterns, in order", []string{"--config", withRules}, []string{"ratelimit:*", "views:*", "ratelimit:login:*"}},
		{"the file's patterns beat the rules'", []string{"--config", withPatterns}, []string{"file:*", "other:*"}},
		{"repeated --pattern beats the file", []string{"--config", withPatterns, "--pattern", "a:*", "--pattern", "b:?"}, []string{"a:*", "b:?"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, nil, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Patterns, tc.want) {
				t.Errorf("patterns = %q, want %q", c.Patterns, tc.want)
			}
		})
	}

	// --pattern with its value left out takes the next flag for it: say
	// so, rather than watch the keys matching "--url" and complain of the
	// URL as an argument. A glob can still match keys that begin so.
	fs := pflag.NewFlagSet("countertop", pflag.ContinueOnError)
	config.Register(fs)
	want := "--pattern has no value: the word after it, --url, is a flag — give the value right after --pattern"
	if _, err := config.Prepare(fs, []string{"--pattern", "--url", "redis://h:1"}); err == nil || err.Error() != want {
		t.Errorf("--pattern --url: %v\nwant %q", err, want)
	}
	for _, args := range [][]string{{"--read-only", "--pattern", "a:*"}, {"--pattern=-x", "--url", "redis://h:1"}, {"--", "--pattern", "--url"}, {"--pattern", "-x"}} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			if _, err := config.Prepare(fs, args); err != nil {
				t.Errorf("%q: %v", args, err)
			}
		})
	}
	if c, err := load(t, nil, "--pattern", "[-]-url*"); err != nil || !slices.Equal(c.Patterns, []string{"[-]-url*"}) {
		t.Errorf("--pattern '[-]-url*': %q, %v", c.Patterns, err)
	}
}

func TestFallbackRule(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", "[defaults]\nlimit = 10\nwindow = \"10s\"\nwarn_at = 0.5\nexpect_ttl = false\n")
	tests := []struct {
		name string
		args []string
		want model.Rule
	}{
		{"none", nil, model.Rule{ExpectTTL: true}},
		{"flags", []string{"--limit", "20", "--window", "1m"}, model.Rule{Limit: 20, Window: time.Minute, ExpectTTL: true}},
		{"file", []string{"--config", file}, model.Rule{Limit: 10, Window: 10 * time.Second, WarnAt: 0.5}},
		{"flags beat file", []string{"--config", file, "--limit", "20"}, model.Rule{Limit: 20, Window: 10 * time.Second, WarnAt: 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, nil, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Rules.Fallback != tc.want {
				t.Errorf("fallback = %+v, want %+v", c.Rules.Fallback, tc.want)
			}
		})
	}
}

// TestFallbackFlagHelp keeps the help of --limit and --window true to what
// the fallback does with them: the window also fills in a rule's that has
// none (windowOf in cmd_write.go, windowFor in ui/writes.go), the limit
// does not (a rule without a limit has none).
func TestFallbackFlagHelp(t *testing.T) {
	fs := pflag.NewFlagSet("countertop", pflag.ContinueOnError)
	config.Register(fs)
	for _, tc := range []struct{ flag, want string }{
		{"limit", "limit `N` of the keys no rule covers (a rule without a limit has none)"},
		{"window", "window of the keys no rule covers and of the rules that set none: the `DURATION` of the TTL a counter without one is given when it is repaired or incremented, like 60s"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			if got := fs.Lookup(tc.flag).Usage; got != tc.want {
				t.Errorf("--%s help:\n got %s\nwant %s", tc.flag, got, tc.want)
			}
		})
	}
}

func TestConfigFileLookup(t *testing.T) {
	const local, xdg, home = "redis://local-host:7000", "redis://xdg-host:7000", "redis://home-host:7000"
	tests := []struct {
		name     string
		files    map[string]string // file (relative to a temp dir) -> the url it sets
		env      map[string]string // values relative to the temp dir
		wantFile string            // relative to the temp dir, "" for none
		wantURL  string
	}{
		{"none", nil, map[string]string{"HOME": "home"}, "", config.DefaultURL},
		{"XDG_CONFIG_HOME",
			map[string]string{"xdg/countertop/config.toml": xdg, "home/.config/countertop/config.toml": home},
			map[string]string{"XDG_CONFIG_HOME": "xdg", "HOME": "home"},
			"xdg/countertop/config.toml", xdg},
		{"~/.config without XDG_CONFIG_HOME",
			map[string]string{"home/.config/countertop/config.toml": home},
			map[string]string{"HOME": "home"},
			"home/.config/countertop/config.toml", home},
		{"./countertop.toml first",
			map[string]string{"work/countertop.toml": local, "xdg/countertop/config.toml": xdg},
			map[string]string{"XDG_CONFIG_HOME": "xdg"},
			"work/countertop.toml", local},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, url := range tc.files {
				writeFile(t, dir, name, "[redis]\nurl = \""+url+"\"\n")
			}
			env := make(map[string]string)
			for k, v := range tc.env {
				env[k] = filepath.Join(dir, v)
			}
			work := filepath.Join(dir, "work")
			if err := os.MkdirAll(work, 0o755); err != nil {
				t.Fatal(err)
			}
			t.Chdir(work)

			c, err := load(t, env)
			if err != nil {
				t.Fatal(err)
			}
			wantFile := ""
			switch {
			case tc.wantFile == "work/countertop.toml":
				wantFile = "countertop.toml" // as found, relative to the working directory
			case tc.wantFile != "":
				wantFile = filepath.Join(dir, tc.wantFile)
			}
			if c.File != wantFile || c.Redis.URL != tc.wantURL {
				t.Errorf("file, url = %q, %s; want %q, %s", c.File, c.Redis.URL, wantFile, tc.wantURL)
			}
		})
	}
}

// Flags go anywhere among the arguments, so that "incr KEY --by 3"
// works, and are read as package flag read them before pflag: -by is --by,
// not -b -y; everything after "--" is positional.
func TestPrepare(t *testing.T) {
	tests := []struct {
		args           []string
		wantPositional []string
		wantTyped      []string
		wantBy         int
		wantReadOnly   bool
	}{
		{nil, nil, nil, 1, false},
		{[]string{"incr", "KEY", "--by", "3"}, []string{"incr", "KEY"}, []string{"--by"}, 3, false},
		{[]string{"--read-only", "incr", "KEY", "--by=2"}, []string{"incr", "KEY"}, []string{"--read-only", "--by"}, 2, true},
		{[]string{"KEY", "--by", "3", "OTHER", "--read-only"}, []string{"KEY", "OTHER"}, []string{"--by", "--read-only"}, 3, true},
		{[]string{"KEY", "--", "--by", "-"}, []string{"KEY", "--by", "-"}, nil, 1, false},
		{[]string{"-", "--by", "4"}, []string{"-"}, []string{"--by"}, 4, false},
		{[]string{"KEY", "-by", "-5", "-read-only"}, []string{"KEY"}, []string{"--by", "--read-only"}, -5, true},
		{[]string{"-r", "KEY", "-b=6"}, []string{"KEY"}, []string{"-r", "-b"}, 6, true},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			fs := pflag.NewFlagSet("incr", pflag.ContinueOnError)
			by := fs.IntP("by", "b", 1, "")
			readOnly := fs.BoolP("read-only", "r", false, "")
			line, err := config.Prepare(fs, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if err := fs.Parse(line.Args); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(line.Positional, tc.wantPositional) || !slices.Equal(fs.Args(), tc.wantPositional) || !slices.Equal(line.Typed, tc.wantTyped) ||
				*by != tc.wantBy || *readOnly != tc.wantReadOnly {
				t.Errorf("got %q (pflag: %q) typed %q, --by %d, --read-only %t; want %q %q, %d, %t",
					line.Positional, fs.Args(), line.Typed, *by, *readOnly, tc.wantPositional, tc.wantTyped, tc.wantBy, tc.wantReadOnly)
			}
		})
	}
}

// An unknown flag is left to the parser to report, after a positional
// argument too.
func TestPrepareUnknownFlag(t *testing.T) {
	fs := pflag.NewFlagSet("incr", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	line, err := config.Prepare(fs, []string{"KEY", "-bogus"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Parse(line.Args); err == nil || err.Error() != "unknown flag: --bogus" {
		t.Errorf("an unknown flag after a positional argument: %v", err)
	}
}

// TestURLsAccepted keeps the URL check from refusing URLs that connect:
// the port is checked only where one is written, and a password may hold
// characters that look like a port.
func TestURLsAccepted(t *testing.T) {
	for _, u := range []string{
		"redis://127.0.0.1:1/0",
		"rediss://host:65535",
		"redis://host/0",
		"redis://[::1]:7001/0",
		"redis://user:pa%3A99999%2Fss@host:7000/0", // encoded: 99999 is not a port
		"unix:///tmp/redis.sock",
		"unix://user:pw@/tmp/redis.sock?db=1",
		"redis+sentinel://s1,s2:26380/0?master_name=m",
		"redis://host:7000/15",
		"redis://host:7000/",
		"redis://host:7000?db=3",
		"redis://host:7000/1?db=2&client_name=me",
		"unix:///tmp/redis-0.sock?db=0",
		"redis+sentinel://s1:26379/3?master_name=m",
	} {
		t.Run(u, func(t *testing.T) {
			c, err := load(t, nil, "--url", u)
			if err != nil || c.Redis.URL != u {
				t.Errorf("--url %s: url = %q, err = %v", u, c.Redis.URL, err)
			}
		})
	}
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"redis://user:hunter2@host:7000/0", "redis://user:***@host:7000/0"},
		{"rediss://:hunter2@host", "rediss://:***@host"},
		{"redis://user@host", "redis://user@host"},
		{"redis://host:7000/0", "redis://host:7000/0"},
		{"redis://user:hun/ter@2@host/0", "redis://user:***@host/0"},
		{"unix://user:hunter2@/tmp/redis.sock", "unix://user:***@/tmp/redis.sock"},
		{"user:hunter2@host", "user:***@host"},
		// An '@' in the options is no user info.
		{"redis://host:7000/0?client_name=me@laptop", "redis://host:7000/0?client_name=me@laptop"},
		{"redis://:hunter2@host:7000/0?client_name=me@laptop", "redis://:***@host:7000/0?client_name=me@laptop"},
		{"unix://user:hunter2@/tmp/a@b.sock", "unix://user:***@/tmp/a@b.sock"},
		{"unix://:hunter2@localhost/tmp/x.sock", "unix://:***@localhost/tmp/x.sock"},
		{"redis://:99999?x=XQ@host/0", "redis://:***@host/0"}, // a '?' in the password: no name in the options
		{"redis://:pw/0?x=XQsecret@127.0.0.1:7000/0", "redis://:***@127.0.0.1:7000/0"},
		{"redis://host:7000?client_name=me@laptop", "redis://host:7000?client_name=me@laptop"},
		{"redis://:pw@host:7000?client_name=me@laptop", "redis://:***@host:7000?client_name=me@laptop"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			if got := config.RedactURL(tc.in); got != tc.want {
				t.Errorf("RedactURL(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
	// and such URLs are taken as they are.
	for _, u := range []string{"redis://host:7000/0?client_name=me@laptop", "redis://:hunter2@host:7000/0?client_name=me@laptop", "redis+sentinel://:pw@h:26379/0?master_name=a@b",
		"redis+sentinel://h1:26379,h2/0?master_name=a@b", "redis+sentinel://[::1]:26379,[::2]:26379/0?master_name=a@b",
		"redis://127.0.0.1:7000?client_name=me@laptop", "redis://:pw@127.0.0.1:7000?client_name=me@laptop", "redis://[::1]:7000?client_name=me@laptop",
		"redis+sentinel://127.0.0.1:26379,127.0.0.1:26380?master_name=a@b",
		"redis+sentinel://:secret@127.0.0.1:26379,[::1]:26379/0?master_name=m", "redis+sentinel://alice@127.0.0.1:1,[::1]:1?master_name=m",
		"redis+sentinel://:p%40ss%2Fw@[::1]:26379,[::2]:26379/0?master_name=m"} {
		t.Run("--url "+u, func(t *testing.T) {
			if c, err := load(t, nil, "--url", u); err != nil || c.Redis.URL != u {
				t.Errorf("--url %s: %v", u, err)
			}
		})
	}
}

func TestStringHidesPassword(t *testing.T) {
	c, err := load(t, map[string]string{"REDIS_URL": "redis://user:s3cr3t@host:7000/0", "REDIS_PASSWORD": "hunter2", "REDIS_SENTINEL_PASSWORD": "sentinel-pw"})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{c.String(), c.Redis.String()} {
		if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cr3t") || strings.Contains(s, "sentinel-pw") {
			t.Errorf("String shows a password: %s", s)
		}
		if !strings.Contains(s, "redis://user:***@host:7000/0") || !strings.Contains(s, " password=***") || !strings.Contains(s, "sentinel_password=***") {
			t.Errorf("String does not show that there are passwords: %s", s)
		}
	}
}

// Credentials in --url beat REDIS_USERNAME and REDIS_PASSWORD, as flags beat
// the environment: the client uses Username and Password over the URL's.
// A --url without them leaves the environment's.
func TestURLCredentialsBeatTheEnvironment(t *testing.T) {
	env := map[string]string{"REDIS_USERNAME": "envuser", "REDIS_PASSWORD": "envpw"}
	for _, tc := range []struct {
		url            string
		username, pass string
	}{
		{"redis://:urlpw@host:7000/0", "", ""}, // the default user's password
		{"redis://urluser:urlpw@host:7000/0", "", ""},
		{"redis://urluser@host:7000/0", "", "envpw"},
		{"redis://host:7000/0", "envuser", "envpw"},
	} {
		t.Run(config.RedactURL(tc.url), func(t *testing.T) {
			c, err := load(t, env, "--url", tc.url)
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.Username != tc.username || c.Redis.Password != tc.pass {
				t.Errorf("--url %s with REDIS_USERNAME and REDIS_PASSWORD set: username %q, password %q; want %q, %q",
					config.RedactURL(tc.url), c.Redis.Username, c.Redis.Password, tc.username, tc.pass)
			}
		})
	}
}

// A rule may say how its keys are laid out, in any case, and which hash
// field is the counter; [defaults] may too, for keys no rule covers.
func TestRuleLayoutAndField(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", `
[defaults]
layout = "counter"

[[rule]]
pattern = "rate:*"
layout = "GCRA"

[[rule]]
pattern = "usage:*"
field = "hits"

[[rule]]
pattern = "bucket:*"
field = "tokens_left"
layout = "bucket"

[[rule]]
pattern = "rl:*"
layout = "auto"

[[rule]]
pattern = "fq:*"
field_ttls = true
field = "api"
`)
	c, err := load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Rule{
		{Pattern: "rate:*", ExpectTTL: true, Layout: model.LayoutGCRA},
		{Pattern: "usage:*", ExpectTTL: true, Field: "hits"},
		{Pattern: "bucket:*", ExpectTTL: true, Layout: model.LayoutBucket, Field: "tokens_left"},
		{Pattern: "rl:*", ExpectTTL: true, Layout: model.LayoutAuto},
		{Pattern: "fq:*", ExpectTTL: true, FieldTTLs: true, Field: "api"},
	}
	if !reflect.DeepEqual(c.Rules.List, want) || c.Rules.Fallback.Layout != model.LayoutCounter {
		t.Errorf("rules %+v, fallback %+v\nwant %+v, fallback layout counter", c.Rules.List, c.Rules.Fallback, want)
	}
}

// A rule may name the field of a JSON object or msgpack map that holds its
// keys' count, with the layouts that read one; [defaults] may too.
func TestRuleJSONField(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", `
[defaults]
json_field = "hits"

[[rule]]
pattern = "fiber:*"
json_field = "currHits"
layout = "window"

[[rule]]
pattern = "rl:*"
json_field = "n"
field = "n"
`)
	c, err := load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Rule{
		{Pattern: "fiber:*", ExpectTTL: true, Layout: model.LayoutWindow, JSONField: "currHits"},
		{Pattern: "rl:*", ExpectTTL: true, JSONField: "n", Field: "n"},
	}
	if !reflect.DeepEqual(c.Rules.List, want) || c.Rules.Fallback.JSONField != "hits" {
		t.Errorf("rules %+v, fallback %+v\nwant %+v, fallback json_field hits", c.Rules.List, c.Rules.Fallback, want)
	}
}

// TestExampleFile keeps config.example.toml working: it must load and mean
// what its comments say.
func TestExampleFile(t *testing.T) {
	c, err := load(t, nil, "--config", "../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	redis := defaultRedis
	redis.URLFrom = "../config.example.toml:21: redis.url" // the same URL, written out
	want := config.Config{
		Redis:    redis,
		Patterns: []string{"ratelimit:*", "views:*"},
		Rules: model.Rules{
			List: []model.Rule{
				{Pattern: "ratelimit:*", Limit: 100, Window: 60 * time.Second, WarnAt: 0.8, ExpectTTL: true},
				{Pattern: "views:*", ExpectTTL: false},
			},
			Fallback: model.Rule{WarnAt: 0.8, ExpectTTL: true},
		},
		File: "../config.example.toml",
	}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("config.example.toml:\n got %+v\nwant %+v", c, want)
	}
}

// TestExampleServers keeps the example's commented [[server]] and
// [[shards]] tables working: uncommented, and [redis]'s url dropped as
// their comment says, they load as two servers, eu-1 with its own budget,
// and a group of both.
func TestExampleServers(t *testing.T) {
	src, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(src), "# Several servers")
	if at < 0 {
		t.Fatal(`config.example.toml has no "# Several servers" paragraph`)
	}
	head, tables := string(src[:at]), string(src[at:])
	head = strings.Replace(head, "\nurl = ", "\n# url = ", 1)
	code := regexp.MustCompile(`(?m)^# (\[\[[a-z]+\]\]$|[a-z_]+ = )`)
	file := writeFile(t, t.TempDir(), "c.toml", head+code.ReplaceAllString(tables, "$1"))
	c, err := load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	servers := c.Targets()
	if len(servers) != 2 || servers[0].Name != "eu-1" || servers[0].Redis.URL != "redis://10.0.0.1:6379/0" || servers[0].Redis.MaxCommands != 5000 ||
		servers[1].Name != "eu-2" || servers[1].Redis.URL != "redis://10.0.0.2:6379/0" {
		t.Errorf("servers %+v; want eu-1 (max_commands 5000) and eu-2 at their URLs", servers)
	}
	if want := []model.ShardGroup{{Name: "limits", Servers: []string{"eu-1", "eu-2"}}}; !reflect.DeepEqual(c.Shards, want) {
		t.Errorf("shards %+v, want %+v", c.Shards, want)
	}
}

func TestSentinel(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "c.toml", `
[redis]
sentinel_master = "from-file"
sentinels = ["10.0.0.5:26379", "10.0.0.6:26379"]
sentinel_username = "file-user"
sentinel_password = "file-pass"
`)
	c, err := load(t, nil, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.SentinelMaster != "from-file" || !slices.Equal(c.Redis.Sentinels, []string{"10.0.0.5:26379", "10.0.0.6:26379"}) {
		t.Errorf("from the file: master %q, sentinels %q", c.Redis.SentinelMaster, c.Redis.Sentinels)
	}
	if c.Redis.SentinelUsername != "file-user" || c.Redis.SentinelPassword != "file-pass" || c.Redis.Password != "" {
		t.Errorf("the Sentinels' own credentials from the file: %q, %q (the master's password %q)", c.Redis.SentinelUsername, c.Redis.SentinelPassword, c.Redis.Password)
	}
	c, err = load(t, map[string]string{"REDIS_SENTINEL_USERNAME": "env-user", "REDIS_SENTINEL_PASSWORD": "env-pass"}, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.SentinelUsername != "env-user" || c.Redis.SentinelPassword != "env-pass" {
		t.Errorf("the environment must beat the file: %q, %q", c.Redis.SentinelUsername, c.Redis.SentinelPassword)
	}

	c, err = load(t, nil, "--config", file, "--sentinel-master", "mymaster", "--sentinel", "s1:26379", "--sentinel", "s2:26380")
	if err != nil {
		t.Fatal(err)
	}
	if c.Redis.SentinelMaster != "mymaster" || !slices.Equal(c.Redis.Sentinels, []string{"s1:26379", "s2:26380"}) {
		t.Errorf("flags must beat the file: master %q, sentinels %q", c.Redis.SentinelMaster, c.Redis.Sentinels)
	}

	if _, err := load(t, nil, "--sentinel", "redis://s1:26379"); err == nil || !strings.Contains(err.Error(), `--sentinel: "redis://s1:26379" is not an address`) {
		t.Errorf("a URL given as a Sentinel address: %v", err)
	}
	bad := writeFile(t, dir, "bad.toml", "[redis]\nsentinels = \"s1:26379\"\n")
	if _, err := load(t, nil, "--config", bad); err == nil || !strings.Contains(err.Error(), "bad.toml:2: redis.sentinels:") {
		t.Errorf("sentinels given as a string, not an array: %v", err)
	}
	if _, err := load(t, nil, "--url", "rediss+sentinel://s1:26379/0?master_name=m"); err != nil {
		t.Errorf("rediss+sentinel:// refused: %v", err)
	}
}

// A budget of commands is the command's own default until one is given; 0
// says there is none, which is not the same as not saying.
func TestMaxCommands(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file string
		args []string
		want int64
	}{
		{"unsaid", "", nil, 0},
		{"file 0", "[redis]\nmax_commands = 0\n", nil, config.NoCommandLimit},
		{"file", "[redis]\nmax_commands = 20000\n", nil, 20000},
		{"flag 0 beats file", "[redis]\nmax_commands = 20000\n", []string{"--max-commands", "0"}, config.NoCommandLimit},
		{"flag", "", []string{"--max-commands", "500"}, 500},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "c.toml", tc.file)
			c, err := load(t, nil, append([]string{"--config", file}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.MaxCommands != tc.want {
				t.Errorf("file %q, flags %q: MaxCommands = %d, want %d", tc.file, tc.args, c.Redis.MaxCommands, tc.want)
			}
		})
	}
}

// The most fields a hash read field by field shows: the default, the
// file's, the environment's over the file's and the flag's over both.
func TestMaxFields(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		file string
		env  map[string]string
		args []string
		want int64
	}{
		{"unsaid", "", nil, nil, int64(model.DefaultMaxFields)},
		{"file", "[redis]\nmax_fields = 7\n", nil, nil, 7},
		{"env beats file", "[redis]\nmax_fields = 7\n", map[string]string{"COUNTERTOP_MAX_FIELDS": "30"}, nil, 30},
		{"flag beats env", "[redis]\nmax_fields = 7\n", map[string]string{"COUNTERTOP_MAX_FIELDS": "30"}, []string{"--max-fields", "10000"}, 10000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, dir, "c.toml", tc.file)
			c, err := load(t, tc.env, append([]string{"--config", file}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if c.Redis.MaxFields != tc.want {
				t.Errorf("file %q, env %v, flags %q: MaxFields = %d, want %d", tc.file, tc.env, tc.args, c.Redis.MaxFields, tc.want)
			}
		})
	}
}
