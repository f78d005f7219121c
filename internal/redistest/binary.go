package redistest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const (
	// BinEnv names a folder whose redis-server every server of the tests
	// runs (Sentinels too), in place of PATH's: how `make test-servers`
	// runs the suite on Redis 8 and Valkey builds beside Debian's Redis.
	BinEnv = "COUNTERTOP_REDIS_BIN"
	// RequireFieldTTLEnv, when set, makes RequireFieldTTL fail a test on a
	// server without hash-field TTLs instead of skipping it: CI sets it for
	// Redis 8, so that those tests cannot pass there by not running.
	RequireFieldTTLEnv = "COUNTERTOP_REQUIRE_FIELD_TTL"
)

// serverBinary is the redis-server the tests run: BinEnv's when it is set,
// PATH's otherwise.
func serverBinary() (string, error) {
	if dir := os.Getenv(BinEnv); dir != "" {
		path, err := exec.LookPath(filepath.Join(dir, "redis-server"))
		if err != nil {
			return "", fmt.Errorf("%s=%s holds no redis-server to run: give the folder ../shared/servers/build prints, or unset %s to run PATH's", BinEnv, dir, BinEnv)
		}
		return path, nil
	}
	path, err := exec.LookPath("redis-server")
	if err != nil {
		return "", errors.New("redis-server not found on PATH: install it (apt-get install redis-server) or run `make test`, which does")
	}
	return path, nil
}

// Kind is which server a test runs on, for tests whose expectations
// depend on it.
type Kind struct {
	Name    string // "redis" or "valkey"
	Version string // as the server says it; development builds say 255.255.255
	// FieldTTL: the server has TTLs per hash field (HPEXPIRE and its
	// kin): Redis from 7.4, Valkey from 9.0.
	FieldTTL bool
}

// Kind asks s which server it is. Features are probed (COMMAND INFO), not
// read off the version, which development builds do not give.
func (s *Server) Kind(t testing.TB) Kind {
	t.Helper()
	k := Kind{Name: "redis"}
	for line := range strings.Lines(s.Do(t, "INFO", "server").(string)) {
		name, value, _ := strings.Cut(strings.TrimSpace(line), ":")
		switch name {
		case "server_name": // Valkey's; Redis has none
			k.Name = value
		case "redis_version":
			if k.Version == "" {
				k.Version = value
			}
		case "valkey_version": // Valkey's redis_version is the Redis it is compatible with
			k.Version = value
		}
	}
	// An unknown command's entry is nil.
	if reply, ok := s.Do(t, "COMMAND", "INFO", "HPEXPIRE").([]any); ok && len(reply) == 1 && reply[0] != nil {
		k.FieldTTL = true
	}
	return k
}

// RequireFieldTTL ends the test unless s has hash-field TTLs: Redis 7.0
// and Valkey 8 have none to test, so there it skips, unless
// RequireFieldTTLEnv is set, when it fails.
func (s *Server) RequireFieldTTL(t testing.TB) {
	t.Helper()
	k := s.Kind(t)
	if k.FieldTTL {
		return
	}
	msg := fmt.Sprintf("%s %s (%s) has no hash-field TTLs (HPEXPIRE): run this test on Redis 7.4 or later, as `make test-servers` does with Redis 8",
		k.Name, k.Version, s.bin)
	if os.Getenv(RequireFieldTTLEnv) != "" {
		t.Fatalf("%s, which %s demands", msg, RequireFieldTTLEnv)
	}
	t.Skip(msg)
}
