package config

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/countertop/countertop/internal/words"
)

// Flags holds the values of the common flags that Register adds to a
// FlagSet; only Load reads them. Values that need parsing are kept as the
// text the user typed, so that Load checks them with the same rules, and
// reports them in the same words, as values from the config file.
type Flags struct {
	values map[string]flag.Value // by flag name
}

// Register adds the flags of every setting to fs: those of Settings.
func Register(fs *flag.FlagSet) *Flags {
	return RegisterFor(fs, "")
}

// RegisterFor adds to fs the flags of the settings that command (one of
// Setting.Commands) uses, or of every setting when command is "": a flag
// that would change nothing is refused rather than silently ignored.
func RegisterFor(fs *flag.FlagSet, command string) *Flags {
	f := &Flags{values: make(map[string]flag.Value)}
	for _, s := range settings {
		switch {
		case s.Flag == "" || command != "" && !slices.Contains(s.Commands, command):
			continue
		case s.value != nil && s.value.isList:
			fs.Var(new(stringList), s.Flag, s.Usage)
		case s.value != nil && s.value.isBool:
			fs.Bool(s.Flag, s.Default == "true", s.Usage)
		default:
			fs.String(s.Flag, s.Default, s.Usage)
		}
		f.values[s.Flag] = fs.Lookup(s.Flag).Value
		if s.Short != "" {
			fs.Var(f.values[s.Flag], s.Short, "the same as --"+s.Flag)
		}
	}
	return f
}

// Load builds the Config from the flags set on fs (already parsed), the
// environment that getenv reads, the config file and the defaults, in that
// order of precedence. It returns every problem it finds, each naming where
// the bad value came from; a Config is only returned when there are none.
func Load(f *Flags, fs *flag.FlagSet, getenv func(string) string) (Config, error) {
	set, given, err := givenFlags(fs)
	if err != nil {
		return Config{}, err
	}

	c := defaults()
	path, err := configPath(f.values["config"].String(), getenv)
	if err != nil {
		return Config{}, err
	}
	var errs []error
	if path != "" {
		c.File = path
		errs = append(errs, c.readFile(path))
	}
	errs = append(errs, c.applyEnv(getenv, set), c.applyFlags(f, given))
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	if err := c.applyAddress(f, given); err != nil {
		return Config{}, err
	}
	if err := c.finish(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// givenFlags returns the settings' flags given on fs: set by the name of
// the setting's flag, given by that name too, with the flag as typed ("-u"
// for --url). A flag given by both its names is an error.
func givenFlags(fs *flag.FlagSet) (set map[string]bool, given map[string]string, err error) {
	set, given = make(map[string]bool), make(map[string]string)
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = words.Flag(fl.Name) })
	for _, s := range settings {
		switch short, long := given[s.Short], given[s.Flag]; {
		case s.Short == "" || short == "":
		case long != "":
			return nil, nil, fmt.Errorf("%s and %s are the same flag: give it once", short, long)
		default:
			given[s.Flag] = short
		}
		set[s.Flag] = given[s.Flag] != ""
	}
	return set, given, nil
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

// applyEnv applies the environment variables of the settings whose flag
// was not given (a bad REDIS_URL is no matter with --url).
func (c *Config) applyEnv(getenv func(string) string, set map[string]bool) error {
	var errs []error
	for _, s := range settings {
		text := ""
		if s.Env != "" && !set[s.Flag] {
			text = getenv(s.Env)
		}
		if text == "" {
			continue
		}
		bad := s.value.text(c, []string{text})
		for _, err := range bad {
			errs = append(errs, fmt.Errorf("%s: %w", s.Env, err))
		}
		if len(bad) == 0 && s.origin != nil {
			*s.origin(c) = s.Env
		}
	}
	return errors.Join(errs...)
}

// applyFlags applies the flags the user gave; given maps each to its name
// as typed.
func (c *Config) applyFlags(f *Flags, given map[string]string) error {
	var errs []error
	for _, s := range settings {
		if s.Flag == "" || s.value == nil || given[s.Flag] == "" {
			continue
		}
		v := f.values[s.Flag]
		items := []string{v.String()}
		if list, ok := v.(*stringList); ok {
			items = *list
		}
		for _, err := range s.value.text(c, items) {
			errs = append(errs, fmt.Errorf("%s: %w", given[s.Flag], err))
		}
		if s.origin != nil {
			*s.origin(c) = given[s.Flag]
		}
		if s.flagAlso != nil {
			s.flagAlso(c, v.String())
		}
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
