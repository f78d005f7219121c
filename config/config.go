// Package config turns countertop's config file, command-line flags and
// environment into one validated Config.
//
// Each setting comes from, in order of precedence: a flag the user set, the
// environment (REDIS_URL, REDIS_USERNAME, REDIS_PASSWORD, and
// REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD), the config file,
// the built-in default. The config file is --config if given, else
// ./countertop.toml, else $XDG_CONFIG_HOME/countertop/config.toml (see
// config.example.toml for every key). Nothing starts on a bad config: every
// problem is reported where the user wrote it, as "file:line: field: what is
// wrong" or "--flag: what is wrong", and passwords never appear in messages.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/countertop/countertop/model"
)

// DefaultURL is the Redis server used when no flag, environment variable or
// config file names one.
const DefaultURL = "redis://127.0.0.1:6379/0"

// DefaultMaxCommands is the dashboard's budget of commands a second to
// each server when none is set: a few percent of one Redis core, and what
// 5,000 changes a second cost to follow (see docs/production.md, "The
// command budget").
const DefaultMaxCommands = 20000

// NoCommandLimit, as Redis.MaxCommands, says there is no budget (the user
// gave 0).
const NoCommandLimit = -1

// minMaxCommands is the smallest budget: the rows on screen, a discovery
// walk and the watchdog's pings need about as much to move at all.
const minMaxCommands = 100

// Config is everything main needs to wire countertop together.
type Config struct {
	// Redis is how to reach the one server to read, and how to watch it;
	// when Servers names several, it is what they share.
	Redis Redis
	// Servers are the servers to read when they are chosen by name
	// (--server, [[server]] tables) or are more than one (--url given
	// again); nil for the one server Redis names. Targets returns them
	// either way.
	Servers []Server
	// Shards are the [[shards]] groups: servers that are shards of one
	// limiter, on which a key should live once.
	Shards   []model.ShardGroup
	Patterns []string    // globs to SCAN for; never empty after Load
	Rules    model.Rules // [[rule]] tables in file order, plus the fallback for keys none covers (whose window also serves rules without one)
	File     string      // the config file that was read, "" if none

	// What Load reads before it chooses the servers (see chooseServers):
	// the names --server gave, the URLs of --url given more than once,
	// and the file's [[server]] and [[shards]] tables.
	picks, urls []string
	tables      []serverTable
	shardTables []shardsTable
}

// Redis says how to reach the server and how to follow its counters.
type Redis struct {
	URL      string // redis://, rediss://, unix:// or redis+sentinel://
	URLFrom  string // where URL came from, for errors: "--url", "REDIS_URL", "FILE:LINE: redis.url"; "" for the default
	Username string // from REDIS_USERNAME or the file; "" to use the URL's
	Password string // from REDIS_PASSWORD or the file; "" to use the URL's
	// Mode is how redisclient follows changes.
	Mode model.WatchMode

	Interval      time.Duration // poll period
	DiscoverEvery time.Duration // how often to SCAN for new keys; Interval unless set
	ResyncEvery   time.Duration // in events and tracking modes, how often to scan for keys made or gone in case a message was lost (see redisclient.WatchOptions)
	ScanCount     int64         // COUNT hint of each SCAN call
	// MaxCommands bounds countertop's own commands a second to each server:
	// 0 when not set (the command's default: DefaultMaxCommands for the
	// dashboard, none for snapshot and check), NoCommandLimit for none.
	MaxCommands int64

	Cluster          bool     // treat URL as a Redis Cluster seed (also auto-detected)
	SentinelMaster   string   // the master's name, to find it through Sentinels
	Sentinels        []string // Sentinel addresses, host:port
	SentinelUsername string   // the Sentinels' own ACL user, when they ask for one (REDIS_SENTINEL_USERNAME or the file)
	SentinelPassword string   // the Sentinels' own password (REDIS_SENTINEL_PASSWORD or the file)
	ReadOnly         bool     // refuse every write before it is sent
	ClientName       string   // the name of countertop's connections (CLIENT SETNAME); "" for the URL's, else redisclient's default
	EnableEvents     bool     // allowed to turn on keyspace notifications (CONFIG SET)
	TLS              TLS
}

// TLS holds the certificate files for rediss:// connections.
type TLS struct {
	CAFile     string // CA bundle that signed the server's certificate; "" for the system pool
	CertFile   string // client certificate (needs KeyFile)
	KeyFile    string // client key (needs CertFile)
	SkipVerify bool   // accept any server certificate (testing only)
}

// defaults is the configuration before any file, environment or flag:
// the settings' defaults, and a fallback rule that expects a TTL.
func defaults() Config {
	c := Config{Rules: model.Rules{Fallback: model.Rule{ExpectTTL: true}}}
	for _, s := range settings {
		if s.Default == "" || s.value == nil {
			continue
		}
		if errs := s.value.text(&c, []string{s.Default}); len(errs) > 0 {
			panic(fmt.Sprintf("config: the default of %s does not parse: %v", s.Key, errs))
		}
	}
	return c
}

// String describes r for logs and debugging, with the passwords masked.
func (r Redis) String() string {
	mask := func(password string) string {
		if password == "" {
			return ""
		}
		return "***"
	}
	return fmt.Sprintf("url=%s (from %q) username=%q password=%s mode=%s interval=%s discover_every=%s resync_every=%s scan_count=%d max_commands=%d"+
		" cluster=%t sentinel_master=%q sentinels=%q sentinel_username=%q sentinel_password=%s"+
		" read_only=%t client_name=%q enable_events=%t tls_ca=%q tls_cert=%q tls_key=%q tls_skip_verify=%t",
		RedactURL(r.URL), r.URLFrom, r.Username, mask(r.Password), r.Mode, r.Interval, r.DiscoverEvery, r.ResyncEvery, r.ScanCount, r.MaxCommands,
		r.Cluster, r.SentinelMaster, r.Sentinels, r.SentinelUsername, mask(r.SentinelPassword),
		r.ReadOnly, r.ClientName, r.EnableEvents, r.TLS.CAFile, r.TLS.CertFile, r.TLS.KeyFile, r.TLS.SkipVerify)
}

// String describes c for logs and debugging, with the passwords masked.
func (c Config) String() string {
	s := fmt.Sprintf("file=%q %s patterns=%q rules=%d", c.File, c.Redis, c.Patterns, len(c.Rules.List))
	for _, server := range c.Servers {
		s += fmt.Sprintf(" server %q: %s", server.Name, server.Redis)
	}
	for _, g := range c.Shards {
		s += fmt.Sprintf(" shards %q: %q", g.Name, g.Servers)
	}
	return s
}

// RedactURL returns rawURL with the password replaced by "***"
// ("redis://user:***@host"), so that a URL can go into a message. It works
// on strings that do not parse as URLs too, erring on the side of hiding.
func RedactURL(rawURL string) string {
	_, at, colon := userInfo(rawURL)
	if at < 0 || colon < 0 {
		return rawURL // no user info, or a user name but no password
	}
	return rawURL[:colon+1] + "***" + rawURL[at:]
}

// userInfo finds the user info of rawURL, even one that does not parse
// (a password with '@' or '/' in it): it runs from start to at (the '@'),
// and colon, when not -1, separates the user name from the password; at is
// -1 when there is none.
func userInfo(rawURL string) (start, at, colon int) {
	if i := strings.Index(rawURL, "://"); i >= 0 {
		start = i + len("://")
	}
	// The last '@' ends the user info even when the password holds '@' or
	// '/'; but not one in a name given in the options (client_name=me@laptop,
	// see namedAt), nor one in a socket's path.
	end := len(rawURL)
	if q := strings.IndexByte(rawURL[start:], '?'); q >= 0 && !strings.Contains(rawURL, "#") && namedAt(rawURL[start+q+1:]) {
		end = start + q
	}
	at = strings.LastIndex(rawURL[start:end], "@")
	if strings.HasPrefix(strings.ToLower(rawURL), "unix://") {
		if i := strings.LastIndex(rawURL[start:end], "@/"); i >= 0 {
			at = i // a socket's path may hold an '@'
		}
	}
	if at < 0 {
		return start, -1, -1
	}
	at += start
	colon = strings.Index(rawURL[start:at], ":")
	if colon >= 0 {
		colon += start
	}
	return start, at, colon
}

// namedAt reports whether query, what follows a URL's first '?', is
// options (name=value pairs joined by '&') whose every '@' is in a name
// they give, client_name or master_name: an '@' anywhere else, after a '?'
// that a password may hold (redis://:pw?x=y@host), ends the user info.
// redisclient's readURL reads URLs by the same rule.
func namedAt(query string) bool {
	for part := range strings.SplitSeq(query, "&") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" || strings.Contains(name, "@") ||
			strings.Contains(value, "@") && name != "client_name" && name != "master_name" {
			return false
		}
	}
	return true
}

// finish fills in what depends on other settings and checks the settings
// that only make sense together; it runs once every source is applied.
func (c *Config) finish() error {
	if c.Redis.DiscoverEvery == 0 {
		c.Redis.DiscoverEvery = c.Redis.Interval
	}
	if len(c.Patterns) == 0 {
		for _, r := range c.Rules.List {
			if !slices.Contains(c.Patterns, r.Pattern) {
				c.Patterns = append(c.Patterns, r.Pattern)
			}
		}
	}
	if len(c.Patterns) == 0 {
		c.Patterns = []string{"*"}
	}
	if (c.Redis.TLS.CertFile == "") != (c.Redis.TLS.KeyFile == "") {
		return errors.New("a TLS client certificate needs both a certificate and a key file: set both --tls-cert and --tls-key (tls_cert and tls_key in [redis])")
	}
	return c.checkServerTLS()
}

// The checks below are shared by every source. Their errors say what is
// wrong with the value and what to use instead; the caller adds where the
// value came from.

func checkURL(s string) error {
	scheme, _, found := strings.Cut(s, "://")
	switch strings.ToLower(scheme) {
	case "redis", "rediss", "unix", "redis+sentinel", "rediss+sentinel":
	default:
		found = false
	}
	if !found {
		return fmt.Errorf("%q is not a Redis URL (use redis://host:port/db or host:port, rediss:// for TLS, unix:///path/to/socket or redis+sentinel://)", RedactURL(s))
	}
	// The hosts come after the user info (see userInfo) and before the
	// path; redis+sentinel:// lists several.
	start, at, _ := userInfo(s)
	hasUser := at >= 0
	rest := s[max(start, at+1):]
	if end := strings.IndexAny(rest, "/?#"); end >= 0 {
		rest = rest[:end]
	}
	// A URL parser ends the user info at the first '/' and the host at the
	// next: a password with '/' or '@' in it must be percent-encoded, or
	// the URL names another host than the one meant. (Said without quoting
	// the parser, whose message could hold part of the password.)
	// A port that does not exist is said first: with the user info cut
	// where the host begins, it is the URL's mistake whatever the password.
	for host := range strings.SplitSeq(rest, ",") {
		_, port, err := net.SplitHostPort(host)
		if err != nil { // no port: the default one
			continue
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			if !hasUser && strings.Contains(s[start:], "@") {
				// An '@' the options seemed to hold, and a "port" that is no
				// port: a password whose '/' and '?' were not encoded, and
				// this is a piece of it. Hide all up to the last '@'.
				return fmt.Errorf("%q has a user name or password with characters a URL reserves (like @, / or :): percent-encode them (%%40 for @, %%2F for /, %%3A for :)",
					s[:start]+"***"+s[start+strings.LastIndex(s[start:], "@"):])
			}
			return fmt.Errorf("%q has port %s, which does not exist (use a port from 1 to 65535, like 6379)", RedactURL(s), port)
		}
	}
	// A Sentinel URL lists hosts, which url.Parse refuses with a bracketed
	// one among them: check the user info against the first host alone.
	probe, host := s, rest
	if first, _, list := strings.Cut(rest, ","); list {
		hostAt := max(start, at+1)
		probe, host = s[:hostAt]+first+s[hostAt+len(rest):], first
	}
	if u, err := url.Parse(probe); hasUser && (err != nil || u.Host != host) && strings.ToLower(scheme) != "unix" {
		return fmt.Errorf("%q has a user name or password with characters a URL reserves (like @, / or :): percent-encode them (%%40 for @, %%2F for /, %%3A for :)", RedactURL(s))
	}
	return checkDB(s, s[max(start, at+1)+len(rest):], strings.EqualFold(scheme, "unix"))
}

// checkDB checks the databases that tail, what follows the hosts of the
// URL s, names: in its path (but for unix://, whose path is the socket's)
// and in a db= option, which go-redis reads after the path. go-redis takes
// a negative number, then reads database 0 while keyspace events are asked
// of __keyspace@-1__; what is no number it refuses itself, and whether the
// server has as many databases as a number asks for only the server can say.
func checkDB(s, tail string, unix bool) error {
	tail, _, _ = strings.Cut(tail, "#")
	path, query, _ := strings.Cut(tail, "?")
	if !unix {
		if p, err := url.PathUnescape(path); err == nil {
			path = p
		}
		if err := checkDBNumber(s, strings.Trim(path, "/"), "/0"); err != nil {
			return err
		}
	}
	options, _ := url.ParseQuery(query) // what parses: go-redis reads the same
	if db := options["db"]; len(db) > 0 {
		return checkDBNumber(s, db[len(db)-1], "db=0")
	}
	return nil
}

// checkDBNumber refuses db, the database the URL s names, written as like
// shows, when it is a negative number.
func checkDBNumber(s, db, like string) error {
	if n, err := strconv.Atoi(db); err == nil && n < 0 {
		return fmt.Errorf("%q has database %d, which does not exist (use a database number from 0 up, like %s)", RedactURL(s), n, like)
	}
	return nil
}

// checkClientName refuses a name Redis's CLIENT SETNAME would refuse.
func checkClientName(s string) error {
	if strings.IndexFunc(s, func(r rune) bool { return r < '!' || r > '~' }) >= 0 {
		return fmt.Errorf("%q cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters (use letters, digits and punctuation, like countertop-eu-1)", s)
	}
	return nil
}

func checkPattern(s string) error {
	if s == "" {
		return errors.New(`"" is not a pattern (use a glob like "ratelimit:*" or "*")`)
	}
	return nil
}

func checkAddr(s string) error {
	if s == "" || strings.ContainsAny(s, "/ ") {
		return fmt.Errorf("%q is not an address (use host:port, like 10.0.0.5:26379)", s)
	}
	return nil
}

func checkLimit(f float64) error {
	if !(f > 0) || math.IsInf(f, 0) {
		return fmt.Errorf("%v is not a limit (use a number more than 0)", f)
	}
	return nil
}

func checkWarnAt(f float64) error {
	if !(f > 0 && f <= 1) {
		return fmt.Errorf("%v is not a fraction of the limit (use a number more than 0 and at most 1, like 0.8)", f)
	}
	return nil
}

func checkScanCount(n int64) error {
	if n <= 0 {
		return fmt.Errorf("%d is not a SCAN count (use a whole number more than 0, like 1000)", n)
	}
	return nil
}

// checkFile reports whether path names a file that exists.
func checkFile(path string) error {
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%q does not exist", path)
	case err != nil:
		return err
	case info.IsDir():
		return fmt.Errorf("%q is a directory, not a file", path)
	}
	return nil
}

// parseDuration parses s as a Go duration of at least 1ms: anything shorter
// would have countertop hammer the server or is a typo.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return 0, fmt.Errorf("%q is not a duration (like 60s or 1m30s)", s)
	case d <= 0:
		return 0, fmt.Errorf("%q must be positive (use at least 1ms)", s)
	case d < time.Millisecond:
		return 0, fmt.Errorf("%q is too short (use at least 1ms)", s)
	}
	return d, nil
}

// parseWindow parses a window: a duration Redis can hold as a TTL, which
// counts whole milliseconds (1.5ms would quietly become 1ms).
func parseWindow(s string) (time.Duration, error) {
	d, err := parseDuration(s)
	if err == nil && d%time.Millisecond != 0 {
		return 0, fmt.Errorf("%q is not a whole number of milliseconds, which is what a Redis TTL counts (like 1500ms or 2s)", s)
	}
	return d, err
}

func parseLimit(s string) (float64, error) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a limit (use a number more than 0)", s)
	}
	return f, checkLimit(f)
}

func parseBool(s string) (bool, error) {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%q is not true or false", s)
	}
	return b, nil
}

func parseMaxCommands(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number of commands a second (use a whole number, like %d, or 0 for no limit)", s, DefaultMaxCommands)
	}
	return checkMaxCommands(n)
}

// checkMaxCommands returns n as Redis.MaxCommands holds it: 0 (no limit)
// as NoCommandLimit.
func checkMaxCommands(n int64) (int64, error) {
	switch {
	case n == 0:
		return NoCommandLimit, nil
	case n < minMaxCommands:
		return 0, fmt.Errorf("%d commands a second is too few for the rows on screen to be read every interval (use %d or more, like %d, or 0 for no limit)", n, minMaxCommands, DefaultMaxCommands)
	}
	return n, nil
}

func parseScanCount(s string) (int64, error) {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a SCAN count (use a whole number more than 0, like 1000)", s)
	}
	return n, checkScanCount(n)
}
