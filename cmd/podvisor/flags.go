package main

import (
	"flag"
	"io"
	"os"
	"runtime/debug"

	"github.com/podvisor/podvisor/internal/config"
)

// newFlagSet returns a flag set that reports errors to stderr and never exits.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("podvisor "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// configFlag registers -c/--config with its documented default: $PODVISOR_CONFIG, else
// procs.yaml in the working directory.
func configFlag(fs *flag.FlagSet) *string {
	def := os.Getenv("PODVISOR_CONFIG")
	if def == "" {
		def = "procs.yaml"
	}
	p := fs.String("c", def, "config `FILE` ($PODVISOR_CONFIG, else procs.yaml)")
	fs.StringVar(p, "config", def, "config `FILE` (same as -c)")
	return p
}

// eagerGCAbove is the config size above which loading collects garbage
// eagerly. Loading makes about 40 times the file's size in garbage (the YAML
// node tree); below this size that is a few MB, and collecting it eagerly
// only slowed a start (a 200-process file: 1.2 ms to load, not 0.8).
const eagerGCAbove = 256 << 10

func loadConfig(path string) (*config.Config, error) {
	// For a big or hostile file, collecting more eagerly keeps the peak
	// small (docs/reliability.md, A7).
	if fi, err := os.Stat(path); err != nil || fi.Size() > eagerGCAbove {
		defer debug.SetGCPercent(debug.SetGCPercent(25))
	}
	return config.Load(path, os.LookupEnv)
}
