package config_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/countertop/countertop/config"
	"github.com/countertop/countertop/model"
)

// serversFile names three servers, two of them shards of one limiter,
// with settings of their own over those of [redis].
const serversFile = `
[redis]
mode = "poll"
username = "shared-user"
password = "shared-pass"

[[server]]
name = "eu-1"
url = "redis://10.0.0.1:6379/0"
max_commands = 500

[[server]]
name = "eu-2"
url = "redis://ring-user:ring-pass@10.0.0.2:6379/0"
mode = "events"

[[server]]
url = "redis://10.0.1.9:6380/2"
password = "own-pass"

[[shards]]
name = "limits"
servers = ["eu-1", "eu-2"]
`

// names returns the names of c's servers, as Targets gives them.
func names(c config.Config) []string {
	var out []string
	for _, s := range c.Targets() {
		out = append(out, s.Name)
	}
	return out
}

// Every [[server]] is read when nothing names one, each with [redis]'s
// settings under its own, and its URL's credentials over those it would
// inherit.
func TestServerTables(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", serversFile)
	c, err := load(t, map[string]string{"REDIS_PASSWORD": "env-pass"}, "--config", file)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := names(c), []string{"eu-1", "eu-2", "10.0.1.9:6380/2"}; !slices.Equal(got, want) {
		t.Fatalf("servers %q, want %q", got, want)
	}
	eu1, eu2, third := c.Servers[0].Redis, c.Servers[1].Redis, c.Servers[2].Redis
	if eu1.Mode != model.WatchPoll || eu1.MaxCommands != 500 || eu1.Username != "shared-user" || eu1.Password != "env-pass" {
		t.Errorf("eu-1 takes [redis]'s mode, its own budget, [redis]'s user and the environment's password: %s", eu1)
	}
	if eu1.URLFrom != file+":9: server[1].url" {
		t.Errorf("eu-1's URL comes from %q", eu1.URLFrom)
	}
	if eu2.Mode != model.WatchEvents || eu2.MaxCommands != 0 || eu2.Username != "" || eu2.Password != "" {
		t.Errorf("eu-2 has its own mode, no budget set, and its URL's credentials over the others': %s", eu2)
	}
	if third.Password != "own-pass" || third.Username != "shared-user" {
		t.Errorf("a table's password beats the environment's: %s", third)
	}
	if want := []model.ShardGroup{{Name: "limits", Servers: []string{"eu-1", "eu-2"}}}; !reflect.DeepEqual(c.Shards, want) {
		t.Errorf("shards %+v, want %+v", c.Shards, want)
	}
	if c.Redis.URL != config.DefaultURL {
		t.Errorf("Redis.URL %q: the tables do not change [redis]'s", c.Redis.URL)
	}

	// A flag beats every table; a table's URL is its own.
	c, err = load(t, nil, "--config", file, "--mode", "tracking", "--pass", "flag-pass")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range c.Servers {
		if s.Redis.Mode != model.WatchTracking || s.Redis.Password != "flag-pass" {
			t.Errorf("%s: mode %s, password %q: the flags beat the tables", s.Name, s.Redis.Mode, s.Redis.Password)
		}
	}
	for i, s := range c.Targets() {
		if one := c.For(s); !reflect.DeepEqual(one.Redis, s.Redis) || len(one.Targets()) != 1 || one.Targets()[0].Name != names(c)[i] {
			t.Errorf("For(%s) = %+v", s.Name, one.Targets())
		}
	}
}

// --server picks tables by name, or a group's every table; --url given
// again adds a server each time; either way the order is the one given.
func TestChoosingServers(t *testing.T) {
	file := writeFile(t, t.TempDir(), "c.toml", serversFile)
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want []string
	}{
		{"one by name", nil, []string{"--server", "eu-2"}, []string{"eu-2"}},
		{"in the order named", nil, []string{"--server", "eu-2", "--server", "eu-1"}, []string{"eu-2", "eu-1"}},
		{"a group", nil, []string{"--server", "limits"}, []string{"eu-1", "eu-2"}},
		{"a group and one of its servers, each once", nil, []string{"--server", "eu-1", "--server", "limits"}, []string{"eu-1", "eu-2"}},
		{"a table and a URL", nil, []string{"--server", "eu-1", "--url", "10.0.5.5:6379"}, []string{"eu-1", "10.0.5.5:6379"}},
		{"--url alone is one server, as ever", nil, []string{"--url", "10.0.5.5:6379"}, []string{"10.0.5.5:6379"}},
		{"REDIS_URL is one server", map[string]string{"REDIS_URL": "redis://10.0.5.6:6379/0"}, nil, []string{"10.0.5.6:6379"}},
		{"-p is one server", nil, []string{"-p", "6390"}, []string{"127.0.0.1:6390"}},
		{"--url twice", nil, []string{"--url", "redis://a:1/0", "-u", "b:2"}, []string{"a:1", "b:2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := load(t, tc.env, append([]string{"--config", file}, tc.args...)...)
			if err != nil {
				t.Fatal(err)
			}
			if got := names(c); !slices.Equal(got, tc.want) {
				t.Errorf("servers %q, want %q", got, tc.want)
			}
		})
	}

	// Each of several --url keeps its own credentials, over those of the
	// environment, unless a flag gives them.
	c, err := load(t, map[string]string{"REDIS_USERNAME": "env-user", "REDIS_PASSWORD": "env-pass"},
		"--url", "redis://u1:p1@a:1/0", "--url", "redis://b:2/0")
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.Servers[0].Redis, c.Servers[1].Redis
	if a.Username != "" || a.Password != "" || b.Username != "env-user" || b.Password != "env-pass" {
		t.Errorf("credentials: a %q %q, b %q %q", a.Username, a.Password, b.Username, b.Password)
	}
	if a.URLFrom != "--url" || b.URL != "redis://b:2/0" {
		t.Errorf("a from %q, b's URL %q", a.URLFrom, b.URL)
	}
}

// Each mistake in choosing servers is one sentence that says what to do.
func TestServerErrors(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "c.toml", serversFile)
	many := ""
	for i := range config.MaxServers + 1 {
		many += fmt.Sprintf("[[server]]\nname = \"s%d\"\nurl = \"redis://h:%d/0\"\n", i, 1000+i)
	}
	manyFile := writeFile(t, dir, "many.toml", many)
	for _, tc := range []struct {
		name string
		src  string // the config file, "" for serversFile
		env  map[string]string
		args []string
		want string
	}{
		{"unknown --server", "", nil, []string{"--server", "eu-3"},
			`--server "eu-3" names no server of FILE: its servers are "eu-1" and "eu-2", and its groups of shards "limits"`},
		{"--server without a file", "-", nil, []string{"--server", "eu-1"},
			`--server "eu-1": no config file was read, and --server picks a server of its [[server]] tables: give the file with --config, or the server with --url`},
		{"a bad name to --server", "", nil, []string{"--server", "eu 1"},
			`--server: "eu 1" cannot name a server: use letters, digits, '-', '_', '.' and ':', like eu-1`},
		{"-h with --server", "", nil, []string{"--server", "eu-1", "-h", "10.0.0.3"},
			`-h cannot go with --server, which chooses servers of their own: give each server with --url, or in a [[server]] table`},
		{"the same server twice", "-", nil, []string{"--url", "redis://a:1/0", "--url", "a:1"},
			`two servers are named "a:1": give each a [[server]] table with a name of its own, or leave one out`},
		{"the same URL under two names", "[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[server]]\nname = \"b\"\nurl = \"redis://h:1/0\"\n", nil, nil,
			`"a" and "b" are the same server (redis://h:1/0): read it once`},
		{"[redis] url beside the tables", "[redis]\nurl = \"redis://h:9/0\"\n[[server]]\nurl = \"redis://h:1/0\"\n", nil, nil,
			`FILE:2: redis.url names one server, and the [[server]] tables 1 more: move it into a [[server]] table of its own, or pick servers with --server NAME`},
		{"too many servers", "many", nil, nil,
			fmt.Sprintf("MANY:%d: server[65]: more than 64 servers, more than countertop reads at once: split them over several config files", 3*64+1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := file
			switch tc.src {
			case "":
			case "-":
				path = ""
			case "many":
				path = manyFile
			default:
				path = writeFile(t, dir, "other.toml", tc.src)
			}
			args := tc.args
			if path != "" {
				args = append([]string{"--config", path}, args...)
			}
			_, err := load(t, tc.env, args...)
			want := strings.ReplaceAll(strings.ReplaceAll(tc.want, "FILE", path), "MANY", manyFile)
			if err == nil || err.Error() != want {
				t.Errorf("error:\n got %v\nwant %s", err, want)
			}
		})
	}
}

// The mistakes of [[server]] and [[shards]] tables are found where they
// are written, as every key's are.
func TestServerTableErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"no url",
			"[[server]]\nname = \"a\"\n",
			`:1: server[1]: has no url (add url = "redis://host:port/0" to it)`},
		{"the same name twice",
			"[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[server]]\nname = \"a\"\nurl = \"redis://h:2/0\"\n",
			`:5: server[2].name: "a" is the name of server[1] at PATH:1 too: give each server a name of its own`},
		{"a name with a space",
			"[[server]]\nname = \"eu 1\"\nurl = \"redis://h:1/0\"\n",
			`:2: server[1].name: "eu 1" cannot name a server: use letters, digits, '-', '_', '.' and ':', like eu-1`},
		{"a bad url, password hidden",
			"[[server]]\nurl = \"redis://u:hunter2@h:99999/0\"\n",
			`:2: server[1].url: "redis://u:***@h:99999/0" has port 99999, which does not exist (use a port from 1 to 65535, like 6379)`},
		{"a setting every server shares",
			"[[server]]\nurl = \"redis://h:1/0\"\ninterval = \"5s\"\n",
			`:3: server[1].interval: unknown key`},
		{"a mistyped key",
			"[[server]]\nurl = \"redis://h:1/0\"\nmax_comands = 5000\n",
			`:3: server[1].max_comands: unknown key (did you mean "max_commands"?)`},
		{"a bad budget",
			"[[server]]\nurl = \"redis://h:1/0\"\nmax_commands = 5\n",
			`:3: server[1].max_commands: 5 commands a second is too few for the rows on screen to be read every interval (use 100 or more, like 20000, or 0 for no limit)`},
		{"a single table",
			"[server]\nurl = \"redis://h:1/0\"\n",
			`:1: server: must be written as [[server]] tables, one per server`},
		{"a mistyped table",
			"[[servers]]\nurl = \"redis://h:1/0\"\n",
			`:1: servers: unknown key (did you mean "server"?)`},
		{"a group of an unknown server",
			"[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[shards]]\nname = \"g\"\nservers = [\"a\", \"b\"]\n",
			`:6: shards[1].servers: "b" is no [[server]]'s name (the servers are "a")`},
		{"a group of one",
			"[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[shards]]\nname = \"g\"\nservers = [\"a\"]\n",
			`:6: shards[1].servers: a group of shards is two servers or more: name every server of the limiter`},
		{"a server in two groups",
			"[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[server]]\nname = \"b\"\nurl = \"redis://h:2/0\"\n" +
				"[[shards]]\nname = \"g\"\nservers = [\"a\", \"b\"]\n[[shards]]\nname = \"h\"\nservers = [\"b\", \"a\"]\n",
			`:12: shards[2].servers: "b" is a shard of "g" already: a server is a shard of one group at most` + "\n" +
				`PATH:12: shards[2].servers: "a" is a shard of "g" already: a server is a shard of one group at most`},
		{"a group named as a server",
			"[[server]]\nname = \"a\"\nurl = \"redis://h:1/0\"\n[[server]]\nname = \"b\"\nurl = \"redis://h:2/0\"\n" +
				"[[shards]]\nname = \"a\"\nservers = [\"a\", \"b\"]\n",
			`:9: shards[1].servers: "a" is a server's name too: give the group a name of its own`},
		{"a group without servers",
			"[[shards]]\nname = \"g\"\n",
			`:1: shards[1]: has no servers (add servers = ["a", "b"] to it)`},
		{"servers not an array",
			"[[shards]]\nname = \"g\"\nservers = \"a\"\n",
			`:3: shards[1].servers: must be an array of the servers' names in quotes, like ["a", "b"], not a string`},
	} {
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

// A server that nothing names is called by its address, never with its
// credentials.
func TestLabel(t *testing.T) {
	for _, tc := range []struct {
		redis config.Redis
		want  string
	}{
		{config.Redis{URL: "redis://127.0.0.1:6379/0"}, "127.0.0.1:6379"},
		{config.Redis{URL: "redis://user:p%40ss@redis.internal:6380/0"}, "redis.internal:6380"},
		{config.Redis{URL: "rediss://redis.internal/3"}, "redis.internal:6379/3"},
		{config.Redis{URL: "redis://h:1/0?db=4"}, "h:1/4"},
		{config.Redis{URL: "redis://[::1]:7000"}, "[::1]:7000"},
		{config.Redis{URL: "unix:///run/redis.sock?db=1"}, "/run/redis.sock/1"},
		{config.Redis{URL: "unix:///run/redis.sock"}, "/run/redis.sock"},
		{config.Redis{URL: "redis+sentinel://:pw@s1:26379,s2:26379/0?master_name=mymaster"}, "mymaster"},
		{config.Redis{URL: "redis://127.0.0.1:6379/0", SentinelMaster: "cache"}, "cache"},
	} {
		if got := config.Label(tc.redis); got != tc.want {
			t.Errorf("Label(%s) = %q, want %q", tc.redis.URL, got, tc.want)
		}
	}
}

// Completion offers the names --server takes: the tables' and the groups'.
func TestServerNames(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "c.toml", serversFile)
	if got, want := config.ServerNames(file, func(string) string { return "" }), []string{"eu-1", "eu-2", "limits"}; !slices.Equal(got, want) {
		t.Errorf("ServerNames = %q, want %q", got, want)
	}
	xdg := writeFile(t, dir, "xdg/countertop/config.toml", serversFile+"[[server]]\nname = \"us\"\nurl = \"oops\"\n")
	_ = xdg
	env := map[string]string{"XDG_CONFIG_HOME": dir + "/xdg"}
	if got := config.ServerNames("", func(k string) string { return env[k] }); !slices.Contains(got, "us") || !slices.Contains(got, "eu-1") {
		t.Errorf("ServerNames of the file Load would find, bad url and all = %q", got)
	}
	if got := config.ServerNames(dir+"/missing.toml", func(string) string { return "" }); got != nil {
		t.Errorf("ServerNames of no file = %q", got)
	}
}
