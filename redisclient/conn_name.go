package redisclient

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Every connection countertop opens is named (CLIENT SETNAME), so that an
// operator finds them in CLIENT LIST and tells countertop's commands apart
// in SLOWLOG: the pool's, each cluster node's, the Sentinels', a
// subscription's, a burst's.
//
// go-redis's own Options.ClientName is not used: it sends CLIENT SETNAME
// in the handshake, and a refusal there (a user without the command, as
// the README's users were before it named them) closes the connection, so
// naming would cost a restricted user the counters. Go-redis's connections
// are named in OnConnect (nameConn) instead, and a subscription's in
// dialSub; the go-redis budget hook, which sees a new connection's
// commands as it sees every other, counts them.

// DefaultClientName is the name of countertop's connections when neither
// --client-name nor the URL's client_name gives one: countertop, this
// host's name and the process ID, which tell two countertops apart, on
// one machine or several.
func DefaultClientName() string {
	name := "countertop"
	if host, err := os.Hostname(); err == nil {
		host, _, _ = strings.Cut(host, ".")
		if host != "" && checkClientName(host) == nil {
			name += "-" + host
		}
	}
	return name + "-" + strconv.Itoa(os.Getpid())
}

// checkClientName refuses a name Redis would refuse: CLIENT SETNAME takes
// no spaces, newlines or other characters outside printable ASCII.
func checkClientName(name string) error {
	for i := range len(name) {
		if name[i] < '!' || name[i] > '~' {
			return fmt.Errorf("%q cannot name a Redis connection: CLIENT SETNAME takes no spaces, newlines or other special characters — use letters, digits and punctuation, like countertop-eu-1", name)
		}
	}
	return nil
}

// clientName returns the name of o's connections: o.ClientName, else the
// URL's client_name (fromURL), else DefaultClientName; or the sentence
// that says why the one given cannot be.
func clientName(o Options, fromURL string) (string, error) {
	name, from := o.ClientName, "--client-name"
	if name == "" {
		name, from = fromURL, o.URLFrom
		if from == "" {
			from = "--url"
		}
		from += " (client_name)"
	}
	if name == "" {
		return DefaultClientName(), nil
	}
	if err := checkClientName(name); err != nil {
		return "", explained(from+": "+err.Error(), nil)
	}
	return name, nil
}

// nameConn names conn, a new go-redis connection (its OnConnect). A
// refusal leaves the connection unnamed but in use, and Unnamed says why:
// the name is for people, and the counters do not wait for it.
func (c *Client) nameConn(ctx context.Context, conn *redis.Conn) error {
	err := conn.ClientSetName(ctx, c.name).Err()
	if refused(err) {
		c.refusedName(err)
		return nil
	}
	return err
}

// refusedName notes err, a server's refusal of CLIENT SETNAME, for Unnamed.
func (c *Client) refusedName(err error) {
	why := fmt.Sprintf("countertop's connections show unnamed in CLIENT LIST and SLOWLOG: CLIENT SETNAME %s was refused (%s)", c.name, reason(err))
	if redis.HasErrorPrefix(err, "NOPERM") {
		why += " — grant it with ACL SETUSER <user> +client|setname"
	}
	c.unnamed.CompareAndSwap(nil, &why)
}

// Name returns the name of countertop's connections (CLIENT SETNAME).
func (c *Client) Name() string { return c.name }

// Unnamed says why countertop's connections carry no name, in a sentence
// for people: a server refused CLIENT SETNAME. "" while every connection
// was named.
func (c *Client) Unnamed() string {
	if why := c.unnamed.Load(); why != nil {
		return *why
	}
	return ""
}
