package config

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/countertop/countertop/internal/words"
	"github.com/countertop/countertop/model"
)

// MaxServers bounds the servers one countertop reads: far more than a
// limiter's shards or a company's regions, and few enough that each has
// its own line in a report and its own connections.
const MaxServers = 64

// maxServerName bounds a server's name, which every row of the server
// shows.
const maxServerName = 64

// Server is one of the servers to read: its name, and how to reach and
// watch it.
type Server struct {
	// Name is how rows, reports and messages name it: its [[server]]
	// table's name, else its host:port (see Label).
	Name string
	// Redis is how to reach it and watch it: the settings of [redis], the
	// environment and the flags, with its [[server]] table's on top.
	Redis Redis
}

// Targets returns the servers to read, in the order chosen: Servers, or
// the one server Redis names.
func (c Config) Targets() []Server {
	if len(c.Servers) > 0 {
		return c.Servers
	}
	return []Server{{Name: Label(c.Redis), Redis: c.Redis}}
}

// For returns c as the config of s alone: s's settings in Redis, and s
// the one server of Targets.
func (c Config) For(s Server) Config {
	c.Redis, c.Servers = s.Redis, []Server{s}
	return c
}

// Label is the name of the server r reaches when nothing names it: its
// host:port (with /DB for a database other than 0), a Sentinel master's
// name, or a socket's path. It holds no credentials.
func Label(r Redis) string {
	if r.SentinelMaster != "" {
		return r.SentinelMaster
	}
	start, at, _ := userInfo(r.URL)
	scheme := strings.ToLower(r.URL[:max(0, strings.Index(r.URL, "://"))])
	rest := r.URL[max(start, at+1):] // the hosts, path and options
	rest, _, _ = strings.Cut(rest, "#")
	rest, query, _ := strings.Cut(rest, "?")
	options, _ := url.ParseQuery(query)
	if strings.HasSuffix(scheme, "+sentinel") && options.Get("master_name") != "" {
		return options.Get("master_name")
	}
	host, path := rest, ""
	if i := strings.IndexByte(rest, '/'); i >= 0 {
		host, path = rest[:i], rest[i:]
	}
	db := strings.Trim(path, "/")
	if scheme == "unix" {
		host, db = path, ""
	} else if _, _, err := net.SplitHostPort(host); err != nil && !strings.Contains(host, ",") {
		host = net.JoinHostPort(host, cliPort)
	}
	if options.Has("db") {
		db = options.Get("db") // go-redis reads it after the path
	}
	if p, err := url.PathUnescape(db); err == nil {
		db = p
	}
	if db != "" && db != "0" {
		host += "/" + db
	}
	return host
}

// checkServerName refuses a name that rows, reports and the filter could
// not show as it is.
func checkServerName(s string) error {
	switch {
	case s == "":
		return errors.New(`"" names no server: give a name, like eu-1`)
	case len(s) > maxServerName:
		return fmt.Errorf("%q is longer than %d characters, more than a server's name needs: shorten it", model.Printable(s), maxServerName)
	case strings.IndexFunc(s, func(r rune) bool {
		return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || strings.ContainsRune("-_.:", r))
	}) >= 0:
		return fmt.Errorf("%q cannot name a server: use letters, digits, '-', '_', '.' and ':', like eu-1", model.Printable(s))
	}
	return nil
}

// serverTable is a [[server]] table as the file gives it: its settings are
// applied when the servers are chosen, over those of [redis], the
// environment and the flags.
type serverTable struct {
	dir   string      // the config file's directory, for TLS files named relative to it
	field string      // "server[N]", for messages
	at    string      // "FILE:LINE" of its header
	name  string      // "" when it has none
	keys  []serverKey // in file order, each checked already
}

// serverKey is one setting of a [[server]] table.
type serverKey struct {
	s    *Setting
	v    any    // as TOML gave it
	from string // "FILE:LINE: server[N].key", for URLFrom
}

// shardsTable is a [[shards]] table: a group of servers that are shards of
// one limiter.
type shardsTable struct {
	at, field string // its header's "FILE:LINE", and "shards[N]"
	name      string
	servers   []string
	serversAt string // "FILE:LINE: shards[N].servers"
}

// shardsKeys are the keys a [[shards]] table takes.
var shardsKeys = []string{"name", "servers"}

// tableHeader reads the header of the index-th [[server]] or [[shards]]
// table (table), of TOML type typ, whose keys are tbl. Problems of the
// table as a whole that are no reason to skip its keys go to errs.
func (c *Config) tableHeader(table string, index int, typ string, tbl any, at, field string, errs *[]error) error {
	if typ != "ArrayHash" {
		return fmt.Errorf("must be written as [[%s]] tables, one per %s", table, map[string]string{"server": "server", "shards": "group of shards"}[table])
	}
	keys, _ := tbl.(map[string]any)
	switch table {
	case "server":
		c.tables[index].at, c.tables[index].field = at, field
		if index == MaxServers {
			*errs = append(*errs, fmt.Errorf("%s: %s: more than %d servers, more than countertop reads at once: split them over several config files", at, field, MaxServers))
		}
		if keys["url"] == nil {
			*errs = append(*errs, fmt.Errorf(`%s: %s: has no url (add url = "redis://host:port/0" to it)`, at, field))
		}
	case "shards":
		c.shardTables[index].at, c.shardTables[index].field = at, field
		for _, key := range shardsKeys {
			if keys[key] == nil {
				*errs = append(*errs, fmt.Errorf(`%s: %s: has no %s (add %s = %s to it)`, at, field, key, key, map[string]string{"name": `"limits"`, "servers": `["a", "b"]`}[key]))
			}
		}
	}
	return nil
}

// serverKey reads key of the [[server]] table t, of value v, written at at
// (as field): its name, or a setting of [redis] that a server may have of
// its own, checked now and applied when the servers are chosen.
func (c *Config) serverKey(t *serverTable, key string, v any, at, field string) error {
	if key == "name" {
		name, err := tomlString(v)
		if err == nil {
			err = checkServerName(name)
		}
		if err != nil {
			return err
		}
		for _, other := range c.tables {
			if other.name == name {
				return fmt.Errorf("%q is the name of %s at %s too: give each server a name of its own", name, other.field, other.at)
			}
		}
		t.name = name
		return nil
	}
	s := settingByKey("redis." + key)
	if s == nil || !s.PerServer {
		return errUnknownKey
	}
	var scratch Config
	if err := s.value.toml(&scratch, v, t.dir); err != nil {
		return err
	}
	t.keys = append(t.keys, serverKey{s: s, v: v, from: at + ": " + field})
	return nil
}

// shardsKey reads key of the [[shards]] table t, of value v, written at at.
func (c *Config) shardsKey(t *shardsTable, key string, v any, at string) error {
	var err error
	switch key {
	case "name":
		if t.name, err = tomlString(v); err == nil {
			err = checkServerName(t.name)
		}
	case "servers":
		t.servers, err = tomlStrings(v, `an array of the servers' names in quotes, like ["a", "b"]`, checkServerName)
		t.serversAt = at + ": " + t.field + ".servers"
	default:
		return errUnknownKey
	}
	return err
}

// checkShards checks the [[shards]] tables against the [[server]] tables,
// once the file is read, and keeps the groups in c.Shards: each names at
// least two servers, each a [[server]]'s name, in no other group; and no
// group has the name of a server or of another group.
func (c *Config) checkShards() []error {
	var errs []error
	groupOf := make(map[string]string) // a server's group
	names := c.tableNames()
	for _, t := range c.shardTables {
		if t.name == "" || t.servers == nil {
			continue // said already
		}
		var bad []string
		switch {
		case slices.Contains(names, t.name):
			bad = append(bad, fmt.Sprintf("%q is a server's name too: give the group a name of its own", t.name))
		case slices.ContainsFunc(c.Shards, func(g model.ShardGroup) bool { return g.Name == t.name }):
			bad = append(bad, fmt.Sprintf("%q is the name of another [[shards]] group too: give each group a name of its own", t.name))
		}
		var servers []string
		for _, s := range t.servers {
			switch {
			case !slices.Contains(names, s):
				bad = append(bad, fmt.Sprintf("%q is no [[server]]'s name (%s)", s, knownNames("the servers are", names)))
			case slices.Contains(servers, s):
				bad = append(bad, fmt.Sprintf("%q is named twice: name each server once", s))
			case groupOf[s] != "":
				bad = append(bad, fmt.Sprintf("%q is a shard of %q already: a server is a shard of one group at most", s, groupOf[s]))
			default:
				servers = append(servers, s)
				groupOf[s] = t.name
			}
		}
		if len(bad) == 0 && len(servers) < 2 {
			bad = append(bad, "a group of shards is two servers or more: name every server of the limiter")
		}
		for _, b := range bad {
			errs = append(errs, fmt.Errorf("%s: %s", t.serversAt, b))
		}
		if len(bad) == 0 {
			c.Shards = append(c.Shards, model.ShardGroup{Name: t.name, Servers: servers})
		}
	}
	return errs
}

// tableNames returns the names of the [[server]] tables that have one.
func (c *Config) tableNames() []string {
	var names []string
	for _, t := range c.tables {
		if t.name != "" {
			names = append(names, t.name)
		}
	}
	return names
}

// knownNames says which names there are, after intro ("the servers are"),
// or that there are none.
func knownNames(intro string, names []string) string {
	if len(names) == 0 {
		return "no [[server]] table has a name"
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	return intro + " " + words.And(quoted)
}

// chooseServers sets Servers, once every source is applied, from what
// names them: --server (the tables, or the groups' tables, it names) and
// --url given more than once, else --url, REDIS_URL or redis-cli's -h, -p,
// -s and -n (one server, in Redis), else every [[server]] table, else the
// one server of [redis] or the default. given maps each flag given to its
// name as typed.
func (c *Config) chooseServers(given map[string]string) error {
	picks, urls := c.picks, c.urls
	c.picks, c.urls = nil, nil
	defer func() { c.tables, c.shardTables = nil, nil }()
	var address []string // redis-cli's flags given
	for _, name := range []string{"host", "port", "socket", "db"} {
		if given[name] != "" {
			address = append(address, given[name])
		}
	}
	var servers []Server
	switch {
	case len(picks) > 0 || len(urls) > 1:
		if len(address) > 0 {
			return fmt.Errorf("%s cannot go with %s, which chooses servers of their own: give each server with --url, or in a [[server]] table", words.And(address), cmp.Or(given["server"], given["url"]))
		}
		tables, err := c.picked(picks, given["server"])
		if err != nil {
			return err
		}
		for _, t := range tables {
			servers = append(servers, c.tableServer(t, given))
		}
		if len(urls) == 0 && given["url"] != "" {
			urls = []string{c.Redis.URL}
		}
		for _, u := range urls {
			servers = append(servers, c.urlServer(u, given))
		}
	case given["url"] != "" || c.Redis.URLFrom == "REDIS_URL" || len(address) > 0 || len(c.tables) == 0:
		if given["url"] != "" {
			urlCredentials(&c.Redis, c.Redis.URL, given)
		}
		return nil // one server, as Redis says
	default:
		if c.Redis.URLFrom != "" {
			return fmt.Errorf("%s names one server, and the [[server]] tables %d more: move it into a [[server]] table of its own, or pick servers with --server NAME", c.Redis.URLFrom, len(c.tables))
		}
		for i := range c.tables {
			servers = append(servers, c.tableServer(&c.tables[i], given))
		}
	}
	if len(servers) > MaxServers {
		return fmt.Errorf("%d servers are more than countertop reads at once (%d): pick fewer with --server", len(servers), MaxServers)
	}
	for i, s := range servers {
		for _, other := range servers[:i] {
			switch {
			case other.Name == s.Name:
				return fmt.Errorf("two servers are named %q: give each a [[server]] table with a name of its own, or leave one out", s.Name)
			case RedactURL(other.Redis.URL) == RedactURL(s.Redis.URL) && other.Redis.SentinelMaster == s.Redis.SentinelMaster:
				return fmt.Errorf("%q and %q are the same server (%s): read it once", other.Name, s.Name, RedactURL(s.Redis.URL))
			}
		}
	}
	c.Servers = servers
	return nil
}

// picked returns the [[server]] tables that the names given to --server
// (typed so) pick: a table's name, or a [[shards]] group's, which picks
// its every server; each table once, in the order named.
func (c *Config) picked(picks []string, typed string) ([]*serverTable, error) {
	var tables []*serverTable
	add := func(name string) {
		for i := range c.tables {
			if t := &c.tables[i]; t.name == name && !slices.Contains(tables, t) {
				tables = append(tables, t)
			}
		}
	}
	for _, name := range picks {
		if i := slices.IndexFunc(c.Shards, func(g model.ShardGroup) bool { return g.Name == name }); i >= 0 {
			for _, s := range c.Shards[i].Servers {
				add(s)
			}
			continue
		}
		if !slices.Contains(c.tableNames(), name) {
			return nil, c.unknownPick(name, typed)
		}
		add(name)
	}
	return tables, nil
}

// unknownPick is the error for --server name (typed so) that names no
// table nor group.
func (c *Config) unknownPick(name, typed string) error {
	if c.File == "" {
		return fmt.Errorf("%s %q: no config file was read, and %s picks a server of its [[server]] tables: give the file with --config, or the server with --url", typed, name, typed)
	}
	known := knownNames("its servers are", c.tableNames())
	var groups []string
	for _, g := range c.Shards {
		groups = append(groups, fmt.Sprintf("%q", g.Name))
	}
	if len(groups) > 0 {
		known += ", and its groups of shards " + words.And(groups)
	}
	return fmt.Errorf("%s %q names no server of %s: %s", typed, name, c.File, known)
}

// tableServer returns the server of the [[server]] table t: Redis, which
// holds the settings of [redis], the environment and the flags, with the
// table's on top (but for those of a flag given) and its URL. given maps
// each flag given to its name as typed.
func (c *Config) tableServer(t *serverTable, given map[string]string) Server {
	server := Config{Redis: c.Redis}
	for _, k := range t.keys {
		if k.s.Key == "redis.url" { // its credentials beat those of [redis] and the environment
			url, _ := tomlURL(k.v)
			urlCredentials(&server.Redis, url, given)
		}
	}
	for _, k := range t.keys { // after: its username and password beat its URL's
		if k.s.Flag != "" && given[k.s.Flag] != "" && k.s.Key != "redis.url" {
			continue // a flag beats the table
		}
		k.s.value.toml(&server, k.v, t.dir) // checked as the file was read
		if k.s.origin != nil {
			*k.s.origin(&server) = k.from
		}
	}
	return Server{Name: cmp.Or(t.name, Label(server.Redis)), Redis: server.Redis}
}

// urlServer returns the server of u, one of several --url: Redis's
// settings, with its URL. given maps each flag given to its name as typed.
func (c *Config) urlServer(u string, given map[string]string) Server {
	r := c.Redis
	r.URL, r.URLFrom = u, given["url"]
	urlCredentials(&r, u, given)
	return Server{Name: Label(r), Redis: r}
}

// urlCredentials makes the user and password in rawURL beat those r holds
// from the environment and the file, as a flag beats them, unless given
// says that --user or --pass was given: the others would otherwise
// replace the URL's. A password alone
// (redis://:pw@host) is the default user's.
func urlCredentials(r *Redis, rawURL string, given map[string]string) {
	start, at, colon := userInfo(rawURL)
	if at > start && given["user"] == "" {
		r.Username = ""
	}
	if colon >= 0 && given["pass"] == "" {
		r.Password = ""
	}
}

// checkServerTLS checks the TLS settings of each server, as finish checks
// Redis's.
func (c *Config) checkServerTLS() error {
	for _, s := range c.Servers {
		if (s.Redis.TLS.CertFile == "") != (s.Redis.TLS.KeyFile == "") {
			return fmt.Errorf("server %q: a TLS client certificate needs both a certificate and a key file: set both tls_cert and tls_key in its [[server]] table", s.Name)
		}
	}
	return nil
}

// ServerNames returns the names --server takes in the config file that
// --config (configFlag) names, or that is found as Load finds it: the
// [[server]] tables' and the [[shards]] groups'. It is for completion: a
// file that cannot be read, or has errors, gives what it can.
func ServerNames(configFlag string, getenv func(string) string) []string {
	path, err := configPath(configFlag, getenv)
	if err != nil || path == "" {
		return nil
	}
	src, err := os.ReadFile(path)
	if err != nil || len(src) > maxFileSize {
		return nil
	}
	var c Config
	_ = c.applyTOML(path, string(src)) // what it could read, errors or not
	names := c.tableNames()
	for _, g := range c.Shards {
		names = append(names, g.Name)
	}
	return names
}
