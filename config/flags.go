package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"
)

// Flags holds the common flags that RegisterFor adds to a FlagSet; only
// Load reads them. Values that need parsing are kept as the text the user
// typed, so that Load checks them with the same rules, and reports them in
// the same words, as values from the config file.
type Flags struct {
	fs *pflag.FlagSet
}

// Register adds the flags of every setting to fs: those of Settings.
func Register(fs *pflag.FlagSet) *Flags {
	return RegisterFor(fs, "")
}

// RegisterFor adds to fs the flags of the settings that command (one of
// Setting.Commands) uses, or of every setting when command is "": a flag
// that would change nothing is refused rather than silently ignored. A
// setting's Short is the flag's one-letter spelling (-u for --url).
func RegisterFor(fs *pflag.FlagSet, command string) *Flags {
	for _, s := range settings {
		switch {
		case s.Flag == "" || command != "" && !slices.Contains(s.Commands, command):
		case s.value != nil && s.value.isList:
			// An array, not a slice: a glob may hold a comma.
			fs.StringArrayP(s.Flag, s.Short, nil, s.Usage)
			if s.Default != "" { // what help says (--url's), not what parsing starts from
				fs.Lookup(s.Flag).DefValue = s.Default
			}
		case s.value != nil && s.value.isBool:
			fs.BoolP(s.Flag, s.Short, s.Default == "true", s.Usage)
		default:
			fs.StringP(s.Flag, s.Short, s.Default, s.Usage)
		}
	}
	return &Flags{fs: fs}
}

// Load builds the Config from the flags set on f's FlagSet (already
// parsed), the environment that getenv reads, the config file and the
// defaults, in that order of precedence. typed is the flags as the command
// line spelled them (CommandLine.Typed), for the messages to name them so.
// It returns every problem it finds, each naming where the bad value came
// from; a Config is only returned when there are none.
func Load(f *Flags, typed []string, getenv func(string) string) (Config, error) {
	set, given, err := f.given(typed)
	if err != nil {
		return Config{}, err
	}

	c := defaults()
	path, err := configPath(f.text("config"), getenv)
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
	if err := c.chooseServers(given); err != nil {
		return Config{}, err
	}
	if err := c.finish(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// text returns the value of the flag name as typed, "" when f has no such
// flag.
func (f *Flags) text(name string) string {
	if fl := f.fs.Lookup(name); fl != nil {
		return fl.Value.String()
	}
	return ""
}

// given returns the settings' flags given: set by the name of the
// setting's flag, given by that name too, with the flag as typed ("-u"
// for --url; its long spelling when typed is silent; the last spelling of
// one given again). A flag that cannot be repeated, given by both its
// spellings, is an error.
func (f *Flags) given(typed []string) (set map[string]bool, given map[string]string, err error) {
	set, given = make(map[string]bool), make(map[string]string)
	for _, spelled := range typed {
		fl := flagSpelled(f.fs, spelled)
		if fl == nil {
			continue
		}
		// A flag that may be repeated (--url, -u) is no mistake given twice.
		if before := given[fl.Name]; before != "" && before != spelled && fl.Value.Type() != "stringArray" {
			return nil, nil, fmt.Errorf("%s and %s are the same flag: give it once", before, spelled)
		}
		given[fl.Name] = spelled
	}
	f.fs.Visit(func(fl *pflag.Flag) {
		if given[fl.Name] == "" {
			given[fl.Name] = "--" + fl.Name
		}
	})
	for _, s := range settings {
		set[s.Flag] = s.Flag != "" && given[s.Flag] != ""
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
		items := []string{f.text(s.Flag)}
		if s.value.isList {
			items, _ = f.fs.GetStringArray(s.Flag)
		}
		for _, err := range s.value.text(c, items) {
			errs = append(errs, fmt.Errorf("%s: %w", given[s.Flag], err))
		}
		if s.origin != nil {
			*s.origin(c) = given[s.Flag]
		}
	}
	return errors.Join(errs...)
}

// A CommandLine is a command's arguments as Prepare reads them.
type CommandLine struct {
	Args       []string // the arguments for pflag, every flag spelled as pflag reads it
	Typed      []string // the flags given, in order, as typed: "-u", "--url" (also for -url)
	Positional []string // the arguments that are no flag nor a flag's value
}

// Prepare reads args, a command's arguments, as package flag did before
// pflag, so that a command line that worked still does: a flag of several
// letters after one dash is that flag (-url, -help), not one-letter flags
// run together. It notes how each flag was spelled, for Load, and which
// arguments are positional. A flag that takes a value followed by another
// flag of fs is an error: "--pattern --url X" would take --url for the
// pattern and X for an argument (a value that begins with a dash goes
// after =: --pattern=-x). It stops at a flag fs does not have, which
// parsing then reports.
func Prepare(fs *pflag.FlagSet, args []string) (CommandLine, error) {
	line := CommandLine{Args: slices.Clone(args)}
	for i := 0; i < len(line.Args); i++ {
		a := line.Args[i]
		switch {
		case a == "--":
			line.Positional = append(line.Positional, line.Args[i+1:]...)
			return line, nil
		case len(a) < 2 || a[0] != '-':
			line.Positional = append(line.Positional, a)
			continue
		}
		name, _, hasValue := strings.Cut(strings.TrimPrefix(a[1:], "-"), "=")
		spelled := "--" + name
		if len(name) == 1 && !strings.HasPrefix(a, "--") {
			spelled = "-" + name
		} else if !strings.HasPrefix(a, "--") {
			line.Args[i] = "-" + a // -url: package flag's spelling of --url
		}
		f := flagSpelled(fs, spelled)
		if f == nil {
			return line, nil
		}
		line.Typed = append(line.Typed, spelled)
		if hasValue || f.NoOptDefVal != "" || i+1 == len(line.Args) {
			continue // a switch, or its value is in this argument
		}
		if next := line.Args[i+1]; next != "--" && strings.HasPrefix(next, "-") && flagSpelled(fs, spelling(next)) != nil {
			return line, fmt.Errorf("%s has no value: the word after it, %s, is a flag — give the value right after %s", a, next, a)
		}
		i++ // its value, whatever it looks like
	}
	return line, nil
}

// spelling returns arg, a flag, as Prepare notes it: "-u", "--url".
func spelling(arg string) string {
	name, _, _ := strings.Cut(strings.TrimLeft(arg, "-"), "=")
	if len(name) == 1 && !strings.HasPrefix(arg, "--") {
		return "-" + name
	}
	return "--" + name
}

// flagSpelled returns the flag of fs spelled so ("-u", "--url"), nil for none.
func flagSpelled(fs *pflag.FlagSet, spelled string) *pflag.Flag {
	if name, ok := strings.CutPrefix(spelled, "--"); ok {
		return fs.Lookup(name)
	}
	return fs.ShorthandLookup(strings.TrimPrefix(spelled, "-"))
}
