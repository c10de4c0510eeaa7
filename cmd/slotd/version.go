package main

import (
	"context"
	"fmt"
	"io"
	"runtime/debug"
)

var versionCommand = &command{
	name:    "version",
	summary: "print slotd's version, commit and Go version",
	setup: func(fs *flags) runFunc {
		return func(_ context.Context, c *cli, args []string) error {
			if err := noArgs(args); err != nil {
				return err
			}
			return printVersion(c.stdout)
		}
	},
}

// printVersion prints what the binary knows of itself: the module version
// (a tag with go install, "(devel)" from a checkout), the commit it was
// built from (with +dirty when the tree had changes) and the Go version.
func printVersion(w io.Writer) error {
	version, commit, goVersion := "(devel)", "unknown", "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		dirty := false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if dirty {
			commit += "+dirty"
		}
	}
	_, err := fmt.Fprintf(w, "slotd %s commit %s %s\n", version, commit, goVersion)
	return err
}
