package config_test

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/countertop/countertop/config"
)

// TestSettingsTable checks the table every source is read from: each
// setting can be set somehow, is named once, says which subcommands use
// it, and has its key written out in config.example.toml, which promises
// every key.
func TestSettingsTable(t *testing.T) {
	example, err := os.ReadFile("../config.example.toml")
	if err != nil {
		t.Fatal(err)
	}
	commands := []string{"dashboard", "snapshot", "check", "incr", "repair", "serve"}
	seen := make(map[string]bool)
	for _, s := range config.Settings() {
		name := s.Flag + s.Key
		if s.Flag == "" && s.Key == "" {
			t.Errorf("a setting with neither a flag nor a key: %+v", s)
		}
		for _, n := range []string{"--" + s.Flag, s.Key, s.Env} {
			if n != "--" && n != "" && seen[n] {
				t.Errorf("%s: %s is in the table twice", name, n)
			}
			seen[n] = true
		}
		if s.Flag != "" && s.Usage == "" {
			t.Errorf("--%s has no help", s.Flag)
		}
		if len(s.Commands) == 0 {
			t.Errorf("%s: no subcommand uses it", name)
		}
		for _, c := range s.Commands {
			if !slices.Contains(commands, c) {
				t.Errorf("%s: %q is not a subcommand (use one of %q)", name, c, commands)
			}
		}
		if s.Key == "" {
			continue
		}
		table, key, _ := strings.Cut(s.Key, ".")
		section := string(example)
		if _, after, ok := strings.Cut(section, "\n["+table+"]\n"); ok {
			section, _, _ = strings.Cut(after, "\n[")
		} else {
			t.Errorf("config.example.toml has no [%s] table, for %s", table, s.Key)
		}
		if !regexp.MustCompile(`(?m)^(# )?` + regexp.QuoteMeta(key) + ` = `).MatchString(section) {
			t.Errorf("config.example.toml does not show %s in [%s]", key, table)
		}
	}
}
