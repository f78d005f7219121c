package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// A release build stamps these (go build -ldflags "-X ...", as
// .goreleaser.yaml does): its version, from the tag, and its commit.
var (
	stampedVersion string
	stampedCommit  string
)

func (a *app) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "print the version and the commit of the build",
		Long:    aboutVersion,
		Example: examples(versionExamples),
		RunE: a.run(func(_ *cobra.Command, args []string) (int, error) {
			if len(args) > 0 {
				return exitFailed, fmt.Errorf("unexpected argument %q: version takes none", args[0])
			}
			_, err := fmt.Fprintln(a.stdout, version())
			return exitOK, err
		}),
	}
}

// version returns the version (stamped by a release, else the module's:
// a tag for 'go install ...@v1.2.3', else "devel"), the commit and whether
// the tree had changes, and the Go release, as the build recorded them.
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		info = &debug.BuildInfo{}
	}
	return versionOf(info, stampedVersion, stampedCommit)
}

// versionOf returns version's line for the build info, or for the version
// and commit a release stamped, when it did.
func versionOf(info *debug.BuildInfo, stamped, commit string) string {
	v := info.Main.Version
	if stamped != "" {
		v = stamped
	}
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
	if len(commit) >= 12 {
		rev = " " + commit[:12]
	}
	goVersion := info.GoVersion
	if goVersion == "" {
		goVersion = "Go unknown"
	}
	return fmt.Sprintf("countertop %s%s%s, %s", v, rev, dirty, goVersion)
}
