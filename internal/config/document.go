package config

import (
	"slices"
	"time"
)

// KV is one environment entry; order is kept as written.
type KV struct {
	Key, Value string
}

// Document is a procs.yaml as podvisor writes it (import, kube play): what Write
// renders, with the comments that say where a value only approximates
// its origin. String values are already in podvisor's syntax: a literal
// $ that podvisor would interpolate is escaped (Literal), and ${VAR} stands for a variable taken from podvisor's
// environment at load.
type Document struct {
	Env             []KV
	ShutdownTimeout time.Duration // 0: podvisor's default
	Processes       []*DocProcess // in the order of the input
	Header          []string      // comment lines after the schema line
}

// DocProcess is one entry of processes.
type DocProcess struct {
	Name string
	// Command: Argv is exec'd directly; Shell, when Argv is nil, is run by
	// /bin/sh -c.
	Argv  []string
	Shell string
	Type  string // "", "oneshot" or "job"

	Env        []KV
	EnvFile    []string
	WorkingDir string
	User       string

	DependsOn    []DocDep
	Ready        *DocProbe
	StartTimeout time.Duration
	Live         *DocProbe
	Startup      *DocProbe

	Restart          *DocRestart
	SuccessExitCodes []int
	OOMScoreAdj      *int
	Sidecar          bool
	SecretEnv        []string // names of variables whose values are secrets
	Stop             DocStop
	Log              *DocLog // nil: the defaults (both streams on podvisor's stdout)

	// Comments by key (command, ready, restart, stop, ...): why the value
	// only approximates the original. Written beside the key.
	Comments map[string]string
	// Origin is where the process was defined (file:line), written as a
	// comment above it.
	Origin string
	// Note says what the process stands for (kube play: "init
	// container"), written as a comment above it.
	Note string
}

// Comment records why key's value only approximates the original; a
// second comment on the same key is appended to the first.
func (p *DocProcess) Comment(key, how string) {
	if p.Comments == nil {
		p.Comments = map[string]string{}
	}
	if c, ok := p.Comments[key]; ok {
		how = c + "; " + how
	}
	p.Comments[key] = how
}

// DocDep is one depends_on entry.
type DocDep struct {
	Name      string
	Condition string // started | ready | completed
	Restart   bool
}

// DocProbe is a ready or live block.
type DocProbe struct {
	Kind             string // http | tcp | exec | file | log | notify
	Target           string // URL, host:port, path, regex, "systemd" or "fd:N"
	Argv             []string
	Shell            string // exec probe in shell form, when Argv is nil
	StartInterval    time.Duration
	Interval         time.Duration
	Timeout          time.Duration
	InitialDelay     time.Duration
	SuccessThreshold int
	FailureThreshold int
	StopTimeout      time.Duration // 0: the process's stop.timeout
	WhileStopping    bool
}

// DocLog is a process's log block; empty fields are left out.
type DocLog struct {
	Stdout, Stderr   string // inherit | file | off
	File, StderrFile string
	MaxSize          int64 // bytes; 0: podvisor's default
	MaxFiles         int   // 0: podvisor's default
}

// EnsureLog returns p's log block, creating it.
func (p *DocProcess) EnsureLog() *DocLog {
	if p.Log == nil {
		p.Log = &DocLog{}
	}
	return p.Log
}

// DocRestart is the long form of restart.
type DocRestart struct {
	Policy     string // always | on-failure | never
	Backoff    time.Duration
	MaxBackoff time.Duration
	Limit      int
	Rules      []DocRule
}

// DocRule is one entry of restart.rules.
type DocRule struct {
	Codes  []int
	NotIn  bool   // Codes is exit_codes.not_in, else exit_codes.in
	Action string // restart | stop | restart-all | shutdown
}

// DocStop is the stop block; zero values are left out.
type DocStop struct {
	Signal  string
	Timeout time.Duration
	Timed   bool // Timeout was given (0s means SIGKILL at once)
	Argv    []string
	Shell   string
	// CommandFirst: the command starts when a teardown begins.
	CommandFirst bool
	MinGrace     time.Duration
}

// Process looks a process up by name.
func (m *Document) Process(name string) *DocProcess {
	i := slices.IndexFunc(m.Processes, func(p *DocProcess) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return m.Processes[i]
}
