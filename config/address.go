package config

import (
	"cmp"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"slices"
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

// applyAddress applies -h, -p, -s and -n, redis-cli's way to name the
// server. They replace the host, port (or socket) and database of the URL
// that the environment or the file gives (or the default's, whose are
// redis-cli's), so that "-n 2" means database 2 of the server configured.
// They cannot go with --url, which names all of them. given maps a flag to
// its name as typed.
func (c *Config) applyAddress(f *Flags, given map[string]string) error {
	var typed []string
	for _, name := range []string{"host", "port", "socket", "db"} {
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
	if given["socket"] != "" && (given["host"] != "" || given["port"] != "") {
		return fmt.Errorf("%s names a socket, and %s a host and port: give one or the other",
			given["socket"], words.And(slices.DeleteFunc([]string{given["host"], given["port"]}, func(s string) bool { return s == "" })))
	}
	u, err := url.Parse(c.Redis.URL)
	scheme := strings.ToLower(c.Redis.URL[:max(0, strings.Index(c.Redis.URL, "://"))])
	if err != nil || scheme != "redis" && scheme != "rediss" && !(scheme == "unix" && given["socket"] != "") {
		return fmt.Errorf("%s can only change a redis:// or rediss:// URL, and %s is not one: give the server with --url instead", flags, cmp.Or(c.Redis.URLFrom, "the URL"))
	}
	db := strings.TrimPrefix(u.Path, "/")
	if scheme == "unix" {
		db = u.Query().Get("db")
	}
	if n := given["db"]; n != "" {
		d, err := strconv.Atoi(f.text("db"))
		if err != nil || d < 0 {
			return fmt.Errorf("%s %q is not a database (use a number from 0 up, like 0)", n, f.text("db"))
		}
		db = strconv.Itoa(d)
	}
	if given["socket"] != "" {
		err = socketURL(u, f.text("socket"), db, given["socket"])
	} else {
		err = hostURL(u, f, given, db)
	}
	if err != nil {
		return err
	}
	c.Redis.URL = u.String()
	c.Redis.URLFrom = "the URL of " + flags
	return checkURL(c.Redis.URL)
}

// hostURL sets the host and port of u, a redis:// or rediss:// URL, from
// -h and -p when given, and its database to db.
func hostURL(u *url.URL, f *Flags, given map[string]string, db string) error {
	host, port := u.Hostname(), u.Port()
	if h := given["host"]; h != "" {
		host = f.text("host")
		if host == "" || strings.ContainsAny(host, "/@?#%[] \t") || strings.Contains(host, ":") && net.ParseIP(host) == nil {
			return fmt.Errorf("%s %q is not a host (use a name or an address, like redis.internal or 10.0.0.5)", h, host)
		}
	}
	if p := given["port"]; p != "" {
		port = f.text("port")
		if checkPort(port) != nil {
			return fmt.Errorf("%s %q is not a port (use a number from 1 to 65535, like %s)", p, port, cliPort)
		}
	}
	u.Host = host
	if port != "" || strings.Contains(host, ":") {
		u.Host = net.JoinHostPort(host, cmp.Or(port, cliPort))
	}
	if given["db"] != "" {
		u.Path, u.RawPath = "/"+db, ""
		if q := u.Query(); q.Has("db") { // which go-redis would read instead
			q.Del("db")
			u.RawQuery = q.Encode()
		}
	}
	return nil
}

// socketURL makes u, a redis://, rediss:// or unix:// URL, a unix:// one
// to the socket at path, keeping its user, password, database db and
// options: what redis-cli -s does. spelled is the flag as typed.
func socketURL(u *url.URL, path, db, spelled string) error {
	if path == "" {
		return fmt.Errorf("%s is empty: give the path of the server's socket, like /run/redis/redis.sock", spelled)
	}
	abs, err := filepath.Abs(path) // a unix:// URL's path is absolute
	if err != nil {
		return fmt.Errorf("%s %q: %w", spelled, path, err)
	}
	q := u.Query()
	q.Del("db")
	if db != "" && db != "0" {
		q.Set("db", db)
	}
	u.Scheme, u.Host, u.Path, u.RawPath, u.RawQuery = "unix", "", abs, "", q.Encode()
	return nil
}
