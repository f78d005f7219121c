package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// cli is how the shell baselines call redis-cli for the server at opt.
type cli struct {
	args string   // -h HOST -p PORT -n DB, quoted for sh
	env  []string // REDISCLI_AUTH when there is a password
}

func newCLI(opt *redis.Options) (cli, error) {
	host, port, err := net.SplitHostPort(opt.Addr)
	if err != nil {
		return cli{}, err
	}
	c := cli{args: fmt.Sprintf("-h %s -p %s -n %d", shellQuote(host), shellQuote(port), opt.DB), env: os.Environ()}
	if opt.Password != "" {
		c.env = append(c.env, "REDISCLI_AUTH="+opt.Password)
	}
	return c, nil
}

// oneClient is the quickest way people read matching keys in a shell: SCAN
// with redis-cli, then every key's TTL and GET sent by one more redis-cli
// reading commands from its input, one round trip each.
func (c cli) oneClient(pattern string) string {
	return fmt.Sprintf(`redis-cli %[1]s --scan --pattern %[2]s | awk '{print "TTL " $0; print "GET " $0}' | redis-cli %[1]s > /dev/null`,
		c.args, shellQuote(pattern))
}

// perKey is the common way: a redis-cli for each TTL and each GET, over
// the first n keys only (it takes minutes for more).
func (c cli) perKey(pattern string, n int) string {
	return fmt.Sprintf(`redis-cli %[1]s --scan --pattern %[2]s | head -n %[3]d | while read -r k; do redis-cli %[1]s TTL "$k"; redis-cli %[1]s GET "$k"; done > /dev/null`,
		c.args, shellQuote(pattern), n)
}

// run runs a shell pipeline and returns how long it took.
func (c cli) run(ctx context.Context, script string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Env = c.env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("%s: %v: %s", script, err, stderr.String())
	}
	return time.Since(start), nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
