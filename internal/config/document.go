package config

import (
	"slices"
	"time"
)

// Document is a procs.yaml as podvisor writes it (import, kube play): what
// Write renders. Its processes are the loader's own Process values, each
// with a Written annotation for what only the written file holds. String
// values are already in podvisor's syntax: a literal $ that podvisor would
// interpolate is escaped (Literal), and ${VAR} stands for a variable taken
// from podvisor's environment at load.
type Document struct {
	Env             []string // KEY=VALUE, in file order
	ShutdownTimeout time.Duration
	Processes       []*Process // in the order of the input
	Header          []string   // comment lines after the schema line
}

// Written is what a written procs.yaml says about a process beyond the
// values Load gives back: comments, and which keys are written where the
// value alone does not tell (docs/reference.md lists the keys).
type Written struct {
	// Comments by key (command, ready, restart, stop, ...): why the value
	// only approximates the original. Written beside the key.
	Comments map[string]string
	// Origin is where the process was defined (file:line), written as a
	// comment above it.
	Origin string
	// Note says what the process stands for (kube play: "init
	// container"), written as a comment above it.
	Note string
	// EnvFile is env_file as written (Load reads the files into Env).
	EnvFile []string
	// Restart: the restart block is written (else the loader's default).
	Restart bool
	// StopTimeout: stop.timeout is written (0s means SIGKILL at once).
	StopTimeout bool
}

// Notes returns p's written annotation, creating it.
func (p *Process) Notes() *Written {
	if p.Written == nil {
		p.Written = &Written{}
	}
	return p.Written
}

// Comment records why key's value only approximates the original; a
// second comment on the same key is appended to the first.
func (p *Process) Comment(key, how string) {
	w := p.Notes()
	if w.Comments == nil {
		w.Comments = map[string]string{}
	}
	if c, ok := w.Comments[key]; ok {
		how = c + "; " + how
	}
	w.Comments[key] = how
}

// Process looks a process up by name.
func (d *Document) Process(name string) *Process {
	i := slices.IndexFunc(d.Processes, func(p *Process) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return d.Processes[i]
}
