package kube

import (
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
		p.Argv = literals(p.Argv)
		env := make([]config.KV, len(p.Env))
		for i, kv := range p.Env {
			env[i] = config.KV{Key: kv.Key, Value: config.Literal(kv.Value)}
		}
		p.Env = env
		p.WorkingDir = config.Literal(p.WorkingDir)
		for _, pr := range []*config.DocProbe{p.Ready, p.Live, p.Startup} {
			if pr != nil {
				pr.Argv = literals(pr.Argv)
				pr.Target = config.Literal(pr.Target)
			}
		}
		p.Stop.Argv = literals(p.Stop.Argv)
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
