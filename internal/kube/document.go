package kube

import (
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// The translation builds config's own model of procs.yaml
// (config.Document), written by config.Write and read back by
// config.Parse, so a --dry-run prints exactly what runs.

// secs is n seconds.
func secs(n int) time.Duration { return time.Duration(n) * time.Second }

// literal escapes every value of d that config interpolates (the one rule,
// config.Literal): the builder works on final values, which the Document
// holds in podvisor's syntax. It makes new slices, since processes share
// some (a postStart hook has its container's environment).
func literal(d *config.Document) {
	for _, p := range d.Processes {
		p.Command = literals(p.Command)
		env := make([]string, len(p.Env))
		for i, kv := range p.Env {
			k, v, _ := strings.Cut(kv, "=")
			env[i] = k + "=" + config.Literal(v)
		}
		p.Env = env
		p.WorkingDir = config.Literal(p.WorkingDir)
		for _, pr := range []*config.Probe{p.Ready, p.Live, p.Startup} {
			if pr != nil {
				pr.Command = literals(pr.Command)
				pr.Target = config.Literal(pr.Target)
			}
		}
		p.Stop.Command = literals(p.Stop.Command)
	}
}

func literals(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = config.Literal(s)
	}
	return out
}
