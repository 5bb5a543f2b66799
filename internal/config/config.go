// Package config loads and validates procs.yaml. The types in this file are the
// validated, defaulted, interpolated result that the rest of podvisor reads; they
// are never mutated after Load returns.
package config

import (
	"regexp"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/graph"
)

// Defaults, as docs/reference.md gives them.
const (
	DefaultListen           = ":9464"
	DefaultShutdownTimeout  = 30 * time.Second
	DefaultStopTimeout      = 10 * time.Second
	DefaultBackoff          = 500 * time.Millisecond
	DefaultMaxBackoff       = 30 * time.Second
	BackoffResetAfter       = 60 * time.Second
	DefaultStartInterval    = 100 * time.Millisecond
	DefaultInterval         = 10 * time.Second
	DefaultProbeTimeout     = 1 * time.Second
	DefaultSuccessThreshold = 1
	DefaultFailureThreshold = 3
	// MaxFileSize is the largest procs.yaml Load accepts.
	MaxFileSize = 1 << 20
	// MaxProcesses bounds the processes of one config: far above any real
	// pod, low enough that loading and supervising stay small.
	MaxProcesses = 10000
)

// Pos is a location in a config file.
type Pos struct {
	File string
	Line int
	Col  int
}

// Config is a loaded procs.yaml.
type Config struct {
	File            string   // path as given to Load
	Dir             string   // absolute directory of File; base for relative paths
	Listen          string   // "off" disables the HTTP server
	ListenHosts     []string // DNS names the HTTP server answers to besides IPs and localhost
	Control         string   // control socket path; "" means the default for the user, "off" disables it
	UI              UI       // the web page on the HTTP listener
	MCP             MCP      // what `podvisor mcp` may do
	ShutdownTimeout time.Duration
	Log             Log
	Env             []string            // global env, KEY=VALUE, in file order
	Processes       map[string]*Process // by name
	Names           []string            // process names, sorted
	Graph           *graph.Graph
}

// Log is the `log` section.
type Log struct {
	Format     string // "text" or "json"
	Timestamps bool
	Tail       int // lines of each process's output kept in memory for `podvisor logs`; 0 keeps none
	// Default is every process's output unless its own log says otherwise;
	// its files still hold {name}.
	Default Output
}

// Type is a process type.
type Type uint8

const (
	Service Type = iota
	Oneshot
	Job
)

var typeNames = [...]string{Service: "service", Oneshot: "oneshot", Job: "job"}

func (t Type) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return "unknown"
}

// Policy is a restart policy.
type Policy uint8

const (
	Always Policy = iota
	OnFailure
	Never
)

var policyNames = [...]string{Always: "always", OnFailure: "on-failure", Never: "never"}

func (p Policy) String() string {
	if int(p) < len(policyNames) {
		return policyNames[p]
	}
	return "unknown"
}

// Process is one entry of `processes`.
type Process struct {
	Name string
	Pos  Pos // position of the process's key

	// Command is the argv. The string form becomes ["/bin/sh", "-c", s] with Shell set.
	Command    []string
	Shell      bool
	Type       Type
	Env        []string // global env, then env_file entries, then process env; KEY=VALUE, later wins
	WorkingDir string   // absolute; defaults to Config.Dir
	User       *User    // nil: run as podvisor's own user
	// Root is the directory the process runs in as its root directory,
	// in a mount namespace of its own (kube play's images); "": this
	// machine's. Its exec probes and hooks run there too; WorkingDir is
	// then a path inside it.
	Root string

	DependsOn    []Dependency // sorted by name
	Ready        *Probe       // nil: no readiness probe
	StartTimeout time.Duration
	Live         *Probe // nil: no liveness probe
	// Startup is checked first: Ready and Live begin once it passed, and
	// FailureThreshold consecutive failures of it are a failed start. nil:
	// none (then a oneshot's or job's Ready is its startup check, as before
	// startup existed).
	Startup *Probe

	Restart          Restart
	SuccessExitCodes []int // default [0]
	Stop             Stop

	// Watch restarts or signals the process on file changes; nil: none.
	Watch *Watch

	// Schedule (oneshots only) runs the process at each tick instead of
	// once at the start-up; nil: none.
	Schedule *Schedule

	// Watchdog is the sd_notify watchdog interval (0: none): WATCHDOG_USEC
	// for the child, and a missed WATCHDOG=1 is a liveness failure.
	Watchdog time.Duration

	// OOMScoreAdj is written to the child's oom_score_adj before it execs;
	// nil leaves podvisor's own value (inherited).
	OOMScoreAdj *int

	// Limits are resource limits (setrlimit(2)) in place before the
	// program runs, in LimitNames order (limits.go); nil: podvisor's own.
	Limits []Rlimit
	// Umask is the child's file mode creation mask; nil: podvisor's own.
	Umask *uint32
	// NoNewPrivs sets no_new_privs before exec: no set-user-ID bit or
	// file capability can raise the process's privileges.
	NoNewPrivs bool
	// AmbientCaps are the capabilities a process with a User keeps across
	// its exec (capabilities: {ambient: [...]}), sorted.
	AmbientCaps []string

	// Log says where stdout and stderr go (the top-level log keys under
	// the process's own).
	Log Output

	// SecretEnv names the variables whose values are secrets whatever
	// their names say (secret_env; kube play lists those from Secrets):
	// they are redacted from probe details like DB_PASSWORD's. Sorted.
	SecretEnv []string

	// Profiles are the named sets the process belongs to (profiles.go):
	// a process with none runs by default, one with some only when a
	// profile of it is asked for or it is needed. Sorted, no duplicates.
	Profiles []string

	// Sidecar: serves the others. Its `started` condition holds only once it
	// has been seen running after its exec (the kubelet's start gate), and a
	// SIGKILL it needed in a teardown does not make the run's exit code 1.
	Sidecar bool

	// RemainAfterExit (services only, with restart never or on-failure): a
	// success exit that the policy does not restart leaves the process
	// `completed`, counting as ready, as systemd's RemainAfterExit= and a
	// completed process of process-compose do (docs/configuration.md).
	RemainAfterExit bool

	// Sockets are bound by podvisor and passed to every incarnation
	// (internal/launch/sockets.go).
	Sockets []Socket
	// FDStoreMax bounds the fds the process may hand to podvisor to keep
	// for its next incarnation (FDSTORE=1); 0 disables the store.
	FDStoreMax int
	// Daemon: the command forks a daemon that writes its pid to a file
	// and exits; the daemon is supervised in its place (daemon.go).
	Daemon *Daemon
	// Reload is what `podvisor reload NAME` does (procreload.go); nil:
	// the process cannot be reloaded.
	Reload *Reload
	// Resources are the limits of the process's cgroup (resources.go);
	// nil: none, and no cgroup.
	Resources *Resources

	// TTY gives the process a pseudo-terminal as stdin, stdout and stderr
	// instead of pipes; Stdin gives it a pipe podvisor holds open as stdin
	// (tty.go). Either makes it attachable (`podvisor attach`).
	TTY   bool
	Stdin bool

	// Written is what a written procs.yaml holds beside the values
	// (comments, keys written as given); nil for a loaded process.
	Written *Written
}

// IsSuccess reports whether code is one of the process's success exit codes.
func (p *Process) IsSuccess(code int) bool {
	for _, c := range p.SuccessExitCodes {
		if c == code {
			return true
		}
	}
	return false
}

// User is a resolved `user:` setting.
type User struct {
	Spec   string // as written
	UID    uint32
	GID    uint32
	Groups []uint32 // supplementary groups
	Name   string   // "" when given as a bare uid not in /etc/passwd
	Home   string
}

// Dependency is one `depends_on` entry.
type Dependency struct {
	Name      string
	Condition graph.Condition
	Restart   bool // restart this process when the dependency restarts
	Pos       Pos
}

// Restart is the restart policy with backoff.
type Restart struct {
	Policy     Policy
	Backoff    time.Duration
	MaxBackoff time.Duration
	Limit      int // 0 = unlimited
	// Overlap: a restart starts the new incarnation first and stops the
	// old one once the new one is ready (supervisor/overlap.go).
	Overlap bool
	// DuringTermination: a sidecar goes on being probed and restarted while
	// another process's stop.command runs (KEP-4438); without it a sidecar
	// is held then, as by the kubelet (supervisor/sidecarhold.go).
	DuringTermination bool
	// Rules are checked in order against every exit outside teardown; the
	// first that matches decides (rules.go), else the policy does.
	Rules []ExitRule
}

// Stop is how a process is stopped.
type Stop struct {
	Signal  syscall.Signal
	Timeout time.Duration
	Command []string // pre-stop hook; nil if none
	Shell   bool     // Command is the string form, ["/bin/sh", "-c", s]
	// CommandFirst: in a teardown, Command starts when the teardown begins
	// (with the whole of Timeout), not at the process's turn; the signal
	// still waits for the turn (the kubelet's preStop hooks).
	CommandFirst bool
	// MinGrace: in a teardown, however little of the budget is left (none
	// after shutdown_timeout), the process still gets its stop signal and
	// this long before SIGKILL (the kubelet's 2 s minimum).
	MinGrace time.Duration
}

// ProbeKind is the kind of a readiness or liveness check.
type ProbeKind uint8

const (
	ProbeHTTP ProbeKind = iota
	ProbeTCP
	ProbeExec
	ProbeFile
	ProbeLog
	ProbeNotifySystemd
	ProbeNotifyFD
	ProbeGRPC
)

var probeKindNames = [...]string{
	ProbeHTTP: "http", ProbeTCP: "tcp", ProbeExec: "exec", ProbeFile: "file",
	ProbeLog: "log", ProbeNotifySystemd: "notify:systemd", ProbeNotifyFD: "notify:fd", ProbeGRPC: "grpc",
}

func (k ProbeKind) String() string {
	if int(k) < len(probeKindNames) {
		return probeKindNames[k]
	}
	return "unknown"
}

// Probe is a `ready` or `live` block.
type Probe struct {
	Kind    ProbeKind
	Target  string         // URL (http), host:port (tcp, grpc), absolute path (file), regex source (log)
	Command []string       // exec: argv (string form is ["/bin/sh","-c",s])
	Shell   bool           // exec: Command is the string form
	Regexp  *regexp.Regexp // log
	FD      int            // notify fd:N (N >= 3)
	Service string         // grpc: the service asked about ("" is the server as a whole)
	TLS     bool           // grpc: TLS without a certificate check (else h2c)
	H2C     bool           // http: HTTP/2 without TLS, with prior knowledge

	StartInterval    time.Duration
	Interval         time.Duration
	Timeout          time.Duration
	InitialDelay     time.Duration
	SuccessThreshold int
	FailureThreshold int
	// StopTimeout, when set, replaces stop.timeout for a stop this check's
	// failure causes (a missed start_timeout, a failed liveness check): the
	// kubelet's probe-level terminationGracePeriodSeconds.
	StopTimeout time.Duration
	// WhileStopping (ready only): the check goes on while its process
	// stops, changing only its ready state (the kubelet probes a
	// terminating container's readiness).
	WhileStopping bool
}
