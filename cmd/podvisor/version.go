package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// commit may be stamped with -ldflags "-X main.commit=..."; otherwise it
// comes from the VCS information Go records when building in a git checkout.
var commit = ""

// buildInfo is what `podvisor version` reports.
type buildInfo struct {
	Version  string `json:"version"`
	Commit   string `json:"commit"`   // "unknown" when not recorded
	Modified bool   `json:"modified"` // built from a tree with uncommitted changes
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

func currentBuild() buildInfo {
	b := buildInfo{Version: version, Commit: commit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if info, ok := debug.ReadBuildInfo(); ok {
		// go install MODULE@VERSION stamps nothing but records the version.
		if b.Version == "dev" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			b.Version = info.Main.Version
		}
		for _, s := range info.Settings {
			switch {
			case s.Key == "vcs.revision" && b.Commit == "":
				b.Commit = s.Value
			case s.Key == "vcs.modified":
				b.Modified = s.Value == "true"
			case s.Key == "GOARM":
				b.Platform += "/v" + s.Value // linux/arm/v7, as in image platforms
			}
		}
	}
	if b.Commit == "" {
		b.Commit = "unknown"
	}
	return b
}

// versionFlags defines version's flags (cmdVersion and the command table share it).
func versionFlags(fs *flag.FlagSet) (asJSON *bool, out *output) {
	return fs.Bool("json", false, "same as -o json"), outputFlag(fs)
}

// cmdVersion prints the version; its first line stays "podvisor VERSION"
// for scripts that read only that.
func cmdVersion(args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", stderr)
	asJSON, out := versionFlags(fs)
	if err := fs.Parse(args); err != nil {
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "podvisor version: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	b := currentBuild()
	if *asJSON || *out == outputJSON {
		if err := writeJSON(stdout, b); err != nil {
			return exitFail
		}
		return exitOK
	}
	mod := ""
	if b.Modified {
		mod = " (modified)"
	}
	if _, err := fmt.Fprintf(stdout, "podvisor %s\ncommit: %s%s\ngo:     %s %s\n", b.Version, b.Commit, mod, b.Go, b.Platform); err != nil {
		return exitFail
	}
	return exitOK
}
