package config

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/graph"
)

// KV is one environment entry; order is kept as written.
type KV struct {
	Key, Value string
}

// DocFile is the model import and kube play still build; Document turns it
// into the Document Write writes (issue 36: to be replaced by Process).
type DocFile struct {
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
func (m *DocFile) Process(name string) *DocProcess {
	i := slices.IndexFunc(m.Processes, func(p *DocProcess) bool { return p.Name == name })
	if i < 0 {
		return nil
	}
	return m.Processes[i]
}

// Document converts f to the Document Write writes.
func (f *DocFile) Document() *Document {
	d := &Document{ShutdownTimeout: f.ShutdownTimeout, Header: f.Header, Env: kvs(f.Env)}
	for _, p := range f.Processes {
		d.Processes = append(d.Processes, p.process())
	}
	return d
}

func kvs(env []KV) []string {
	var out []string
	for _, kv := range env {
		out = append(out, kv.Key+"="+kv.Value)
	}
	return out
}

var shellPrefix = []string{"/bin/sh", "-c"}

// shellArgv is the argv of a command given as argv or, when argv is nil,
// as a shell string.
func shellArgv(argv []string, shell string) ([]string, bool) {
	if argv == nil && shell != "" {
		return append(slices.Clone(shellPrefix), shell), true
	}
	return argv, false
}

func (p *DocProcess) process() *Process {
	q := &Process{Name: p.Name, Env: kvs(p.Env), WorkingDir: p.WorkingDir, StartTimeout: p.StartTimeout,
		SuccessExitCodes: p.SuccessExitCodes, OOMScoreAdj: p.OOMScoreAdj, Sidecar: p.Sidecar, SecretEnv: p.SecretEnv,
		Written: &Written{Comments: p.Comments, Origin: p.Origin, Note: p.Note, EnvFile: p.EnvFile,
			Restart: p.Restart != nil, StopTimeout: p.Stop.Timed}}
	q.Command = p.Argv
	if p.Argv == nil {
		q.Command, q.Shell = append(slices.Clone(shellPrefix), p.Shell), true
	}
	switch p.Type {
	case "oneshot":
		q.Type = Oneshot
	case "job":
		q.Type = Job
	}
	if p.User != "" {
		q.User = &User{Spec: p.User}
	}
	for _, d := range p.DependsOn {
		c := graph.Started
		switch d.Condition {
		case "ready":
			c = graph.Ready
		case "completed":
			c = graph.Completed
		}
		q.DependsOn = append(q.DependsOn, Dependency{Name: d.Name, Condition: c, Restart: d.Restart})
	}
	q.Ready, q.Live, q.Startup = p.Ready.probe(), p.Live.probe(), p.Startup.probe()
	if r := p.Restart; r != nil {
		q.Restart = Restart{Backoff: r.Backoff, MaxBackoff: r.MaxBackoff, Limit: r.Limit}
		q.Restart.Policy = Policy(slices.Index(policyNames[:], r.Policy))
		for _, x := range r.Rules {
			e := ExitRule{Action: RuleAction(slices.Index(ruleActionWords, x.Action))}
			if x.NotIn {
				e.NotIn = x.Codes
			} else {
				e.In = x.Codes
			}
			q.Restart.Rules = append(q.Restart.Rules, e)
		}
	}
	s := p.Stop
	q.Stop = Stop{Timeout: s.Timeout, CommandFirst: s.CommandFirst, MinGrace: s.MinGrace}
	if s.Signal != "" {
		q.Stop.Signal = unix.SignalNum(s.Signal)
	}
	q.Stop.Command, q.Stop.Shell = shellArgv(s.Argv, s.Shell)
	if l := p.Log; l != nil {
		q.Log = Output{Stdout: Dest(l.Stdout), Stderr: Dest(l.Stderr), File: l.File, StderrFile: l.StderrFile, MaxSize: l.MaxSize, MaxFiles: l.MaxFiles}
	}
	return q
}

func (pr *DocProbe) probe() *Probe {
	if pr == nil {
		return nil
	}
	q := &Probe{Target: pr.Target, StartInterval: pr.StartInterval, Interval: pr.Interval, Timeout: pr.Timeout,
		InitialDelay: pr.InitialDelay, SuccessThreshold: pr.SuccessThreshold, FailureThreshold: pr.FailureThreshold,
		StopTimeout: pr.StopTimeout, WhileStopping: pr.WhileStopping}
	q.Kind = ProbeKind(slices.Index(probeKindNames[:], pr.Kind))
	if pr.Kind == "notify" {
		q.Kind, q.Target = ProbeNotifySystemd, ""
		if fd, ok := strings.CutPrefix(pr.Target, "fd:"); ok {
			q.Kind = ProbeNotifyFD
			q.FD, _ = strconv.Atoi(fd)
		}
	}
	q.Command, q.Shell = shellArgv(pr.Argv, pr.Shell)
	return q
}
