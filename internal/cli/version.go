package cli

import (
	"fmt"
	"runtime/debug"
)

// version returns the module version (a tag for 'go install ...@v1.2.3',
// else "devel"), the commit and whether the tree had changes, and the Go
// release, as the build recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "countertop (no build information)"
	}
	return versionOf(info)
}

// versionOf returns version's line for the build info.
func versionOf(info *debug.BuildInfo) string {
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "devel"
	}
	var rev, dirty string
	if v == "devel" {
		rev = " (commit unknown)" // built outside a checkout, or with -buildvcs=false; a release's version says which
	}
	for _, s := range info.Settings {
		switch {
		case s.Key == "vcs.revision" && len(s.Value) >= 12:
			rev = " " + s.Value[:12]
		case s.Key == "vcs.modified" && s.Value == "true":
			dirty = " (modified)"
		}
	}
	return fmt.Sprintf("countertop %s%s%s, %s", v, rev, dirty, info.GoVersion)
}
