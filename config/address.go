package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/countertop/countertop/internal/words"
)

// redis-cli's defaults, which host:port and -h, -p and -n fill in from.
const (
	cliHost = "127.0.0.1"
	cliPort = "6379"
)

// parseURL reads a URL setting: a Redis URL, or host:port as redis-cli
// users give it (":6380" for the local host, "[::1]:6380"), which is
// redis://host:port/0.
func parseURL(s string) (string, error) {
	if strings.Contains(s, "://") {
		return s, checkURL(s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil || strings.ContainsAny(s, "/@?#% \t") {
		return s, checkURL(s) // no host:port: say what a URL looks like
	}
	if err := checkPort(port); err != nil {
		return s, fmt.Errorf("%q has %w", s, err)
	}
	return "redis://" + net.JoinHostPort(cmp.Or(host, cliHost), port) + "/0", nil
}

// checkPort returns the error of a port that does not exist, in words that
// follow "... has".
func checkPort(port string) error {
	if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %s, which does not exist (use a port from 1 to 65535, like %s)", port, cliPort)
	}
	return nil
}

// applyAddress applies -h, -p and -n, redis-cli's way to name the server.
// They replace the host, port and database of the URL that the environment
// or the file gives (or the default's, whose are redis-cli's), so that
// "-n 2" means database 2 of the server configured. They cannot go with
// --url, which names all three. given maps a flag to its name as typed.
func (c *Config) applyAddress(f *Flags, given map[string]string) error {
	var typed []string
	for _, name := range []string{"h", "p", "n"} {
		if given[name] != "" {
			typed = append(typed, given[name])
		}
	}
	if len(typed) == 0 {
		return nil
	}
	flags := words.And(typed)
	if given["url"] != "" {
		return fmt.Errorf("%s cannot go with %s, which names the host, port and database: give one or the other", flags, given["url"])
	}
	u, err := url.Parse(c.Redis.URL)
	if scheme := strings.ToLower(c.Redis.URL[:max(0, strings.Index(c.Redis.URL, "://"))]); err != nil || scheme != "redis" && scheme != "rediss" {
		return fmt.Errorf("%s can only change a redis:// or rediss:// URL, and %s is not one: give the server with --url instead", flags, cmp.Or(c.Redis.URLFrom, "the URL"))
	}
	host, port := u.Hostname(), u.Port()
	if h := f.values["h"]; given["h"] != "" {
		host = h.String()
		if host == "" || strings.ContainsAny(host, "/@?#%[] \t") || strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return fmt.Errorf("-h %q is not a host (use a name or an address, like redis.internal or 10.0.0.5)", host)
		}
	}
	if p := f.values["p"]; given["p"] != "" {
		port = p.String()
		if checkPort(port) != nil {
			return fmt.Errorf("-p %q is not a port (use a number from 1 to 65535, like %s)", port, cliPort)
		}
	}
	u.Host = host
	if port != "" || strings.Contains(host, ":") {
		u.Host = net.JoinHostPort(host, cmp.Or(port, cliPort))
	}
	if n := f.values["n"]; given["n"] != "" {
		db, err := strconv.Atoi(n.String())
		if err != nil || db < 0 {
			return fmt.Errorf("-n %q is not a database (use a number from 0 up, like 0)", n.String())
		}
		u.Path, u.RawPath = "/"+strconv.Itoa(db), ""
		if q := u.Query(); q.Has("db") { // which go-redis would read instead
			q.Del("db")
			u.RawQuery = q.Encode()
		}
	}
	c.Redis.URL = u.String()
	c.Redis.URLFrom = "the URL of " + flags
	return checkURL(c.Redis.URL)
}
