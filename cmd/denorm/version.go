package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Set at link time, e.g.
//
//	go build -ldflags "-X main.version=v0.1.0 -X main.commit=$(git rev-parse HEAD)"
//
// They are never written at run time.
var (
	version = "dev"
	commit  = ""
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version of denorm",
		Long: `Print denorm's version, the Go version it was built with and, when known, the
commit it was built from (set with -ldflags at build time, or read from the
build information that the Go toolchain embeds).`,
		Example: `  denorm version`,
		Args:    usageArgs(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, c, dirty := buildVersion()
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "denorm %s\n", v)
			fmt.Fprintf(out, "go     %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			if c != "" {
				if dirty {
					c += " (modified)"
				}
				fmt.Fprintf(out, "commit %s\n", c)
			}
			return nil
		},
	}
}

// buildVersion prefers what -ldflags set, then what the toolchain embedded.
func buildVersion() (v, c string, dirty bool) {
	v, c = version, commit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return v, c, false
	}
	if v == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
		v = info.Main.Version
	}
	if c == "" {
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				c = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
	}
	return v, c, dirty
}
