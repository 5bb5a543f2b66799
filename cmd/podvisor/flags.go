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

func loadConfig(path string) (*config.Config, error) {
	// Loading is one burst of garbage (the YAML node tree): collecting
	// more eagerly keeps the peak small for a hostile file (FAULTS A7).
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	return config.Load(path, os.LookupEnv)
}
