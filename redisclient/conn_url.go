package redisclient

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// parseURL reads raw, the URL from where (see Options.URL and URLFrom),
// into go-redis options for the master and, for a Sentinel URL, the
// Sentinels. Its errors are the parsers' own, which may quote any part of
// raw; see readURL.
func parseURL(raw, from string) (*redis.Options, *sentinelTarget, error) {
	nodeURL, sentinels, err := parseSentinelURL(raw)
	if err != nil {
		return nil, nil, err
	}
	opt, err := redis.ParseURL(nodeURL)
	if err != nil {
		return nil, nil, err
	}
	if _, port, err := net.SplitHostPort(opt.Addr); err == nil && opt.Network != "unix" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return nil, nil, explained(fmt.Sprintf("%s has port %s, which does not exist — use a port from 1 to 65535, like 6379", from, port), nil)
		}
	}
	return opt, sentinels, nil
}

// readURL reads raw as parseURL does, with errors that never show a piece
// of a password.
// A URL ends its user info at the first '/', '?' or '#': a password with
// one of them, not percent-encoded, spills into the host, path or options,
// which the parsers quote (or drop: go-redis ignores a fragment). So a URL
// with an '@' is read again with its user info blanked out (see blanked),
// and only that reading's complaint is shown. A URL that parses to the same
// server as that reading is taken as it is; otherwise its user info holds
// such characters, and the error says so without quoting anything.
func readURL(raw, from string) (*redis.Options, *sentinelTarget, error) {
	opt, sentinels, err := parseURL(raw, from)
	blank, hasUser, ok := blanked(raw)
	switch {
	case !ok: // an '@', but no "://" to tell where the user info begins
		if err != nil {
			return nil, nil, badURL(from, nil)
		}
	case !hasUser:
		if err != nil {
			return nil, nil, badURL(from, err)
		}
	default:
		blankOpt, blankSentinels, blankErr := parseURL(blank, from)
		switch {
		case err != nil && blankErr != nil: // wrong apart from its user info
			return nil, nil, badURL(from, blankErr)
		case err != nil || blankErr != nil || !sameServer(opt, sentinels, blankOpt, blankSentinels):
			return nil, nil, badURL(from, nil)
		}
	}
	return opt, sentinels, nil
}

// optionsStart returns where raw's options begin (the index of its first '?')
// when every '@' after it is in a name they give, client_name or
// master_name (client_name=me@laptop); -1 otherwise, and then an '@' after
// a '?' may end a user info whose password holds the '?'
// (redis://:pw?x=y@host). config's userInfo reads URLs by the same rule.
func optionsStart(raw string) int {
	q := strings.IndexByte(raw, '?')
	if q < 0 || strings.Contains(raw, "#") {
		return -1
	}
	for part := range strings.SplitSeq(raw[q+1:], "&") {
		name, value, ok := strings.Cut(part, "=")
		if !ok || name == "" || strings.Contains(name, "@") ||
			strings.Contains(value, "@") && name != "client_name" && name != "master_name" {
			return -1
		}
	}
	return q
}

// blanked returns raw with its user info, if any (hasUser), replaced by a user
// and password of plain letters. The user info ends at the last '@' before
// the options (an '@' in a name the options give ends none: see
// optionsStart), which a password with '@', '/', '?' or '#' in it does not
// end; for unix://, at the last '@' before the socket's path ("@/"), and
// after ":///" there is none. ok is false when raw has an '@' but no "://".
func blanked(raw string) (blank string, hasUser, ok bool) {
	scheme, rest, found := strings.Cut(raw, "://")
	if !found {
		return raw, false, !strings.Contains(raw, "@")
	}
	options := ""
	if q := optionsStart(rest); q >= 0 { // not the user info's, whatever they hold
		rest, options = rest[:q], rest[q:]
	}
	at := strings.LastIndex(rest, "@")
	if strings.EqualFold(scheme, "unix") {
		at = strings.LastIndex(rest, "@/")
		if strings.HasPrefix(rest, "/") {
			at = -1
		}
	}
	if at < 0 {
		return raw, false, true
	}
	return scheme + "://user:password" + rest[at:] + options, true, true
}

// sameServer reports whether two readings of a URL lead to the same
// server, database and Sentinels.
func sameServer(a *redis.Options, as *sentinelTarget, b *redis.Options, bs *sentinelTarget) bool {
	if a.Network != b.Network || a.Addr != b.Addr || a.DB != b.DB || (as == nil) != (bs == nil) {
		return false
	}
	return as == nil || as.master == bs.master && slices.Equal(as.addrs, bs.addrs)
}

// urlError is a URL that does not parse. Its text keeps what the parsers
// found wrong, unless that could hold a piece of a password (see readURL).
type urlError struct {
	from string // where the URL came from (see Options.URLFrom)
	err  error  // the parse error, without the URL; nil when withheld
}

// badURL explains err, the error of the URL from where; nil err says the
// URL's user name or password is to blame, without quoting the parser.
func badURL(from string, err error) error {
	if isA[*Error](err) { // a sentence already, such as a port that does not exist
		return err
	}
	if ue := (*url.Error)(nil); errors.As(err, &ue) {
		err = ue.Err // url.Error quotes the whole URL
	}
	return Explain(&urlError{from: from, err: err}, "")
}

func (e *urlError) Error() string {
	if e.err == nil {
		return e.from + " is not a valid Redis URL (if the user name or password has characters a URL reserves, like @, / or ?, percent-encode them: %40, %2F, %3F)"
	}
	return fmt.Sprintf("%s is not a valid Redis URL (%s)", e.from, goInternals.ReplaceAllString(strings.TrimPrefix(e.err.Error(), "redis: "), "$1"))
}

// goInternals is how go-redis quotes a number or a duration it could not
// read ("strconv.Atoi: parsing "many": invalid syntax", "time: invalid
// duration "soon""): only the value means anything to the user.
var goInternals = regexp.MustCompile(`(?:strconv\.\w+: parsing|time: (?:invalid|unknown unit \S+ in|missing unit in) duration) ("(?:[^"\\]|\\.)*")(?:: [a-z ]+)?`)

func (e *urlError) Unwrap() error { return e.err }
