package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Flags holds the values of the common flags that Register adds to a
// FlagSet; only Load reads them. Values that need parsing are kept as the
// text the user typed, so that Load checks them with the same rules, and
// reports them in the same words, as values from the config file.
type Flags struct {
	url, config, mode                    string
	patterns, sentinels                  stringList
	sentinelMaster                       string
	limit, window                        string
	interval, discoverEvery, resyncEvery string
	scanCount                            string
	readOnly, cluster, enableEvents      bool
	tlsCA, tlsCert, tlsKey               string
	tlsSkipVerify                        bool
}

// Register adds the flags every countertop command shares to fs.
func Register(fs *flag.FlagSet) *Flags {
	d := defaults()
	f := &Flags{}
	fs.StringVar(&f.url, "url", d.Redis.URL, "Redis `URL`: redis://[user:password@]host:port/db, rediss:// for TLS, unix:///path, redis+sentinel:// (env REDIS_URL)")
	fs.Var(&f.patterns, "pattern", "watch the keys matching `GLOB`; repeat for more (default: the rules' patterns, else *)")
	fs.StringVar(&f.config, "config", "", "read settings from `FILE` (default ./countertop.toml, else $XDG_CONFIG_HOME/countertop/config.toml)")
	fs.StringVar(&f.limit, "limit", "", "limit `N` of the keys no rule covers (a rule without a limit has none)")
	fs.StringVar(&f.window, "window", "", "window of the keys no rule covers and of the rules that set none: the `DURATION` of the TTL a counter without one is given when it is repaired or incremented, like 60s")
	fs.StringVar(&f.mode, "mode", d.Redis.Mode, "follow changes by `MODE`: auto, events (keyspace notifications) or poll")
	fs.StringVar(&f.interval, "interval", d.Redis.Interval.String(), "re-read the counters every `DURATION` when polling")
	fs.StringVar(&f.discoverEvery, "discover-every", "", "SCAN for new keys every `DURATION` (default: the interval)")
	fs.StringVar(&f.resyncEvery, "resync-every", d.Redis.ResyncEvery.String(), "in events mode, re-read everything every `DURATION` in case an event was lost")
	fs.StringVar(&f.scanCount, "scan-count", strconv.FormatInt(d.Redis.ScanCount, 10), "ask each SCAN call for about `N` keys (its COUNT)")
	fs.BoolVar(&f.readOnly, "read-only", false, "refuse every write")
	fs.BoolVar(&f.cluster, "cluster", false, "treat the URL as a Redis Cluster seed (also auto-detected)")
	fs.StringVar(&f.sentinelMaster, "sentinel-master", "", "find the master named `NAME` through Sentinel (with --sentinel)")
	fs.Var(&f.sentinels, "sentinel", "a Sentinel's `HOST:PORT`; repeat for more (with --sentinel-master; env REDIS_SENTINEL_PASSWORD if Sentinels ask for one)")
	fs.BoolVar(&f.enableEvents, "enable-events", false, "turn on keyspace notifications on the server (CONFIG SET) if they are off")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "CA certificate `FILE` that signed the server's certificate")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "client certificate `FILE` (with --tls-key)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "client key `FILE` (with --tls-cert)")
	fs.BoolVar(&f.tlsSkipVerify, "tls-skip-verify", false, "accept any server certificate (insecure; for testing)")
	return f
}

// Load builds the Config from the flags set on fs (already parsed), the
// environment that getenv reads, the config file and the defaults, in that
// order of precedence. It returns every problem it finds, each naming where
// the bad value came from; a Config is only returned when there are none.
func Load(f *Flags, fs *flag.FlagSet, getenv func(string) string) (Config, error) {
	set := make(map[string]bool)
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })

	c := defaults()
	path, err := configPath(f.config, getenv)
	if err != nil {
		return Config{}, err
	}
	var errs []error
	if path != "" {
		c.File = path
		errs = append(errs, c.readFile(path))
	}
	errs = append(errs, c.applyEnv(getenv, set), c.applyFlags(f, set))
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := c.finish(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// configPath returns the config file to read: the one --config names, else
// the first of ./countertop.toml and $XDG_CONFIG_HOME/countertop/config.toml
// that exists, else "".
func configPath(explicit string, getenv func(string) string) (string, error) {
	if explicit != "" {
		if err := checkFile(explicit); err != nil {
			return "", fmt.Errorf("--config: %w", err)
		}
		return explicit, nil
	}
	candidates := []string{"countertop.toml"}
	dir := getenv("XDG_CONFIG_HOME")
	if home := getenv("HOME"); dir == "" && home != "" {
		dir = filepath.Join(home, ".config")
	}
	if dir != "" {
		candidates = append(candidates, filepath.Join(dir, "countertop", "config.toml"))
	}
	for _, p := range candidates {
		_, err := os.Stat(p)
		if err == nil {
			return p, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("cannot read the config file: %w", err)
		}
	}
	return "", nil
}

// applyEnv applies REDIS_URL (unless --url was given), REDIS_USERNAME,
// REDIS_PASSWORD, REDIS_SENTINEL_USERNAME and REDIS_SENTINEL_PASSWORD.
func (c *Config) applyEnv(getenv func(string) string, set map[string]bool) error {
	if u := getenv("REDIS_URL"); u != "" && !set["url"] {
		if err := checkURL(u); err != nil {
			return fmt.Errorf("REDIS_URL: %w", err)
		}
		c.Redis.URL, c.Redis.URLFrom = u, "REDIS_URL"
	}
	if u := getenv("REDIS_USERNAME"); u != "" {
		c.Redis.Username = u
	}
	if p := getenv("REDIS_PASSWORD"); p != "" {
		c.Redis.Password = p
	}
	if u := getenv("REDIS_SENTINEL_USERNAME"); u != "" {
		c.Redis.SentinelUsername = u
	}
	if p := getenv("REDIS_SENTINEL_PASSWORD"); p != "" {
		c.Redis.SentinelPassword = p
	}
	return nil
}

// applyFlags applies the flags the user set.
func (c *Config) applyFlags(f *Flags, set map[string]bool) error {
	var errs []error
	check := func(flag string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("--%s: %w", flag, err))
		}
	}
	r := &c.Redis
	var err error
	if set["url"] {
		r.URL, r.URLFrom = f.url, "--url"
		check("url", checkURL(f.url))
		// Credentials in --url beat those of the environment and the file,
		// as every flag does: the others would otherwise replace them.
		// A password alone (redis://:pw@host) is the default user's.
		if start, at, colon := userInfo(f.url); colon >= 0 {
			r.Username, r.Password = "", ""
		} else if at > start {
			r.Username = ""
		}
	}
	if set["pattern"] {
		c.Patterns = f.patterns
		for _, p := range f.patterns {
			check("pattern", checkPattern(p))
		}
	}
	if set["limit"] {
		c.Rules.Fallback.Limit, err = parseLimit(f.limit)
		check("limit", err)
	}
	if set["window"] {
		c.Rules.Fallback.Window, err = parseWindow(f.window)
		check("window", err)
	}
	if set["mode"] {
		r.Mode = f.mode
		check("mode", checkMode(f.mode))
	}
	if set["interval"] {
		r.Interval, err = parseDuration(f.interval)
		check("interval", err)
	}
	if set["discover-every"] {
		r.DiscoverEvery, err = parseDuration(f.discoverEvery)
		check("discover-every", err)
	}
	if set["resync-every"] {
		r.ResyncEvery, err = parseDuration(f.resyncEvery)
		check("resync-every", err)
	}
	if set["scan-count"] {
		r.ScanCount, err = parseScanCount(f.scanCount)
		check("scan-count", err)
	}
	if set["read-only"] {
		r.ReadOnly = f.readOnly
	}
	if set["cluster"] {
		r.Cluster = f.cluster
	}
	if set["sentinel-master"] {
		r.SentinelMaster = f.sentinelMaster
	}
	if set["sentinel"] {
		r.Sentinels = f.sentinels
		for _, a := range f.sentinels {
			check("sentinel", checkAddr(a))
		}
	}
	if set["enable-events"] {
		r.EnableEvents = f.enableEvents
	}
	if set["tls-ca"] {
		r.TLS.CAFile = f.tlsCA
		check("tls-ca", checkFile(f.tlsCA))
	}
	if set["tls-cert"] {
		r.TLS.CertFile = f.tlsCert
		check("tls-cert", checkFile(f.tlsCert))
	}
	if set["tls-key"] {
		r.TLS.KeyFile = f.tlsKey
		check("tls-key", checkFile(f.tlsKey))
	}
	if set["tls-skip-verify"] {
		r.TLS.SkipVerify = f.tlsSkipVerify
	}
	return errors.Join(errs...)
}

// ParseInterspersed parses args like fs.Parse, except that flags may follow
// positional arguments, so that "incr KEY --by 3" works; everything after
// "--" is positional. It returns the positional arguments in order.
func ParseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	if err := valueLeftOut(fs, args); err != nil {
		return nil, err
	}
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// valueLeftOut says so when a flag that takes a value is followed by
// another flag of fs: "--pattern --url X" would take --url for the pattern
// and X for an argument. (A value that begins with a dash goes after =:
// --pattern=-x.)
func valueLeftOut(fs *flag.FlagSet, args []string) error {
	isFlag := func(a string) *flag.Flag {
		if !strings.HasPrefix(a, "-") {
			return nil
		}
		name, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-"), "=")
		return fs.Lookup(name)
	}
	for i, a := range args[:max(0, len(args)-1)] {
		if a == "--" {
			return nil
		}
		f := isFlag(a)
		if f == nil || strings.Contains(a, "=") {
			continue
		}
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			continue
		}
		if next := isFlag(args[i+1]); next != nil {
			return fmt.Errorf("%s has no value: the word after it, %s, is a flag — give the value right after %s", a, args[i+1], a)
		}
	}
	return nil
}

// stringList is the value of a repeatable flag (--pattern, --sentinel).
type stringList []string

func (p *stringList) String() string { return strings.Join(*p, " ") }

func (p *stringList) Set(s string) error {
	*p = append(*p, s)
	return nil
}
