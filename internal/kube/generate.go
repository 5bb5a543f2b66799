package kube

import (
	"bytes"
	"fmt"
	"math"
	"net"
	"net/url"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/podvisor/podvisor/internal/config"
)

// GenerateOptions steer Generate.
type GenerateOptions struct {
	Shape string // fat (default) or sidecars
	Kind  string // Pod (default), Deployment or Job
	Image string
	Name  string // object name; default from the config file's directory
	Raw   []byte // the procs.yaml as written, for the fat shape's ConfigMap
	// Profiles are passed on to the fat shape's podvisor run (--profile);
	// the sidecars shape gets a config of the selected processes only.
	Profiles []string
}

// Generated is a manifest and what it could not express.
type Generated struct {
	Manifest []byte
	Warnings []string
}

// graceMargin is added to shutdown_timeout: podvisor's final sweep and log
// drain, and the kubelet's own latency, must end before its SIGKILL.
const graceMargin = 5

// Generate writes a manifest for cfg.
func Generate(cfg *config.Config, opts GenerateOptions) (*Generated, error) {
	if opts.Image == "" {
		opts.Image = "registry.example/" + opts.Name + ":latest"
	}
	if opts.Name == "" || !dnsLabel(opts.Name) {
		return nil, fmt.Errorf("name %q is not a DNS label (a-z, 0-9, -): pass --name", opts.Name)
	}
	switch opts.Kind {
	case "":
		opts.Kind = "Pod"
	case "Pod", "Deployment", "Job":
	default:
		return nil, fmt.Errorf("--kind %q: want Pod, Deployment or Job", opts.Kind)
	}
	switch opts.Shape {
	case "", "fat":
		return generateFat(cfg, opts)
	case "sidecars":
		return generateSidecars(cfg, opts)
	}
	return nil, fmt.Errorf("--shape %q: want fat or sidecars", opts.Shape)
}

// yaml11NonString reports whether a YAML 1.1 reader (Kubernetes reads
// manifests with go-yaml v2, through sigs.k8s.io/yaml) would take the plain
// scalar s for something other than a string: a boolean (y, n, yes, no, on,
// off, true, false, in any of their spellings), a null (~, null), a number
// (decimal, octal 017, hex 0x1F, binary 0b1, base 60 1:20, .inf, .nan, with
// _ separators), a timestamp, or the merge and value keys << and =.
// go.yaml.in/yaml/v3 writes YAML 1.2 and quotes only some of these. Saying
// yes too often costs two quotes, too rarely a manifest the API refuses.
func yaml11NonString(s string) bool {
	switch strings.ToLower(s) {
	case "", "y", "n", "yes", "no", "on", "off", "true", "false", "~", "null", "<<", "=",
		".inf", "+.inf", "-.inf", ".nan":
		return true
	}
	// Numbers, base 60 numbers and timestamps all start with a sign, a dot or
	// a digit and hold nothing but these characters.
	if c := s[0]; c != '+' && c != '-' && c != '.' && (c < '0' || c > '9') {
		return false
	}
	for _, c := range s {
		if !strings.ContainsRune("0123456789abcdefABCDEFxXoO_+-.:eEtTzZ ", c) {
			return false
		}
	}
	return strings.ContainsAny(s, "0123456789")
}

// node builds YAML in the order given: om("k", v, "k2", v2...).
func om(kv ...any) *yaml.Node {
	n := mapping()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == nil {
			continue
		}
		add(n, kv[i].(string), val(kv[i+1]))
	}
	return n
}

func val(v any) *yaml.Node {
	switch x := v.(type) {
	case *yaml.Node:
		return x
	case string:
		n := scalar(x)
		switch {
		case strings.Contains(x, "\n"):
			n.Style = yaml.LiteralStyle
		case yaml11NonString(x):
			n.Style = yaml.DoubleQuotedStyle
		}
		return n
	case int:
		return integer(x)
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x)}
	case []string:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, s := range x {
			n.Content = append(n.Content, val(s))
		}
		return n
	case []*yaml.Node:
		return &yaml.Node{Kind: yaml.SequenceNode, Content: x}
	}
	panic(fmt.Sprintf("val: %T", v))
}

func encodeDocs(docs ...*yaml.Node) []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	for _, d := range docs {
		_ = enc.Encode(d)
	}
	_ = enc.Close()
	return b.Bytes()
}

// wrap puts a pod spec into the requested kind.
func wrap(opts GenerateOptions, podSpec *yaml.Node, comment string) *yaml.Node {
	labels := om("app.kubernetes.io/name", opts.Name)
	var doc *yaml.Node
	switch opts.Kind {
	case "Pod":
		doc = om("apiVersion", "v1", "kind", "Pod", "metadata", om("name", opts.Name, "labels", labels), "spec", podSpec)
	case "Deployment":
		doc = om("apiVersion", "apps/v1", "kind", "Deployment", "metadata", om("name", opts.Name, "labels", labels),
			"spec", om("replicas", 1, "selector", om("matchLabels", om("app.kubernetes.io/name", opts.Name)),
				"template", om("metadata", om("labels", om("app.kubernetes.io/name", opts.Name)), "spec", podSpec)))
	case "Job":
		doc = om("apiVersion", "batch/v1", "kind", "Job", "metadata", om("name", opts.Name, "labels", labels),
			"spec", om("backoffLimit", 0, "template", om("metadata", om("labels", om("app.kubernetes.io/name", opts.Name)), "spec", podSpec)))
	}
	doc.HeadComment = comment
	return doc
}

// listenPort returns the port of podvisor's listen address, or 0.
func listenPort(listen string) (int, bool) {
	if listen == "off" {
		return 0, false
	}
	host, p, err := net.SplitHostPort(listen)
	if err != nil {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil {
		return 0, false
	}
	return n, host == "" || host == "0.0.0.0" || host == "::"
}

func graceSeconds(d float64) int {
	return int(math.Ceil(d)) + graceMargin
}

func generateFat(cfg *config.Config, opts GenerateOptions) (*Generated, error) {
	g := &Generated{}
	cmName := opts.Name + "-procs"
	procs := string(opts.Raw)
	if !strings.HasSuffix(procs, "\n") {
		procs += "\n"
	}
	cm := om("apiVersion", "v1", "kind", "ConfigMap", "metadata", om("name", cmName),
		"data", om("procs.yaml", procs))
	cm.HeadComment = "procs.yaml, mounted at /etc/podvisor"

	command := []string{"podvisor", "run", "-c", "/etc/podvisor/procs.yaml"}
	for _, p := range opts.Profiles {
		command = append(command, "--profile", p)
	}
	c := om("name", opts.Name, "image", opts.Image, "command", command)
	port, reachable := listenPort(cfg.Listen)
	if port > 0 {
		add(c, "ports", val([]*yaml.Node{om("name", "podvisor", "containerPort", port)}))
		if !reachable {
			g.Warnings = append(g.Warnings, fmt.Sprintf("listen %q is not reachable by the kubelet's probes: use \":%d\"", cfg.Listen, port))
		}
		add(c, "readinessProbe", om("httpGet", om("path", "/readyz", "port", "podvisor"), "periodSeconds", 2, "failureThreshold", 1))
		add(c, "livenessProbe", om("httpGet", om("path", "/livez", "port", "podvisor"), "periodSeconds", 10, "failureThreshold", 3))
	} else {
		g.Warnings = append(g.Warnings, "listen is off: no readinessProbe or livenessProbe (set listen: \":9464\")")
	}
	add(c, "securityContext", securityContext(cfg))
	add(c, "volumeMounts", val([]*yaml.Node{om("name", "procs", "mountPath", "/etc/podvisor", "readOnly", true)}))
	var relative []string
	for _, name := range cfg.Names {
		if p := cfg.Processes[name]; p.WorkingDir == cfg.Dir || strings.HasPrefix(p.WorkingDir, cfg.Dir+"/") {
			relative = append(relative, name)
		}
	}
	if len(relative) > 0 {
		g.Warnings = append(g.Warnings, fmt.Sprintf("%s: working_dir (default: the config's directory) and env_file paths "+
			"resolve against /etc/podvisor in the pod; give absolute paths inside the image", strings.Join(relative, ", ")))
	}
	restart := "Always"
	if opts.Kind == "Job" {
		restart = "Never" // podvisor restarts the processes itself; its exit code is the Job's
	}
	spec := om("terminationGracePeriodSeconds", graceSeconds(cfg.ShutdownTimeout.Seconds()), "restartPolicy", restart,
		"containers", []*yaml.Node{c},
		"volumes", []*yaml.Node{om("name", "procs", "configMap", om("name", cmName))})
	comment := fmt.Sprintf("Generated by podvisor kube generate (fat): podvisor is the entrypoint; terminationGracePeriodSeconds is\nshutdown_timeout (%s) plus %ds for podvisor's final sweep and the kubelet.", cfg.ShutdownTimeout, graceMargin)
	g.Manifest = encodeDocs(cm, wrap(opts, spec, comment))
	return g, nil
}

// securityContext: no privilege beyond what podvisor needs. As root only when
// a process has a user: to switch to (SETUID/SETGID, and KILL to signal it).
func securityContext(cfg *config.Config) *yaml.Node {
	needRoot := false
	for _, p := range cfg.Processes {
		if p.User != nil {
			needRoot = true
		}
	}
	sc := om("allowPrivilegeEscalation", false)
	if needRoot {
		add(sc, "runAsUser", val(0))
		add(sc, "capabilities", om("drop", []string{"ALL"}, "add", []string{"SETUID", "SETGID", "KILL"}))
	} else {
		add(sc, "runAsNonRoot", val(true))
		add(sc, "runAsUser", val(65532))
		add(sc, "capabilities", om("drop", []string{"ALL"}))
	}
	add(sc, "seccompProfile", om("type", "RuntimeDefault"))
	return sc
}

// generateSidecars writes one container per process: oneshots become init
// containers, services something depends on become native sidecars (gated
// by a startupProbe from their ready check), the rest regular containers.
func generateSidecars(cfg *config.Config, opts GenerateOptions) (*Generated, error) {
	g := &Generated{}
	warn := func(format string, a ...any) { g.Warnings = append(g.Warnings, fmt.Sprintf(format, a...)) }
	hasJob := false
	for _, p := range cfg.Processes {
		if p.Type == config.Job {
			hasJob = true
		}
	}
	if hasJob && opts.Kind != "Job" {
		warn("the config has jobs: writing a Job (pass --kind Job to say so)")
		opts.Kind = "Job"
	}
	var order []string
	for _, level := range cfg.Graph.Levels() {
		order = append(order, level...)
	}
	var inits, regular []*yaml.Node
	grace := 0.0
	stopSignal := false
	restarts := map[string]bool{}
	for _, name := range order {
		p := cfg.Processes[name]
		dependents := cfg.Graph.Dependents(name)
		c := om("name", containerName(name), "image", opts.Image, "command", p.Command)
		if p.WorkingDir != "" && p.WorkingDir != cfg.Dir {
			add(c, "workingDir", val(p.WorkingDir))
		}
		if env := containerEnv(p.Env); len(env) > 0 {
			add(c, "env", val(env))
		}
		grace = max(grace, p.Stop.Timeout.Seconds())
		sidecar := p.Type == config.Service && len(dependents) > 0
		for _, d := range p.DependsOn {
			if d.Restart {
				warn("%s: depends_on %s with restart: true cannot be expressed (the kubelet restarts containers independently)", name, d.Name)
			}
		}
		switch {
		case p.Type == config.Oneshot || (p.Type == config.Job && len(dependents) > 0):
			if p.Type == config.Job {
				warn("%s: a job others depend on becomes an init container", name)
			}
			inits = append(inits, c)
		case sidecar:
			add(c, "restartPolicy", val("Always"))
			if p.Startup != nil {
				warn("%s: its startup check is not written: a sidecar's startupProbe is its ready check, which its dependents wait for", name)
			}
			if p.Ready != nil {
				if pr := probeNode(p.Ready, true); pr != nil {
					add(c, "startupProbe", pr)
				} else {
					warn("%s: ready check %s has no Kubernetes probe: dependents start once it has started", name, p.Ready.Kind)
				}
			}
			inits = append(inits, c)
		default:
			switch {
			case p.Type == config.Job || p.Startup != nil:
				jobProbes(c, p, name, warn)
			case p.Type == config.Service && p.Ready != nil:
				if pr := probeNode(p.Ready, false); pr != nil {
					add(c, "readinessProbe", pr)
				} else {
					warn("%s: ready check %s has no Kubernetes probe", name, p.Ready.Kind)
				}
			}
			regular = append(regular, c)
		}
		if p.Live != nil {
			if pr := probeNode(p.Live, false); pr != nil && (p.Type == config.Service) {
				add(c, "livenessProbe", pr)
			}
		}
		if lc := lifecycle(p); lc != nil {
			add(c, "lifecycle", lc)
			stopSignal = stopSignal || mapValue(lc, "stopSignal") != nil
		}
		if p.User != nil {
			add(c, "securityContext", om("runAsUser", int(p.User.UID), "runAsGroup", int(p.User.GID)))
		}
		if rn := resourcesNode(p.Resources); rn != nil {
			add(c, "resources", rn)
		}
		if len(p.Limits) > 0 || p.Umask != nil || p.NoNewPrivs || len(p.AmbientCaps) > 0 {
			warn("%s: limits, umask, no_new_privs and capabilities have no field in this Kubernetes API (securityContext has no ulimits): set them in the image's entrypoint", name)
		}
		if p.Type != config.Oneshot {
			restarts[p.Restart.Policy.String()] = true
		}
	}
	if len(regular) == 0 {
		return nil, fmt.Errorf("every process is depended on: a pod needs at least one regular container")
	}
	restart := "Always"
	if opts.Kind == "Job" {
		restart = "Never"
		if restarts["on-failure"] {
			restart = "OnFailure"
		}
	}
	if len(restarts) > 1 {
		warn("the processes' restart policies differ: Kubernetes has one per pod (%s)", restart)
	}
	warn("the kubelet stops regular containers together and native sidecars after them in reverse order; podvisor's per-process reverse order among regular containers is lost")
	spec := om("terminationGracePeriodSeconds", graceSeconds(max(grace, cfg.ShutdownTimeout.Seconds())), "restartPolicy", restart)
	if stopSignal {
		// The API accepts lifecycle.stopSignal only with spec.os.name set.
		add(spec, "os", om("name", "linux"))
	}
	if len(inits) > 0 {
		add(spec, "initContainers", val(inits))
	}
	add(spec, "containers", val(regular))
	g.Manifest = encodeDocs(wrap(opts, spec, "Generated by podvisor kube generate (sidecars): one container per process."))
	return g, nil
}

// containerName makes a process name a DNS label.
func containerName(s string) string {
	s = strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(s))
	return strings.Trim(s, "-")
}

// containerEnv is the process's own environment (global entries included).
func containerEnv(env []string) []*yaml.Node {
	var out []*yaml.Node
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		out = append(out, om("name", k, "value", strings.ReplaceAll(v, "$", "$$")))
	}
	return out
}

func probeNode(p *config.Probe, startup bool) *yaml.Node {
	var h *yaml.Node
	switch p.Kind {
	case config.ProbeHTTP:
		u, err := url.Parse(p.Target)
		if err != nil {
			return nil
		}
		port, _ := strconv.Atoi(u.Port())
		if port == 0 {
			port = 80
		}
		pth := u.RequestURI()
		g := om("path", pth, "port", port)
		if p.H2C {
			g = om("path", pth, "port", port, "protocol", "HTTP2")
		}
		h = om("httpGet", g)
	case config.ProbeTCP:
		_, ps, err := net.SplitHostPort(p.Target)
		if err != nil {
			return nil
		}
		port, _ := strconv.Atoi(ps)
		h = om("tcpSocket", om("port", port))
	case config.ProbeGRPC:
		_, ps, err := net.SplitHostPort(p.Target)
		if err != nil {
			return nil
		}
		port, _ := strconv.Atoi(ps)
		g := om("port", port, "service", p.Service)
		if p.TLS {
			g = om("port", port, "service", p.Service, "mode", "TLS")
		}
		h = om("grpc", g)
	case config.ProbeExec:
		h = om("exec", om("command", p.Command))
	case config.ProbeFile:
		h = om("exec", om("command", []string{"test", "-e", p.Target}))
	default:
		return nil
	}
	period := p.Interval
	if startup {
		period = p.StartInterval
	}
	add(h, "periodSeconds", val(max(1, int(math.Ceil(period.Seconds())))))
	add(h, "timeoutSeconds", val(max(1, int(math.Ceil(p.Timeout.Seconds())))))
	if p.InitialDelay > 0 {
		add(h, "initialDelaySeconds", val(int(math.Ceil(p.InitialDelay.Seconds()))))
	}
	threshold := p.FailureThreshold
	if startup {
		threshold = max(threshold, 30) // a start may take a while; podvisor waits forever by default
	}
	add(h, "failureThreshold", val(threshold))
	return h
}

// jobProbes writes a regular container's startup check as its startupProbe
// and, next to it, its ready check as its readinessProbe (kube play reads
// them back the same way). A job's ready check without startup is its
// startup check.
func jobProbes(c *yaml.Node, p *config.Process, name string, warn func(string, ...any)) {
	startup, readiness := p.Startup, (*config.Probe)(nil)
	if startup == nil {
		startup = p.Ready
	} else {
		readiness = p.Ready
	}
	if startup != nil {
		if pr := probeNode(startup, true); pr == nil {
			warn("%s: startup check %s has no Kubernetes probe", name, startup.Kind)
		} else {
			if p.Startup != nil {
				// A startup check's failure_threshold is meant as written.
				mapValue(pr, "failureThreshold").Value = strconv.Itoa(p.Startup.FailureThreshold)
			}
			add(c, "startupProbe", pr)
		}
	}
	if readiness != nil {
		if pr := probeNode(readiness, false); pr != nil {
			add(c, "readinessProbe", pr)
		} else {
			warn("%s: ready check %s has no Kubernetes probe", name, readiness.Kind)
		}
	}
}

func lifecycle(p *config.Process) *yaml.Node {
	lc := om()
	if p.Stop.Command != nil {
		add(lc, "preStop", om("exec", om("command", p.Stop.Command)))
	}
	if sig := p.Stop.Signal.String(); p.Stop.Signal != 0 && sig != "terminated" {
		if name := signalName(p.Stop.Signal); name != "" {
			// Kubernetes 1.33+ (feature gate ContainerStopSignals).
			add(lc, "stopSignal", val(name))
		}
	}
	if len(lc.Content) == 0 {
		return nil
	}
	return lc
}

var signalNames = map[string]string{"hangup": "SIGHUP", "interrupt": "SIGINT", "quit": "SIGQUIT",
	"user defined signal 1": "SIGUSR1", "user defined signal 2": "SIGUSR2", "window changed": "SIGWINCH"}

func signalName(s interface{ String() string }) string {
	return signalNames[s.String()]
}

func integer(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, scalar(key), v)
}

// scalar is a plain string scalar (quoted by the encoder when needed).
func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}
