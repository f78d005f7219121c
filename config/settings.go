package config

import (
	"fmt"
	"slices"
	"time"

	"github.com/countertop/countertop/model"
)

// Setting is one of countertop's settings: the flag, config-file key and
// environment variable that set it, its default, its help and the
// subcommands it matters to. Register, Load and the config-file reader all
// work from the one list that Settings returns, so that a new setting is one
// entry in it.
type Setting struct {
	Flag     string   // the flag's name, without dashes; "" for none
	Short    string   // its one-letter spelling, as redis-cli has it ("u" for --url); "" for none
	Key      string   // its key in the config file, as table.key ("redis.url"); "" for none
	Env      string   // the environment variable that sets it, unless the flag is given; "" for none
	Default  string   // the value before any source sets one, as a flag would give it; "" for none (false)
	Usage    string   // the flag's help; a word in backquotes names its value (`URL`)
	Values   []string // the values it takes, when they are a list (what completion offers)
	Commands []string // the subcommands that use it, of "dashboard", "snapshot", "check", "incr", "repair" and "serve"
	// PerServer says a [[server]] table may set it for its server alone,
	// under its key's name in [redis] (url, tls_ca, mode): how to reach a
	// server and how to watch it, not what to watch.
	PerServer bool

	value *value // how its text and TOML are read into a Config; nil for --config, which Load reads itself
	// origin, when not nil, is where to note which source gave the value,
	// so that later errors can name it ("--url", "REDIS_URL", "FILE:LINE: redis.url").
	origin func(*Config) *string
}

// Settings returns every setting, in the order Load applies them (and so
// reports their problems).
func Settings() []Setting {
	return slices.Clone(settings)
}

// The subcommands, as Setting.Commands names them: those that connect
// (all), those that read the counters matching the patterns, the one that
// follows changes, and those that write.
var (
	everyCommand  = []string{"dashboard", "snapshot", "check", "incr", "repair", "serve"}
	readCommands  = []string{"dashboard", "snapshot", "check", "repair", "serve"}
	dashboardOnly = []string{"dashboard", "serve"} // serve watches as the dashboard does
	writeCommands = []string{"dashboard", "incr", "repair"}
	readsOnItsOwn = []string{"dashboard", "snapshot", "check", "serve"}
	// watchers follow changes: the dashboard, and snapshot and check with --watch.
	watchers = readsOnItsOwn
)

// settings is the table Settings returns. Its order is the order of Load's
// messages when several flags are wrong.
var settings = []Setting{
	// Credentials in --url beat those of the environment and the file, as
	// every flag does (see urlCredentials, which Load applies).
	{Flag: "url", Short: "u", Key: "redis.url", Env: "REDIS_URL", Default: DefaultURL, Commands: everyCommand, PerServer: true,
		Usage:  "Redis `URL`: redis://[user:password@]host:port/db, host:port, rediss:// for TLS, unix:///path, redis+sentinel:// (env REDIS_URL); repeat to read several servers",
		value:  urlValue,
		origin: func(c *Config) *string { return &c.Redis.URLFrom }},
	{Flag: "server", Commands: everyCommand,
		Usage: "read the server named `NAME` in the config file ([[server]]), or every server of the [[shards]] group so named; repeat for more (default: every [[server]], unless --url or REDIS_URL names one)",
		value: many(checkServerName, "", func(c *Config) *[]string { return &c.picks })},
	// redis-cli's way to name the server, which Load reads itself (see
	// applyAddress): in place of the URL's host, port and database.
	{Flag: "host", Short: "h", Commands: everyCommand,
		Usage: "the server's `HOST`, as redis-cli -h (in place of the URL's; default 127.0.0.1)"},
	{Flag: "port", Short: "p", Commands: everyCommand,
		Usage: "the server's `PORT`, as redis-cli -p (in place of the URL's; default 6379)"},
	{Flag: "socket", Short: "s", Commands: everyCommand,
		Usage: "connect through the unix `SOCKET`, as redis-cli -s (in place of the URL's host and port)"},
	{Flag: "db", Short: "n", Commands: everyCommand,
		Usage: "database number `DB`, as redis-cli -n (in place of the URL's; default 0)"},
	{Flag: "user", Key: "redis.username", Env: "REDIS_USERNAME", Commands: everyCommand, PerServer: true,
		Usage: "log in as the ACL user `NAME`, as redis-cli --user (env REDIS_USERNAME)",
		value: one(anyText, func(c *Config) *string { return &c.Redis.Username })},
	{Flag: "pass", Short: "a", Key: "redis.password", Env: "REDIS_PASSWORD", Commands: everyCommand, PerServer: true,
		Usage: "log in with `PASSWORD`, as redis-cli -a (others on this machine can see it in ps: prefer env REDIS_PASSWORD)",
		value: one(anyText, func(c *Config) *string { return &c.Redis.Password })},
	{Flag: "pattern", Key: "redis.patterns", Commands: readCommands,
		Usage: "watch the keys matching `GLOB`; repeat for more (default: the rules' patterns, else *)",
		value: many(checkPattern, `an array of globs in quotes, like ["ratelimit:*"]`, func(c *Config) *[]string { return &c.Patterns })},
	{Flag: "config", Commands: everyCommand,
		Usage: "read settings from `FILE` (default ./countertop.toml, else $XDG_CONFIG_HOME/countertop/config.toml)"},
	{Flag: "limit", Key: "defaults.limit", Commands: readCommands,
		Usage: "limit `N` of the keys no rule covers (a rule without a limit has none)",
		value: one(limitText, func(c *Config) *float64 { return &c.Rules.Fallback.Limit })},
	{Flag: "window", Key: "defaults.window", Commands: everyCommand,
		Usage: "window of the keys no rule covers and of the rules that set none: the `DURATION` of the TTL a counter without one is given when it is repaired or incremented, like 60s",
		value: one(windowText, func(c *Config) *time.Duration { return &c.Rules.Fallback.Window })},
	{Flag: "mode", Key: "redis.mode", Default: model.WatchAuto.String(), Commands: watchers, PerServer: true, Values: model.WatchModeNames(),
		Usage: "follow changes by `MODE`: " + model.WatchModesAbout(),
		value: one(modeText, func(c *Config) *model.WatchMode { return &c.Redis.Mode })},
	{Flag: "interval", Key: "redis.interval", Default: "1s", Commands: watchers,
		Usage: "re-read the counters every `DURATION` when polling (snapshot and check: with --watch)",
		value: one(durationText, func(c *Config) *time.Duration { return &c.Redis.Interval })},
	{Flag: "discover-every", Key: "redis.discover_every", Commands: dashboardOnly,
		Usage: "SCAN for new keys every `DURATION` (default: the interval)",
		value: one(durationText, func(c *Config) *time.Duration { return &c.Redis.DiscoverEvery })},
	{Flag: "resync-every", Key: "redis.resync_every", Default: "30s", Commands: dashboardOnly,
		Usage: "in events and tracking modes, scan every `DURATION` for keys made or gone without a message, and every tenth time re-read every key, in case a message was lost",
		value: one(durationText, func(c *Config) *time.Duration { return &c.Redis.ResyncEvery })},
	{Flag: "scan-count", Key: "redis.scan_count", Default: "1000", Commands: readCommands,
		Usage: "ask each SCAN call for about `N` keys (its COUNT)",
		value: one(scanCountText, func(c *Config) *int64 { return &c.Redis.ScanCount })},
	{Flag: "max-commands", Key: "redis.max_commands", Commands: readsOnItsOwn, PerServer: true,
		Usage: fmt.Sprintf("send each server (each master of a cluster) at most `N` of countertop's own commands a second, reads, SCANs and pings (not your writes); 0 for no limit (default %d for the dashboard and --watch, no limit for one pass of snapshot and check)", DefaultMaxCommands),
		value: one(maxCommandsText, func(c *Config) *int64 { return &c.Redis.MaxCommands })},
	{Flag: "read-only", Key: "redis.read_only", Commands: writeCommands,
		Usage: "refuse every write",
		value: one(boolText, func(c *Config) *bool { return &c.Redis.ReadOnly })},
	{Flag: "cluster", Key: "redis.cluster", Commands: everyCommand, PerServer: true,
		Usage: "treat the URL as a Redis Cluster seed (also auto-detected)",
		value: one(boolText, func(c *Config) *bool { return &c.Redis.Cluster })},
	{Flag: "sentinel-master", Key: "redis.sentinel_master", Commands: everyCommand, PerServer: true,
		Usage: "find the master named `NAME` through Sentinel (with --sentinel)",
		value: one(anyText, func(c *Config) *string { return &c.Redis.SentinelMaster })},
	{Flag: "sentinel", Key: "redis.sentinels", Commands: everyCommand, PerServer: true,
		Usage: "a Sentinel's `HOST:PORT`; repeat for more (with --sentinel-master; env REDIS_SENTINEL_PASSWORD if Sentinels ask for one)",
		value: many(checkAddr, `an array of addresses in quotes, like ["10.0.0.5:26379"]`, func(c *Config) *[]string { return &c.Redis.Sentinels })},
	{Key: "redis.sentinel_username", Env: "REDIS_SENTINEL_USERNAME", Commands: everyCommand, PerServer: true,
		value: one(anyText, func(c *Config) *string { return &c.Redis.SentinelUsername })},
	{Key: "redis.sentinel_password", Env: "REDIS_SENTINEL_PASSWORD", Commands: everyCommand, PerServer: true,
		value: one(anyText, func(c *Config) *string { return &c.Redis.SentinelPassword })},
	{Flag: "client-name", Key: "redis.client_name", Commands: everyCommand, PerServer: true,
		Usage: "name countertop's connections `NAME` (CLIENT SETNAME), as CLIENT LIST and SLOWLOG show them (default countertop-HOST-PID; the URL's client_name when it gives one)",
		value: one(clientNameText, func(c *Config) *string { return &c.Redis.ClientName })},
	{Flag: "enable-events", Key: "redis.enable_events", Commands: dashboardOnly, PerServer: true,
		Usage: "turn on keyspace notifications on the server (CONFIG SET) if they are off",
		value: one(boolText, func(c *Config) *bool { return &c.Redis.EnableEvents })},
	{Flag: "tls-ca", Key: "redis.tls_ca", Commands: everyCommand, PerServer: true,
		Usage: "CA certificate `FILE` that signed the server's certificate",
		value: one(fileText, func(c *Config) *string { return &c.Redis.TLS.CAFile })},
	{Flag: "tls-cert", Key: "redis.tls_cert", Commands: everyCommand, PerServer: true,
		Usage: "client certificate `FILE` (with --tls-key)",
		value: one(fileText, func(c *Config) *string { return &c.Redis.TLS.CertFile })},
	{Flag: "tls-key", Key: "redis.tls_key", Commands: everyCommand, PerServer: true,
		Usage: "client key `FILE` (with --tls-cert)",
		value: one(fileText, func(c *Config) *string { return &c.Redis.TLS.KeyFile })},
	{Flag: "tls-skip-verify", Key: "redis.tls_skip_verify", Commands: everyCommand, PerServer: true,
		Usage: "accept any server certificate (insecure; for testing)",
		value: one(boolText, func(c *Config) *bool { return &c.Redis.TLS.SkipVerify })},
}

// settingByKey returns the setting whose config-file key is key, nil for none.
func settingByKey(key string) *Setting {
	for i := range settings {
		if settings[i].Key != "" && settings[i].Key == key {
			return &settings[i]
		}
	}
	return nil
}

// A value reads one setting into a Config, from text (a flag, an
// environment variable, the default) or from the config file's TOML.
type value struct {
	isBool bool // its flag takes no value
	isList bool // its flag may be repeated, each time adding an item

	// text applies items, the setting's text: one item, or for a list
	// every time its flag was given. It returns a problem per bad item.
	text func(c *Config, items []string) []error
	// toml applies the config file's value; dir is the file's directory.
	toml func(c *Config, v any, dir string) error
}

// A parser reads one kind of value, as text and as TOML; dir is the
// config file's directory, for the names of files relative to it.
type parser[T any] struct {
	text func(s string) (T, error)
	toml func(v any, dir string) (T, error)
}

// one is the value of a setting of one T, kept at at(c).
func one[T any](p parser[T], at func(*Config) *T) *value {
	_, isBool := any(*new(T)).(bool)
	return &value{
		isBool: isBool,
		text: func(c *Config, items []string) []error {
			var err error
			*at(c), err = p.text(items[len(items)-1])
			if err != nil {
				return []error{err}
			}
			return nil
		},
		toml: func(c *Config, v any, dir string) error {
			var err error
			*at(c), err = p.toml(v, dir)
			return err
		},
	}
}

// many is the value of a setting that is a list of strings, kept at at(c),
// whose every item passes check; want says what the file must give.
func many(check func(string) error, want string, at func(*Config) *[]string) *value {
	return &value{
		isList: true,
		text: func(c *Config, items []string) []error {
			*at(c) = items
			var errs []error
			for _, s := range items {
				if err := check(s); err != nil {
					errs = append(errs, err)
				}
			}
			return errs
		},
		toml: func(c *Config, v any, _ string) error {
			var err error
			*at(c), err = tomlStrings(v, want, check)
			return err
		},
	}
}

// checkedText is the parser of strings that pass check.
func checkedText(check func(string) error) parser[string] {
	return parser[string]{
		text: func(s string) (string, error) { return s, check(s) },
		toml: func(v any, _ string) (string, error) {
			s, err := tomlString(v)
			if err != nil {
				return "", err
			}
			return s, check(s)
		},
	}
}

// anyDir adapts a TOML reader that needs no directory to parser.toml.
func anyDir[T any](read func(any) (T, error)) func(any, string) (T, error) {
	return func(v any, _ string) (T, error) { return read(v) }
}

// The parsers of the settings above: the same checks, and so the same
// words, whatever the source.
var (
	anyText         = checkedText(func(string) error { return nil })
	modeText        = parser[model.WatchMode]{text: model.ParseWatchMode, toml: anyDir(tomlMode)}
	durationText    = parser[time.Duration]{text: parseDuration, toml: anyDir(tomlDuration)}
	windowText      = parser[time.Duration]{text: parseWindow, toml: anyDir(tomlWindow)}
	limitText       = parser[float64]{text: parseLimit, toml: anyDir(tomlLimit)}
	scanCountText   = parser[int64]{text: parseScanCount, toml: anyDir(tomlScanCount)}
	maxCommandsText = parser[int64]{text: parseMaxCommands, toml: anyDir(tomlMaxCommands)}
	boolText        = parser[bool]{text: parseBool, toml: anyDir(tomlBool)}
	clientNameText  = checkedText(checkClientName)
	fileText        = parser[string]{text: func(s string) (string, error) { return s, checkFile(s) }, toml: tomlFile}
)

// urlValue is the url setting's value: one URL from the file or the
// environment, and from --url, which may be repeated, one a server. The
// first is Redis.URL; more than one are kept for Load to make servers of
// (see chooseServers).
var urlValue = &value{
	isList: true,
	text: func(c *Config, items []string) []error {
		var errs []error
		urls := make([]string, len(items))
		for i, s := range items {
			var err error
			if urls[i], err = parseURL(s); err != nil {
				errs = append(errs, err)
			}
		}
		c.Redis.URL, c.urls = urls[0], nil
		if len(urls) > 1 {
			c.urls = urls
		}
		return errs
	},
	toml: func(c *Config, v any, _ string) error {
		var err error
		c.Redis.URL, err = tomlURL(v)
		return err
	},
}
