package config_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/countertop/countertop/model"
)

// TestConfigFileTooLarge checks that a file no config could need is refused
// before it is read in full: /dev/zero (or a FIFO) never ends, and
// ./countertop.toml is read without being asked for.
func TestConfigFileTooLarge(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err == nil {
		done := make(chan error, 1)
		go func() {
			_, err := load(t, nil, "--config", "/dev/zero")
			done <- err
		}()
		select {
		case err := <-done:
			want := "/dev/zero: larger than 1 MiB, more than any countertop config needs: check that it is the config file you meant (--config names one)"
			if err == nil || err.Error() != want {
				t.Errorf("--config /dev/zero:\n got %v\nwant %s", err, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("--config /dev/zero still loading after 10s: it is being read to its end, which it has not")
		}
	}

	dir := t.TempDir()
	const mib = 1 << 20
	body := "[redis]\nmode = \"poll\"\n"
	pad := "#" + strings.Repeat("x", mib-len(body)-2) + "\n" // a file of 1 MiB exactly
	fits := writeFile(t, dir, "fits.toml", body+pad)
	c, err := load(t, nil, "--config", fits)
	if err != nil || c.Redis.Mode != model.WatchPoll {
		t.Errorf("a config file of 1 MiB: mode %q, %v; want it read", c.Redis.Mode, err)
	}
	over := writeFile(t, dir, "over.toml", body+pad+"\n")
	want := over + ": larger than 1 MiB, more than any countertop config needs: check that it is the config file you meant (--config names one)"
	if _, err := load(t, nil, "--config", over); err == nil || err.Error() != want {
		t.Errorf("a config file of 1 MiB and a byte:\n got %v\nwant %s", err, want)
	}
}

// TestConfigFileNestedTooDeep checks that values nested deeper than any
// config needs are refused before the TOML decoder, whose time and memory
// grow much faster than the file on them, sees them; and that brackets in
// strings and comments, or nesting a config may have, are no problem.
func TestConfigFileNestedTooDeep(t *testing.T) {
	dir := t.TempDir()
	nested := func(open, close string, n int) string { // x nested n deep
		return "x = " + strings.Repeat(open, n) + "1" + strings.Repeat(close, n) + "\n"
	}
	for _, tc := range []struct {
		name, src, want string
	}{
		{"inline tables", "[redis]\nmode = \"poll\"\n" + nested("{b=", "}", 2000),
			":3: values nested more than 16 deep (arrays and inline tables within each other), more than any countertop config needs: write them flatter"},
		{"arrays", "\n" + nested("[", "]", 17),
			":2: values nested more than 16 deep (arrays and inline tables within each other), more than any countertop config needs: write them flatter"},
		{"16 deep: not refused for that", "[redis]\n" + nested("{b=", "}", 16),
			":2: redis.x: unknown key"},
		{"brackets in strings and comments do not nest",
			"[redis] # [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\npatterns = [\"{{{{{{{{{{{{{{{{{{{{{{{{{\", '[[[[[[[[[[[[[[[[[[[[[[[', \"\"\"\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n\"\"\"]\nmode = 1\n",
			":5: redis.mode: must be a string in quotes, not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, dir, "c.toml", tc.src)
			start := time.Now()
			_, err := load(t, nil, "--config", path)
			if err == nil || err.Error() != path+tc.want {
				t.Errorf("error:\n got %v\nwant %s", err, path+tc.want)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v to refuse", d)
			}
		})
	}
}
