package kube

import (
	"fmt"
	"net"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
)

// Options steer Translate. They hold everything Translate would otherwise
// ask the machine, so that it stays a pure function; PlaceVolumes is the
// one call out, for a caller that chooses the volume directory from the
// mounts.
type Options struct {
	Ordered       bool              // podvisor's order instead of the kubelet's
	ImageCommands map[string]string // image -> shell command standing for its entrypoint
	FromDir       string            // ConfigMap/Secret keys as DIR/NAME/KEY files
	Self          string            // path of the podvisor binary (httpGet hooks)
	Root          bool              // podvisor runs as root (user:, mount namespace)
	VolumeDir     string            // where volumes are materialised
	ClaimDir      string            // where persistentVolumeClaims live (ClaimsDir), across runs
	// PlaceVolumes, when set, is asked for the volume directory (in
	// VolumeDir's place) once the mounts are known and before any path
	// of a volume is used: kube play makes its run directory outside
	// every mount target, so that it translates once.
	PlaceVolumes func(mounts []Mount) (string, error)
	VolumeRoot   string // remap mount paths under this directory (no namespace)
	Hostname     string
	CACert       string // --ca-file: the cluster CA for kube-root-ca.crt
	CPUs         int
	MemoryBytes  int64
	DiskBytes    int64
	// RestartContainerDuringTermination: KEP-4438's feature gate (alpha):
	// sidecars go on being probed and restarted while a regular
	// container stops (restart.during_termination).
	RestartContainerDuringTermination bool
	// Images are the images containers (and image volumes) run from, by
	// reference (images.go); a container whose image is here runs in a
	// root of its own beside the volume directory (RootPlan). nil: the
	// containers run on this machine, as without images. ImagesFlag
	// names the flag that gave them, for messages.
	Images     map[string]*Image
	ImagesFlag string
}

// Result is a translated workload.
type Result struct {
	Procs    *config.Document // the procs.yaml that runs it
	Warnings []string         // fields not honoured, each listed once
	Volumes  []*VolumePlan
	Mounts   []Mount // bind mounts for the private mount namespace
	// Roots are the roots of the containers that run from their images,
	// to build before the run (imageroot_linux.go).
	Roots []*RootPlan
}

// orderedStartInterval is how often --ordered tries a readiness gate until
// it first passes: podvisor's own default start_interval.
const orderedStartInterval = 100 * time.Millisecond

// orderedTriesPerSecond is how many attempts orderedStartInterval makes in
// a second.
const orderedTriesPerSecond = 10

// Kubelet defaults (pkg/kubelet/kubelet.go, pkg/apis/core/v1/defaults.go).
const (
	defaultGrace      = 30
	minGrace          = 2 // the kubelet's minimumGracePeriodInSeconds
	kubeletBackoff    = 10 * time.Second
	kubeletMaxBackoff = 5 * time.Minute
	defaultBackoffLim = 6 // a Job's default backoffLimit
	annotDependsOn    = "podvisor.dev/depends-on"
	annotCommand      = "podvisor.dev/command."
	postStartSuffix   = ".post-start"
)

type translator struct {
	m     *Manifest
	w     *Workload
	opts  Options
	errs  Errors
	warns map[string][]string // message -> containers
	order []string
	// mount paths rewritten under --volume-root, longest first
	remapTargets []string
	plans        map[string]*VolumePlan
	refused      map[string]bool      // volumes declared but refused (reported)
	envFiles     []envFromFile        // fileKeyRefs of the container being built
	roots        map[string]*RootPlan // by container, for those with an image root
}

// errorf records an error about the workload as a whole: it points at
// the object's start.
func (t *translator) errorf(format string, args ...any) {
	t.addError(nil, fmt.Sprintf(format, args...))
}

// errorAt records an error about at: the message is at's text followed
// by the formatted rest, the position at's node.
func (t *translator) errorAt(at place, format string, args ...any) {
	t.addError(at.node(t.w.SpecNode), at.text+fmt.Sprintf(format, args...))
}

func (t *translator) addError(n *yaml.Node, msg string) {
	e := &Error{File: t.m.File, Msg: msg}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	} else if t.w.Line > 0 {
		e.Line, e.Col = t.w.Line, 1 // the object's start
	}
	t.errs = append(t.errs, e)
}

func (t *translator) warnf(format string, args ...any) {
	t.warnFor("", fmt.Sprintf(format, args...))
}

// warnFor records msg once, with the containers it concerns.
func (t *translator) warnFor(container, msg string) {
	if t.warns == nil {
		t.warns = map[string][]string{}
	}
	if _, seen := t.warns[msg]; !seen {
		t.order = append(t.order, msg)
	}
	if container != "" && !slices.Contains(t.warns[msg], container) {
		t.warns[msg] = append(t.warns[msg], container)
	}
}

func (t *translator) container(name string) *Container {
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for i := range list {
			if list[i].Name == name {
				return &list[i]
			}
		}
	}
	return nil
}

// Translate turns a workload into the procs.yaml that runs it locally.
func Translate(m *Manifest, w *Workload, opts Options) (*Result, error) {
	t := &translator{m: m, w: w, opts: opts}
	res := &Result{Procs: &config.Document{}}
	spec := &w.Spec
	if len(spec.Containers) == 0 {
		t.errorf("%s %q: no containers", w.Kind, w.Name)
		return nil, t.errs
	}
	t.checkNames()
	t.missingCommands()
	if len(t.errs) > 0 {
		return nil, t.errs
	}
	if len(w.ServerSet) > 0 {
		t.warnf("%s: set by the API server (a %s taken from a cluster), ignored; metadata.uid, if set, is the downward API's uid", strings.Join(w.ServerSet, ", "), w.Kind)
	}
	t.ignoredFields()
	for _, s := range m.Skipped {
		t.warnf("%s: not used by kube play (it concerns the cluster, not the pod)", s)
	}
	for _, f := range w.Ignored {
		t.warnf("%s.spec.%s: ignored (one pod runs, on this machine)", w.Kind, f)
	}

	grace := defaultGrace
	if spec.TerminationGracePeriodSeconds != nil {
		grace = int(*spec.TerminationGracePeriodSeconds)
	}
	grace = max(grace, minGrace)
	p := res.Procs
	p.ShutdownTimeout = secs(grace)
	mode := "the kubelet's order"
	if opts.Ordered {
		mode = "podvisor's order (--ordered)"
	}
	p.Header = []string{fmt.Sprintf("Generated by podvisor kube play from %s %q in %s, %s.", w.Kind, w.Name, m.File, mode)}

	t.planRoots(res)
	vols := t.volumes(res)
	t.plans = vols
	if opts.PlaceVolumes != nil && len(t.errs) == 0 {
		dir, err := opts.PlaceVolumes(res.Mounts)
		if err != nil {
			return nil, err
		}
		placeVolumes(vols, res.Mounts, dir)
		t.placeRoots(res, dir)
	} else {
		t.placeRoots(res, opts.VolumeDir)
	}

	policy := spec.RestartPolicy
	if policy == "" {
		policy = "Always"
	}
	if policy != "Always" && policy != "OnFailure" && policy != "Never" {
		t.errorf("%s %q: spec.restartPolicy %q: want Always, OnFailure or Never", w.Kind, w.Name, policy)
	}
	jobRun := w.Kind == "Job" || w.Kind == "CronJob" || policy != "Always"
	if (w.Kind == "Job" || w.Kind == "CronJob") && policy == "Always" {
		t.errorf("%s %q: a Job's pod needs restartPolicy OnFailure or Never", w.Kind, w.Name)
	}

	if os := spec.OS; os != nil && os.Name != "linux" {
		t.errorf("%s %q: spec.os.name %q: want linux (the pod runs on this machine, a Linux one)", w.Kind, w.Name, os.Name)
	}
	b := &builder{t: t, p: p, grace: grace, policy: policy, jobRun: jobRun, vols: vols}
	for i := range spec.InitContainers {
		b.initContainer(&spec.InitContainers[i], i)
	}
	for i := range spec.Containers {
		b.regular(&spec.Containers[i], i)
	}
	t.annotationEdges(b)
	if len(t.errs) > 0 {
		return nil, t.errs
	}
	for _, msg := range t.order {
		if cs := t.warns[msg]; len(cs) > 0 {
			msg = fmt.Sprintf("%s [%s]", msg, strings.Join(cs, ", "))
		}
		res.Warnings = append(res.Warnings, msg)
	}
	for _, w := range res.Warnings {
		p.Header = append(p.Header, "warning: "+w)
	}
	literal(p)
	return res, nil
}

func (t *translator) checkNames() {
	seen := map[string]bool{}
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			switch {
			case c.Name == "":
				t.errorf("%s %q: a container has no name", t.w.Kind, t.w.Name)
			case seen[c.Name]:
				t.errorf("%s %q: two containers named %q", t.w.Kind, t.w.Name, c.Name)
			case !dnsLabel(c.Name):
				t.errorf("%s %q: container name %q is not a DNS label (a-z, 0-9, -)", t.w.Kind, t.w.Name, c.Name)
			}
			seen[c.Name] = true
		}
	}
}

func dnsLabel(s string) bool {
	if len(s) == 0 || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for _, c := range []byte(s) {
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// missingCommands lists, in one error, every container that relies on its
// image's entrypoint without a local stand-in.
func (t *translator) missingCommands() {
	var missing []string
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			if len(c.Command) == 0 && t.imageCommand(&c) == "" && t.opts.Images[c.Image] == nil {
				missing = append(missing, fmt.Sprintf("%s (image %s)", c.Name, c.Image))
			}
		}
	}
	if len(missing) > 0 {
		t.errorf("containers without command rely on their image's entrypoint, and there are no images here: %s; "+
			"give each a local command with --image-command IMAGE=CMD, or the pod annotation %sNAME: CMD",
			strings.Join(missing, ", "), annotCommand)
	}
}

func (t *translator) imageCommand(c *Container) string {
	if s := t.w.Meta.Annotations[annotCommand+c.Name]; s != "" {
		return s
	}
	return t.opts.ImageCommands[c.Image]
}

// builder adds the processes in order and keeps the gates.
type builder struct {
	t        *translator
	p        *config.Document
	grace    int
	policy   string
	jobRun   bool
	vols     map[string]*VolumePlan
	gate     []config.Dependency // what the next init step (or the regular containers) wait for
	sidecars []string
	hooks    []string            // post-start hooks of the regular containers so far
	ordered  []config.Dependency // --ordered: every process so far, with its gate condition
}

func (b *builder) initContainer(c *Container, i int) {
	t := b.t
	where := specItem(fmt.Sprintf("initContainers[%d] (%s)", i, c.Name), "initContainers", i)
	sidecar := false
	switch c.RestartPolicy {
	case "", "OnFailure", "Never":
	case "Always":
		sidecar = true
	default:
		t.errorAt(where, ": restartPolicy %q: want Always (a native sidecar), OnFailure or Never", c.RestartPolicy)
	}
	b.checkRules(c, where)
	q := b.base(c, where)
	if sidecar {
		q.Notes().Note = "native sidecar (init container with restartPolicy: Always)"
		q.Sidecar = true
		b.service(q, c, where, "Always")
		q.Restart.DuringTermination = b.t.opts.RestartContainerDuringTermination
	} else {
		q.Notes().Note = "init container"
		q.Type = config.Oneshot
		// The pod's policy, Never, or else OnFailure (an init container is
		// retried under Always), unless the container sets its own.
		policy := "OnFailure"
		if b.policy == "Never" {
			policy = "Never"
		}
		if c.RestartPolicy != "" {
			policy = c.RestartPolicy
		}
		if policy == "Never" {
			setRestart(q, config.Restart{Policy: config.Never})
		} else {
			setRestart(q, b.restart(config.OnFailure, 0))
		}
		b.applyRules(q, c, policy)
		b.noProbes(c, where, "an init container")
		if c.Lifecycle != nil && (c.Lifecycle.PostStart != nil || c.Lifecycle.PreStop != nil) {
			t.errorAt(where, ": lifecycle hooks are not allowed on an init container")
		}
	}
	hook := b.add(q, c, where)
	if t.opts.Ordered {
		b.orderedDeps(q, hook)
		return
	}
	q.DependsOn = append(q.DependsOn, b.gate...)
	if sidecar {
		// Sidecars stop in reverse order: each depends on the ones before.
		for _, s := range b.sidecars {
			q.DependsOn = addDep(q.DependsOn, config.Dependency{Name: s, Condition: graph.Started})
		}
		b.sidecars = append(b.sidecars, q.Name)
		cond := graph.Started
		if c.StartupProbe != nil {
			cond = graph.Ready
		}
		b.gate = []config.Dependency{{Name: q.Name, Condition: cond}}
		if hook != "" {
			b.gate = append(b.gate, config.Dependency{Name: hook, Condition: graph.Completed})
		}
	} else {
		b.gate = []config.Dependency{{Name: q.Name, Condition: graph.Completed}}
	}
}

func (b *builder) regular(c *Container, i int) {
	t := b.t
	where := specItem(fmt.Sprintf("containers[%d] (%s)", i, c.Name), "containers", i)
	policy := b.policy
	switch c.RestartPolicy {
	case "":
	case "Always", "OnFailure", "Never":
		// KEP-5307 (1.35): the container's own policy overrides the pod's.
		policy = c.RestartPolicy
	default:
		t.errorAt(where, ": restartPolicy %q: want Always, OnFailure or Never", c.RestartPolicy)
	}
	b.checkRules(c, where)
	q := b.base(c, where)
	if b.jobRun && policy == "Always" {
		// Restarted whatever its exit: it never completes, so it cannot be
		// one of the run's jobs.
		t.warnFor(c.Name, "restartPolicy Always in a pod whose containers run to completion: a service here, restarted on every exit; the run ends when the other containers have completed, where the kubelet keeps the pod running")
		b.service(q, c, where, policy)
	} else if b.jobRun {
		q.Type = config.Job
		switch policy {
		case "OnFailure":
			limit := 0
			if b.t.w.Kind == "Job" || b.t.w.Kind == "CronJob" {
				limit = defaultBackoffLim
				if l := b.t.w.BackoffLimit; l != nil {
					limit = *l
				}
			}
			setRestart(q, b.restart(config.OnFailure, limit))
			if limit == 0 && (b.t.w.Kind == "Job" || b.t.w.Kind == "CronJob") {
				setRestart(q, config.Restart{Policy: config.Never})
			}
		default:
			setRestart(q, config.Restart{Policy: config.Never})
			if bl := b.t.w.BackoffLimit; bl != nil && *bl > 0 {
				t.warnf("spec.backoffLimit: a failed pod is not created again; the run ends with the failed container's exit code")
			}
		}
		b.jobProbes(q, c, where)
	} else {
		if policy != "Always" {
			t.warnFor(c.Name, fmt.Sprintf("restartPolicy %s in a pod with restartPolicy Always: once it exits for good, a failure (exit code not restarted) ends the run, where the kubelet keeps the pod running without it", policy))
		}
		b.service(q, c, where, policy)
	}
	b.applyRules(q, c, policy)
	hook := b.add(q, c, where)
	if t.opts.Ordered {
		b.orderedDeps(q, hook)
		return
	}
	q.DependsOn = append(q.DependsOn, b.gate...)
	for _, s := range b.sidecars {
		q.DependsOn = addDep(q.DependsOn, config.Dependency{Name: s, Condition: graph.Started})
	}
	for _, h := range b.hooks {
		q.DependsOn = addDep(q.DependsOn, config.Dependency{Name: h, Condition: graph.Completed})
	}
	if hook != "" {
		b.hooks = append(b.hooks, hook)
	}
}

// orderedDeps gates q on everything before it: services ready, oneshots
// completed, jobs started; stopping then runs in exact reverse order.
func (b *builder) orderedDeps(q *config.Process, hook string) {
	for _, d := range b.ordered {
		q.DependsOn = addDep(q.DependsOn, d)
	}
	cond := graph.Ready
	switch q.Type {
	case config.Oneshot:
		cond = graph.Completed
	case config.Job:
		cond = graph.Started
	}
	b.ordered = append(b.ordered, config.Dependency{Name: q.Name, Condition: cond})
	if hook != "" {
		b.ordered = append(b.ordered, config.Dependency{Name: hook, Condition: graph.Completed})
	}
}

// addDep adds d unless deps already has an edge to the same process.
func addDep(deps []config.Dependency, d config.Dependency) []config.Dependency {
	for i := range deps {
		if deps[i].Name == d.Name {
			return deps
		}
	}
	return append(deps, d)
}

// setDep adds d, replacing an edge to the same process.
func setDep(deps []config.Dependency, d config.Dependency) []config.Dependency {
	for i := range deps {
		if deps[i].Name == d.Name {
			deps[i] = d
			return deps
		}
	}
	return append(deps, d)
}

// add appends q, and its postStart hook as a process of its own; it
// returns the hook's name, or "".
func (b *builder) add(q *config.Process, c *Container, where place) string {
	b.p.Processes = append(b.p.Processes, q)
	if c.Lifecycle == nil || c.Lifecycle.PostStart == nil {
		return ""
	}
	argv := b.hook(c, c.Lifecycle.PostStart, where.in("lifecycle", "postStart"))
	if argv == nil {
		return ""
	}
	if len(c.Name+postStartSuffix) > 63 {
		b.t.errorAt(where, ": the container name is too long for its postStart hook's process name %q (podvisor names have at most 63 characters; shorten it to 52)", c.Name+postStartSuffix)
		return ""
	}
	h := &config.Process{
		Name:       c.Name + postStartSuffix,
		Command:    argv,
		Type:       config.Oneshot,
		Env:        q.Env,
		WorkingDir: q.WorkingDir,
		Root:       q.Root,
		User:       q.User,
		DependsOn:  []config.Dependency{{Name: c.Name, Condition: graph.Started}},
		Restart:    config.Restart{Policy: config.Never},
		// A hook still running at teardown is cut short: its container is stopping.
		Stop: config.Stop{Timeout: time.Second},
		Written: &config.Written{Note: fmt.Sprintf("postStart hook of %s: holds back the containers after it until it succeeds", c.Name),
			Restart: true, StopTimeout: true},
	}
	b.p.Processes = append(b.p.Processes, h)
	return h.Name
}

// base fills what every kind of container shares: command, env, user,
// working directory, stop.
func (b *builder) base(c *Container, where place) *config.Process {
	t := b.t
	q := &config.Process{Name: c.Name}
	q.Resources = b.resources(c, where)
	t.envFiles = nil
	env, secrets := t.env(c, where)
	q.SecretEnv = secrets
	lookup := func(k string) (string, bool) {
		for _, kv := range env {
			if kv.Key == k {
				return kv.Value, true
			}
		}
		return "", false
	}
	root := t.roots[c.Name]
	var argv []string
	if root != nil {
		argv = b.imageCommand(c, root, lookup, where)
	} else if len(c.Command) > 0 {
		for _, s := range c.Command {
			argv = append(argv, expand(s, lookup))
		}
	} else {
		// The image's entrypoint, stood in for by a shell command; args
		// reach it as "$@".
		argv = []string{"/bin/sh", "-c", withArgs(t.imageCommand(c)), c.Name}
	}
	if root == nil {
		for _, s := range c.Args {
			argv = append(argv, expand(s, lookup))
		}
	}
	q.Command = withEnvFiles(c.Name, b.remapAll(argv), t.envFiles)
	for _, kv := range env {
		q.Env = append(q.Env, kv.Key+"="+b.remap(kv.Value))
	}
	q.WorkingDir = b.remap(c.WorkingDir)
	if u := b.user(c, where); u != "" {
		q.User = &config.User{Spec: u}
	}
	if root != nil {
		b.fromImage(q, c, root, where)
	}

	// The kubelet gives every container its stop signal and at least
	// minimumGracePeriodInSeconds before SIGKILL, even past the grace.
	stop := config.Stop{Timeout: secs(b.grace), MinGrace: secs(minGrace)}
	q.Notes().StopTimeout = true
	if lc := c.Lifecycle; lc != nil {
		if lc.StopSignal != "" {
			if os := t.w.Spec.OS; os == nil || os.Name == "" {
				t.errorAt(where.in("lifecycle", "stopSignal"), ": needs spec.os.name (linux), as the API requires")
			}
			if !validSignal(lc.StopSignal) {
				t.errorAt(where.in("lifecycle", "stopSignal"), " %q: not a signal name podvisor can send (SIGKILL and SIGSTOP cannot be caught)", lc.StopSignal)
			}
			stop.Signal = unix.SignalNum(lc.StopSignal)
		}
		if lc.PreStop != nil {
			stop.Command = b.hook(c, lc.PreStop, where.in("lifecycle", "preStop"))
			// The kubelet starts every preStop when termination begins;
			// sidecars then wait for their turn.
			stop.CommandFirst = stop.Command != nil && !t.opts.Ordered
		}
	}
	q.Stop = stop
	return q
}

// withArgs appends "$@" to a shell command standing for an entrypoint,
// unless it already ends with the arguments ("$@", $@ or "${@}"): the
// container's args must reach it once.
func withArgs(cmd string) string {
	trimmed := strings.TrimRight(cmd, " \t\n;")
	for _, end := range []string{`"$@"`, `$@`, `"${@}"`, `${@}`} {
		if strings.HasSuffix(trimmed, end) {
			return cmd
		}
	}
	return cmd + ` "$@"`
}

func validSignal(s string) bool {
	switch strings.TrimPrefix(s, "SIG") {
	case "TERM", "INT", "QUIT", "HUP", "USR1", "USR2", "WINCH", "ABRT", "ALRM", "PWR", "STKFLT", "TRAP", "XCPU", "XFSZ", "VTALRM", "PROF", "IO", "URG", "SYS", "BUS", "SEGV", "ILL", "FPE", "PIPE", "CHLD", "CONT", "TSTP", "TTIN", "TTOU":
		return strings.HasPrefix(s, "SIG")
	}
	return false
}

// service sets the type, restart policy and probes of a long-running
// container (regular under restartPolicy Always, or a native sidecar).
func (b *builder) service(q *config.Process, c *Container, where place, policy string) {
	switch policy {
	case "Always":
		setRestart(q, b.restart(config.Always, 0))
	case "OnFailure":
		setRestart(q, b.restart(config.OnFailure, 0))
	default:
		setRestart(q, config.Restart{Policy: config.Never})
	}
	startup, readiness := c.StartupProbe, c.ReadinessProbe
	if !q.Sidecar && startup != nil {
		// A regular container: the startupProbe is its startup check, the
		// readinessProbe its readiness, as for a job.
		b.jobProbes(q, c, where)
		if b.t.opts.Ordered {
			// Both gate the next container: tried every
			// orderedStartInterval (see below), the startup check with as
			// many attempts as fit in its failureThreshold periods.
			d := defaults(*startup)
			q.Startup.StartInterval = orderedStartInterval
			q.Startup.FailureThreshold = d.FailureThreshold * d.PeriodSeconds * orderedTriesPerSecond
			if q.Ready != nil {
				q.Ready.StartInterval = orderedStartInterval
			}
		}
		if q.Live != nil {
			q.Live.SuccessThreshold = 0
			q.Live.StartInterval = 0
		}
		return
	}
	ready := readiness
	if startup != nil && (!b.t.opts.Ordered || readiness == nil) {
		ready = startup
		if readiness != nil {
			b.t.warnFor(c.Name, "readinessProbe: in the kubelet's order the startupProbe is the readiness check (it gates the next container); the readinessProbe is not run (use --ordered to gate on it instead)")
		}
	}
	if ready != nil {
		what := "readinessProbe"
		if ready == startup {
			what = "startupProbe"
		}
		q.Ready = b.probe(c, ready, where.in(what))
		// The kubelet goes on probing a regular container's readiness
		// while it terminates; a sidecar's, once termination has begun,
		// no more (pkg/kubelet/prober/worker.go, doProbe).
		q.Ready.WhileStopping = ready == readiness && !q.Sidecar
		if b.t.opts.Ordered {
			// The gate of the containers after it: tried at once, then every
			// orderedStartInterval until it first passes, then by the period.
			// The kubelet does not wait for readiness at all, so a gate that
			// waited a whole period after a first failure would make the
			// stricter order the slower one (an Istio-style proxy: 15s).
			q.Ready.StartInterval = orderedStartInterval
		}
	}
	if startup != nil {
		// The startupProbe's budget: failureThreshold periods after its
		// initial delay; missing it restarts the container, as the kubelet does.
		pr := defaults(*startup)
		q.StartTimeout = secs(pr.InitialDelaySeconds + pr.FailureThreshold*pr.PeriodSeconds + pr.TimeoutSeconds)
	}
	if c.LivenessProbe != nil {
		q.Live = b.probe(c, c.LivenessProbe, where.in("livenessProbe"))
		q.Live.SuccessThreshold = 0
		q.Live.StartInterval = 0
	}
}

// jobProbes sets the checks of a job's container (and of a regular
// container with a startupProbe in the kubelet's order) as the kubelet runs them
// (pkg/kubelet/prober/worker.go, doProbe): the startupProbe first (failing
// failureThreshold times kills the container), then readiness and liveness;
// readiness never kills and goes on while the container terminates.
func (b *builder) jobProbes(q *config.Process, c *Container, where place) {
	if pr := c.StartupProbe; pr != nil {
		q.Startup = b.probe(c, pr, where.in("startupProbe"))
		q.Startup.Interval = 0 // the check ends at its first pass
		// A backstop for attempts podvisor could not make (they count as
		// no failure): the probe's whole budget.
		d := defaults(*pr)
		q.StartTimeout = secs(d.InitialDelaySeconds + d.FailureThreshold*d.PeriodSeconds + d.TimeoutSeconds)
	}
	if c.ReadinessProbe != nil {
		q.Ready = b.probe(c, c.ReadinessProbe, where.in("readinessProbe"))
		q.Ready.WhileStopping = true
		if q.Startup == nil {
			// Without a startupProbe the kubelet counts the container
			// started at once; a job's ready check is readiness only
			// next to a startup check, so it gets one that passes at once.
			q.Startup = &config.Probe{Kind: config.ProbeExec, Command: []string{"true"}}
			q.Comment("startup", "no startupProbe (started at once), so ready is the readinessProbe")
		}
	}
	if c.LivenessProbe != nil {
		q.Live = b.probe(c, c.LivenessProbe, where.in("livenessProbe"))
	}
}

func (b *builder) noProbes(c *Container, where place, what string) {
	for name, pr := range map[string]*Probe{"readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
		if pr != nil {
			b.t.warnFor(c.Name, fmt.Sprintf("%s: not used on %s, which gates on its exit", name, what))
		}
	}
	if strings.HasPrefix(where.text, "init") && c.LivenessProbe != nil {
		b.t.errorAt(where, ": livenessProbe is not allowed on an init container")
	}
}

// setRestart sets q's restart block, written as given.
func setRestart(q *config.Process, r config.Restart) {
	q.Restart = r
	q.Notes().Restart = true
}

func (b *builder) restart(policy config.Policy, limit int) config.Restart {
	r := config.Restart{Policy: policy, Limit: limit}
	if !b.t.opts.Ordered {
		r.Backoff, r.MaxBackoff = kubeletBackoff, kubeletMaxBackoff
	}
	return r
}

func (b *builder) user(c *Container, where place) string {
	var uid, gid *int64
	if sc := b.t.w.Spec.SecurityContext; sc != nil {
		uid, gid = sc.RunAsUser, sc.RunAsGroup
	}
	if sc := c.SecurityContext; sc != nil {
		if sc.RunAsUser != nil {
			uid = sc.RunAsUser
		}
		if sc.RunAsGroup != nil {
			gid = sc.RunAsGroup
		}
	}
	if uid == nil && gid == nil {
		return ""
	}
	if !b.t.opts.Root {
		b.t.warnFor(c.Name, "securityContext.runAsUser/runAsGroup: ignored, podvisor does not run as root (the processes run as you)")
		return ""
	}
	u := int64(0)
	if uid != nil {
		u = *uid
	}
	s := strconv.FormatInt(u, 10)
	if gid != nil {
		s += ":" + strconv.FormatInt(*gid, 10)
	}
	return s
}

// defaults fills a probe's unset timing fields with the API's defaults.
func defaults(p Probe) Probe {
	if p.PeriodSeconds <= 0 {
		p.PeriodSeconds = 10
	}
	if p.TimeoutSeconds <= 0 {
		p.TimeoutSeconds = 1
	}
	if p.SuccessThreshold <= 0 {
		p.SuccessThreshold = 1
	}
	if p.FailureThreshold <= 0 {
		p.FailureThreshold = 3
	}
	return p
}

// probe converts a probe; integer seconds keep their meaning (the first
// check after initialDelaySeconds, then one every periodSeconds).
func (b *builder) probe(c *Container, in *Probe, where place) *config.Probe {
	p := defaults(*in)
	if g := p.TerminationGracePeriodSeconds; g != nil {
		switch {
		case strings.HasSuffix(where.text, ".readinessProbe"):
			b.t.errorAt(where.in("terminationGracePeriodSeconds"), ": must not be set on a readinessProbe, as the API requires")
		case *g <= 0:
			b.t.errorAt(where.in("terminationGracePeriodSeconds"), " %d: must be greater than 0, as the API requires", *g)
		}
	}
	ch := &config.Probe{
		StartInterval:    secs(p.PeriodSeconds),
		Interval:         secs(p.PeriodSeconds),
		Timeout:          secs(p.TimeoutSeconds),
		SuccessThreshold: p.SuccessThreshold,
		FailureThreshold: p.FailureThreshold,
	}
	if p.InitialDelaySeconds > 0 {
		ch.InitialDelay = secs(p.InitialDelaySeconds)
	}
	if g := p.TerminationGracePeriodSeconds; g != nil && *g > 0 && !strings.HasSuffix(where.text, ".readinessProbe") {
		// The stop after this probe fails has the probe's own grace.
		ch.StopTimeout = secs(int(*g))
	}
	var handlers []string
	for name, set := range map[string]bool{"exec": p.Exec != nil, "httpGet": p.HTTPGet != nil, "tcpSocket": p.TCPSocket != nil, "grpc": p.GRPC != nil} {
		if set {
			handlers = append(handlers, name)
		}
	}
	if len(handlers) > 1 {
		sort.Strings(handlers)
		b.t.errorAt(where, ": more than one handler (%s): the API allows exactly one", strings.Join(handlers, ", "))
	}
	switch {
	case p.Exec != nil:
		ch.Kind, ch.Command = config.ProbeExec, b.remapAll(p.Exec.Command)
		if len(ch.Command) == 0 {
			b.t.errorAt(where.in("exec"), ": empty command")
		}
	case p.HTTPGet != nil:
		ch.Kind, ch.Target = config.ProbeHTTP, b.httpURL(c, p.HTTPGet, where.in("httpGet"))
		ch.H2C = b.h2c(p.HTTPGet, where.in("httpGet"))
	case p.TCPSocket != nil:
		port := b.port(c, p.TCPSocket.Port, where.in("tcpSocket", "port"))
		ch.Kind, ch.Target = config.ProbeTCP, net.JoinHostPort(host(p.TCPSocket.Host), strconv.Itoa(port))
	case p.GRPC != nil:
		b.grpc(ch, p.GRPC, where.in("grpc"))
	default:
		b.t.errorAt(where, ": no handler (want exec, httpGet, tcpSocket or grpc)")
	}
	if handled := p.Exec != nil || p.HTTPGet != nil || p.TCPSocket != nil || p.GRPC != nil; !handled || ch.Kind == config.ProbeExec && ch.Command == nil {
		ch.Kind, ch.Command = config.ProbeExec, []string{"true"} // an error was reported; keep the model well-formed
	}
	return ch
}

func host(h string) string {
	if h == "" {
		return "127.0.0.1" // the pod's IP is this machine
	}
	return h
}

func (b *builder) httpURL(c *Container, g *HTTPGetAction, where place) string {
	scheme := "http"
	switch g.Scheme {
	case "", "HTTP":
	case "HTTPS":
		scheme = "https" // the certificate is not checked, as the kubelet does not
	default:
		b.t.errorAt(where.in("scheme"), " %q: want HTTP or HTTPS", g.Scheme)
	}
	if len(g.HTTPHeaders) > 0 {
		b.t.warnFor(c.Name, "httpGet.httpHeaders: not sent (podvisor's http checks send no custom headers)")
	}
	port := b.port(c, g.Port, where.in("port"))
	path := g.Path
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	return scheme + "://" + net.JoinHostPort(host(g.Host), strconv.Itoa(port)) + path
}

// port resolves a port number or a name from the container's ports.
func (b *builder) port(c *Container, p IntOrString, where place) int {
	if !p.IsName {
		if p.Int < 1 || p.Int > 65535 {
			b.t.errorAt(where, ": port %d out of range", p.Int)
		}
		return p.Int
	}
	if n, err := strconv.Atoi(p.Str); err == nil {
		return n
	}
	for _, cp := range c.Ports {
		if cp.Name == p.Str {
			return cp.ContainerPort
		}
	}
	b.t.errorAt(where, ": no port named %q in the container's ports", p.Str)
	return 0
}

// hook turns a lifecycle handler into a command line.
func (b *builder) hook(c *Container, h *LifecycleHandler, where place) []string {
	switch {
	case h.Exec != nil:
		if len(h.Exec.Command) == 0 {
			b.t.errorAt(where.in("exec"), ": empty command")
			return nil
		}
		return b.remapAll(h.Exec.Command)
	case h.HTTPGet != nil:
		u := b.httpURL(c, h.HTTPGet, where.in("httpGet"))
		if h.HTTPGet.Protocol != "" && h.HTTPGet.Protocol != "HTTP1" {
			b.t.warnFor(c.Name, "lifecycle httpGet.protocol: ignored (the hook speaks HTTP/1.1; the protocol field is for probes)")
		}
		// One GET, as the kubelet makes, whatever its answer. Inside an
		// image's root, podvisor is reached as /proc/self/exe (the root's
		// own /proc): the hook runs there as the container's commands do.
		self := b.t.opts.Self
		if b.t.roots[c.Name] != nil {
			self = "/proc/self/exe"
		}
		return []string{self, "wait", "--http", u, "--timeout", "10s", "--once"}
	case h.Sleep != nil:
		if s := h.Sleep.Seconds; s < 0 || s > b.grace {
			b.t.errorAt(where.in("sleep", "seconds"), " %d: must be non-negative and at most terminationGracePeriodSeconds (%d), as the API requires", s, b.grace)
			return nil
		}
		return []string{"sleep", strconv.Itoa(h.Sleep.Seconds)}
	case h.TCPSocket != nil:
		// The kubelet has no runner for it: the hook fails. A failed
		// postStart kills the container; a failed preStop is only an event.
		if strings.HasSuffix(where.text, ".postStart") {
			b.t.warnFor(c.Name, "lifecycle.postStart.tcpSocket: fails, as in the kubelet (which has no runner for it), so the container is killed")
			return []string{"/bin/sh", "-c", "echo 'lifecycle hook tcpSocket: not supported by the kubelet, the hook fails' >&2; exit 1"}
		}
		b.t.warnFor(c.Name, "lifecycle.preStop.tcpSocket: fails at once, as in the kubelet (which has no runner for it); the stop goes on")
		return nil
	}
	b.t.errorAt(where, ": no handler (want exec, httpGet or sleep)")
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// annotationEdges applies podvisor.dev/depends-on, for example
// "app=proxy:ready,db:ready; worker=db" (condition defaults to ready).
func (t *translator) annotationEdges(b *builder) {
	s, ok := t.w.Meta.Annotations[annotDependsOn]
	if !ok {
		return
	}
	edges, err := parseDependsOn(s)
	if err != nil {
		t.errorf("annotation %s: %v", annotDependsOn, err)
		return
	}
	regular := map[string]bool{}
	for _, c := range t.w.Spec.Containers {
		regular[c.Name] = true
	}
	for _, name := range sortedKeys(edges) {
		q := b.p.Process(name)
		if q == nil || strings.HasSuffix(name, postStartSuffix) {
			t.errorf("annotation %s: no container named %q", annotDependsOn, name)
			continue
		}
		if t.opts.Ordered && regular[name] {
			// The annotation replaces the implicit chain among regular containers.
			q.DependsOn = slices.DeleteFunc(q.DependsOn, func(d config.Dependency) bool {
				return regular[strings.TrimSuffix(d.Name, postStartSuffix)]
			})
		}
		for _, d := range edges[name] {
			if b.p.Process(d.Name) == nil || d.Name == name {
				t.errorf("annotation %s: %s depends on %q, which is not another container of the pod", annotDependsOn, name, d.Name)
				continue
			}
			q.DependsOn = setDep(q.DependsOn, d)
		}
	}
}

// conditions are the conditions the annotation may name.
var conditions = map[string]graph.Condition{"started": graph.Started, "ready": graph.Ready, "completed": graph.Completed}

func parseDependsOn(s string) (map[string][]config.Dependency, error) {
	out := map[string][]config.Dependency{}
	cur := ""
	for _, item := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' || r == '\n' }) {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if name, rest, ok := strings.Cut(item, "="); ok {
			cur, item = strings.TrimSpace(name), strings.TrimSpace(rest)
		}
		if cur == "" {
			return nil, fmt.Errorf("%q: start with CONTAINER=DEPENDENCY[:CONDITION]", item)
		}
		dep, cond, hasCond := strings.Cut(item, ":")
		if !hasCond {
			cond = "ready"
		}
		c, ok := conditions[cond]
		if !ok {
			return nil, fmt.Errorf("%q: condition %q: want started, ready or completed", item, cond)
		}
		out[cur] = append(out[cur], config.Dependency{Name: strings.TrimSpace(dep), Condition: c})
	}
	return out, nil
}

// ignoredFields warns about every field set that podvisor cannot honour.
func (t *translator) ignoredFields() {
	t.walkIgnored(reflect.ValueOf(t.w.Spec), "spec", "")
	for _, list := range [][]Container{t.w.Spec.InitContainers, t.w.Spec.Containers} {
		for _, c := range list {
			if c.Image != "" && t.opts.Images[c.Image] == nil {
				t.warnFor(c.Name, "image: not pulled; the command runs on this machine")
			}
			for _, p := range c.Ports {
				if p.HostPort.Kind != 0 || p.HostIP.Kind != 0 {
					t.warnFor(c.Name, "ports.hostPort, hostIP: ignored, the ports are this machine's already")
				}
			}
			for _, vm := range c.VolumeMounts {
				if vm.MountPropagation.Kind != 0 {
					t.warnFor(c.Name, "volumeMounts.mountPropagation: ignored (volumes are private bind mounts)")
				}
			}
			t.walkIgnored(reflect.ValueOf(c), "containers", c.Name)
		}
	}
}

// Why some ignored fields are ignored; the default reason covers the rest.
var ignoredWhy = map[string]string{
	"nodeSelector":                 "scheduling has no meaning on one machine",
	"affinity":                     "scheduling has no meaning on one machine",
	"tolerations":                  "scheduling has no meaning on one machine",
	"topologySpreadConstraints":    "scheduling has no meaning on one machine",
	"imagePullSecrets":             "there are no images to pull",
	"imagePullPolicy":              "there are no images to pull",
	"hostNetwork":                  "the processes share this machine's network already",
	"resources":                    "the pod's enclosing limit falls on podvisor's own cgroup, which whoever runs podvisor sets (the kubelet in a pod, docker run --memory/--cpus); each container's resources are enforced",
	"hostPID":                      "the processes share this machine's PID space already",
	"hostIPC":                      "the processes share this machine's IPC already",
	"shareProcessNamespace":        "the processes share this machine's PID space already",
	"dnsPolicy":                    "DNS and names are this machine's",
	"dnsConfig":                    "DNS and names are this machine's",
	"hostAliases":                  "DNS and names are this machine's",
	"schedulerName":                "scheduling has no meaning on one machine",
	"priorityClassName":            "scheduling has no meaning on one machine",
	"priority":                     "scheduling has no meaning on one machine",
	"preemptionPolicy":             "scheduling has no meaning on one machine",
	"runtimeClassName":             "scheduling has no meaning on one machine",
	"schedulingGates":              "scheduling has no meaning on one machine",
	"readinessGates":               "not enforced",
	"ephemeralContainers":          "not enforced",
	"serviceAccount":               "the deprecated alias of serviceAccountName",
	"automountServiceAccountToken": "kube play mounts no token of its own; a kube-api-access-* volume in the manifest becomes local files",
	"terminationMessagePath":       "no termination message is collected",
	"terminationMessagePolicy":     "no termination message is collected",
	"activeDeadlineSeconds":        "not enforced",
}

// honoured are the yaml.Node fields Translate does read.
var honoured = map[string]bool{"subPathExpr": true}

func (t *translator) walkIgnored(v reflect.Value, path, container string) {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return
	}
	ty := v.Type()
	for i := 0; i < ty.NumField(); i++ {
		f, fv := ty.Field(i), v.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		switch {
		case f.Type == nodeType:
			if fv.Interface().(yaml.Node).Kind == 0 || honoured[name] {
				continue
			}
			why := ignoredWhy[name]
			if why == "" {
				why = "no local equivalent"
			}
			t.warnFor(container, fmt.Sprintf("%s.%s: ignored (%s)", path, name, why))
		case name == "initContainers" || name == "containers" || name == "volumes":
			// walked per container by the caller; volumes by volumes()
		case f.Type.Kind() == reflect.Pointer && f.Type.Elem().Kind() == reflect.Struct:
			t.walkIgnored(fv, path+"."+name, container)
		case f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(ObjectMeta{}):
			t.walkIgnored(fv, path+"."+name, container)
		}
	}
}

// checkRules checks a container's restartPolicyRules as the API server
// does (KEP-5307): at most 20, each with action Restart and exitCodes with
// operator In or NotIn and at most 255 distinct values; the container must
// set restartPolicy itself.
func (b *builder) checkRules(c *Container, where place) {
	if len(c.RestartPolicyRules) == 0 {
		return
	}
	t := b.t
	if c.RestartPolicy == "" {
		t.errorAt(where, ": restartPolicyRules need the container's own restartPolicy, as the API requires (even when it is the pod's)")
	}
	if len(c.RestartPolicyRules) > 20 {
		t.errorAt(where, ": %d restartPolicyRules: the API allows at most 20", len(c.RestartPolicyRules))
	}
	for i, r := range c.RestartPolicyRules {
		at := where.item("restartPolicyRules", i, "")
		switch r.Action {
		case "Restart":
		case "RestartAllContainers": // KEP-5532: restart.rules action restart-all
		default:
			t.errorAt(at, ": action %q: want Restart or RestartAllContainers", r.Action)
		}
		if r.ExitCodes == nil {
			t.errorAt(at, ": exitCodes is required")
			continue
		}
		if op := r.ExitCodes.Operator; op != "In" && op != "NotIn" {
			t.errorAt(at.in("exitCodes", "operator"), " %q: want In or NotIn", op)
		}
		if len(r.ExitCodes.Values) > 255 {
			t.errorAt(at.in("exitCodes", "values"), ": %d values, the API allows at most 255", len(r.ExitCodes.Values))
		}
		seen := map[int32]bool{}
		for _, v := range r.ExitCodes.Values {
			if seen[v] {
				t.errorAt(at.in("exitCodes", "values"), ": %d twice (the values are a set)", v)
			}
			seen[v] = true
		}
	}
}

// noRestart returns the exit codes 0-255 after which the kubelet does not
// restart the container: the first rule that matches decides (its action
// is Restart), else the container's policy.
func noRestart(policy string, rules []RestartRule) []int {
	var out []int
	for code := 0; code <= 255; code++ {
		restart := policy == "Always" || policy == "OnFailure" && code != 0
		for _, r := range rules {
			if r.ExitCodes == nil {
				continue
			}
			in := slices.Contains(r.ExitCodes.Values, int32(code))
			if in == (r.ExitCodes.Operator == "In") {
				restart = true
				break
			}
		}
		if !restart {
			out = append(out, code)
		}
	}
	return out
}

// applyRules expresses restartPolicyRules exactly: a policy whose restarts
// the kubelet makes too (the one that needs the shortest rule), and a
// restart rule for the exit codes after which the kubelet restarts the
// container though that policy would not. Every other code ends it as the
// policy says, a failure included, so the run's outcome is the kubelet's
// pod phase.
func (b *builder) applyRules(q *config.Process, c *Container, policy string) {
	defer b.restartAllRule(q, c)
	if len(c.RestartPolicyRules) == 0 || c.RestartPolicy == "Always" && q.Type == config.Service {
		return // nothing to add to a restart on every exit
	}
	no, all := noRestart(policy, c.RestartPolicyRules), restartAllCodes(c)
	bases := []config.Policy{config.Never, config.OnFailure}
	if q.Type == config.Service {
		bases = append(bases, config.Always)
	}
	base, extra := config.Never, []int(nil)
	for i, p := range bases {
		var ex []int // the kubelet restarts after these, p does not
		fits := true
		for code := 0; code <= 255; code++ {
			restarts := p == config.Always || p == config.OnFailure && code != 0
			kube := !slices.Contains(no, code)
			fits = fits && (!restarts || kube)
			if kube && !restarts && !slices.Contains(all, code) {
				ex = append(ex, code)
			}
		}
		if fits && (i == 0 || len(ex) < len(extra)) {
			base, extra = p, ex
		}
	}
	r := config.Restart{Policy: base}
	if base != config.Never || len(extra) > 0 || len(all) > 0 {
		r = q.Restart
		r.Policy = base
		if r.Backoff == 0 && !b.t.opts.Ordered {
			r.Backoff, r.MaxBackoff = kubeletBackoff, kubeletMaxBackoff
		}
	}
	r.Rules = nil
	if len(extra) > 0 {
		r.Rules = []config.ExitRule{codeRule(extra, config.RuleRestart)}
	}
	q.Restart = r
	q.Notes().Restart = true
}

// codeRule is a rule for action on the exit codes codes (sorted, within
// 0-255): in: codes, or not_in: the others where that list is shorter.
func codeRule(codes []int, action config.RuleAction) config.ExitRule {
	if len(codes) <= 128 {
		return config.ExitRule{In: codes, Action: action}
	}
	var rest []int
	for code := 0; code <= 255; code++ {
		if !slices.Contains(codes, code) {
			rest = append(rest, code)
		}
	}
	return config.ExitRule{NotIn: rest, Action: action}
}

// restartAllRule adds, first in restart.rules, a restart-all rule for the
// exit codes whose first matching rule is RestartAllContainers (KEP-5532):
// podvisor's restart-all replays the start-up of every process as the
// kubelet restarts every container.
func (b *builder) restartAllRule(q *config.Process, c *Container) {
	all := restartAllCodes(c)
	if len(all) == 0 || q.Written == nil || !q.Written.Restart {
		return
	}
	q.Restart.Rules = append([]config.ExitRule{codeRule(all, config.RuleRestartAll)}, q.Restart.Rules...)
}

// restartAllCodes are the exit codes whose first matching rule is
// RestartAllContainers.
func restartAllCodes(c *Container) []int {
	var all []int
	for code := 0; code <= 255; code++ {
		for _, r := range c.RestartPolicyRules {
			if r.ExitCodes == nil || slices.Contains(r.ExitCodes.Values, int32(code)) != (r.ExitCodes.Operator == "In") {
				continue
			}
			if r.Action == "RestartAllContainers" {
				all = append(all, code)
			}
			break // the first match decides
		}
	}
	return all
}
