package kube

import (
	"bytes"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/podvisor/podvisor/internal/config"
)

// Procs is the procs.yaml kube play runs: a plain model written out by
// Marshal and read back by config.Parse, so a --dry-run prints exactly what
// runs. Strings hold final values: Marshal escapes them (config.Literal)
// so that config interpolation gives them back unchanged.
type Procs struct {
	Header          []string // comment lines at the top
	ShutdownTimeout string
	Processes       []*Proc // in the manifest's order
}

// Proc is one process.
type Proc struct {
	Name         string
	Comment      string
	Command      []string
	Type         string // "" is service
	Env          [][2]string
	WorkingDir   string
	User         string
	DependsOn    []Dep
	Ready        *Check
	StartTimeout string
	Live         *Check
	Startup      *Check // a job's startupProbe (see builder.regular)
	Restart      *Restart
	SuccessCodes []int // success_exit_codes; nil is the default [0]
	Stop         *Stop
	SecretEnv    []string // variables from Secrets: secret_env
	Sidecar      bool
}

// Dep is one depends_on entry.
type Dep struct{ Name, Condition string }

// Check is a ready, live or startup block.
type Check struct {
	HTTP, TCP, File  string
	Exec             []string
	StartInterval    string
	Interval         string
	Timeout          string
	InitialDelay     string
	SuccessThreshold int
	FailureThreshold int
	StopTimeout      string // a probe's terminationGracePeriodSeconds
	WhileStopping    bool   // a regular container's readinessProbe: probed while it terminates
}

// Restart is the long form of restart.
type Restart struct {
	Policy     string
	Backoff    string
	MaxBackoff string
	Limit      int
	Rules      []Rule
}

// Rule is one entry of restart.rules.
type Rule struct {
	Codes  []int
	NotIn  bool // codes is exit_codes.not_in, else exit_codes.in
	Action string
}

// Stop is the stop block.
type Stop struct {
	Signal       string
	Timeout      string
	Command      []string
	CommandFirst bool
	MinGrace     string
}

// proc returns the process named name, or nil.
func (p *Procs) proc(name string) *Proc {
	for _, q := range p.Processes {
		if q.Name == name {
			return q
		}
	}
	return nil
}

// Marshal writes p as procs.yaml.
func (p *Procs) Marshal() []byte {
	root := mapping()
	if p.ShutdownTimeout != "" {
		add(root, "shutdown_timeout", scalar(p.ShutdownTimeout))
	}
	procs := mapping()
	for _, q := range p.Processes {
		k := scalar(q.Name)
		if q.Comment != "" {
			k.HeadComment = q.Comment
		}
		procs.Content = append(procs.Content, k, q.node())
	}
	add(root, "processes", procs)
	var b bytes.Buffer
	for _, h := range p.Header {
		b.WriteString(strings.TrimRight("# "+h, " ") + "\n")
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	_ = enc.Encode(root) // a tree of scalars, mappings and sequences cannot fail
	_ = enc.Close()
	return b.Bytes()
}

func (q *Proc) node() *yaml.Node {
	n := mapping()
	add(n, "command", strs(q.Command))
	if q.Type != "" {
		add(n, "type", scalar(q.Type))
	}
	if len(q.Env) > 0 {
		env := mapping()
		for _, kv := range q.Env {
			add(env, kv[0], text(kv[1]))
		}
		add(n, "env", env)
	}
	if q.WorkingDir != "" {
		add(n, "working_dir", text(q.WorkingDir))
	}
	if q.User != "" {
		add(n, "user", scalar(q.User))
	}
	if len(q.DependsOn) > 0 {
		deps := mapping()
		deps.Style = yaml.FlowStyle
		for _, d := range q.DependsOn {
			add(deps, d.Name, scalar(d.Condition))
		}
		add(n, "depends_on", deps)
	}
	if q.Startup != nil {
		add(n, "startup", q.Startup.node())
	}
	if q.Ready != nil {
		add(n, "ready", q.Ready.node())
	}
	if q.StartTimeout != "" {
		add(n, "start_timeout", scalar(q.StartTimeout))
	}
	if q.Live != nil {
		add(n, "live", q.Live.node())
	}
	if r := q.Restart; r != nil {
		if r.Backoff == "" && r.Limit == 0 && len(r.Rules) == 0 {
			add(n, "restart", scalar(r.Policy))
		} else {
			rn := mapping()
			rn.Style = yaml.FlowStyle
			add(rn, "policy", scalar(r.Policy))
			if r.Backoff != "" {
				add(rn, "backoff", scalar(r.Backoff))
				add(rn, "max_backoff", scalar(r.MaxBackoff))
			}
			if r.Limit > 0 {
				add(rn, "limit", integer(r.Limit))
			}
			if len(r.Rules) > 0 {
				rules := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
				for _, x := range r.Rules {
					codes := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
					for _, c := range x.Codes {
						codes.Content = append(codes.Content, integer(c))
					}
					op := mapping()
					if x.NotIn {
						add(op, "not_in", codes)
					} else {
						add(op, "in", codes)
					}
					rn2 := mapping()
					add(rn2, "exit_codes", op)
					add(rn2, "action", scalar(x.Action))
					rules.Content = append(rules.Content, rn2)
				}
				add(rn, "rules", rules)
			}
			add(n, "restart", rn)
		}
	}
	if len(q.SecretEnv) > 0 {
		names := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, name := range q.SecretEnv {
			names.Content = append(names.Content, scalar(name))
		}
		add(n, "secret_env", names)
	}
	if len(q.SuccessCodes) > 0 {
		codes := &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		for _, c := range q.SuccessCodes {
			codes.Content = append(codes.Content, integer(c))
		}
		add(n, "success_exit_codes", codes)
	}
	if s := q.Stop; s != nil {
		sn := mapping()
		if s.Signal != "" {
			add(sn, "signal", scalar(s.Signal))
		}
		if s.Timeout != "" {
			add(sn, "timeout", scalar(s.Timeout))
		}
		if s.Command != nil {
			add(sn, "command", strs(s.Command))
		}
		if s.CommandFirst {
			add(sn, "command_first", boolean(true))
		}
		if s.MinGrace != "" {
			add(sn, "min_grace", scalar(s.MinGrace))
		}
		add(n, "stop", sn)
	}
	if q.Sidecar {
		add(n, "sidecar", boolean(true))
	}
	return n
}

func (c *Check) node() *yaml.Node {
	n := mapping()
	switch {
	case c.HTTP != "":
		add(n, "http", text(c.HTTP))
	case c.TCP != "":
		add(n, "tcp", text(c.TCP))
	case c.File != "":
		add(n, "file", text(c.File))
	default:
		add(n, "exec", strs(c.Exec))
	}
	for _, kv := range [][2]string{{"start_interval", c.StartInterval}, {"interval", c.Interval},
		{"timeout", c.Timeout}, {"initial_delay", c.InitialDelay}, {"stop_timeout", c.StopTimeout}} {
		if kv[1] != "" {
			add(n, kv[0], scalar(kv[1]))
		}
	}
	if c.SuccessThreshold > 0 {
		add(n, "success_threshold", integer(c.SuccessThreshold))
	}
	if c.FailureThreshold > 0 {
		add(n, "failure_threshold", integer(c.FailureThreshold))
	}
	if c.WhileStopping {
		add(n, "while_stopping", boolean(true))
	}
	return n
}

func integer(i int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(i)}
}

func mapping() *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode} }

func add(m *yaml.Node, key string, v *yaml.Node) {
	m.Content = append(m.Content, scalar(key), v)
}

// scalar is a plain string scalar (quoted by the encoder when needed).
func boolean(b bool) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(b)}
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// text is a scalar that config interpolates, escaped by config's one rule
// (config.Literal).
func text(s string) *yaml.Node {
	n := scalar(config.Literal(s))
	if strings.Contains(s, "\n") {
		n.Style = yaml.LiteralStyle
	}
	return n
}

func strs(ss []string) *yaml.Node {
	n := &yaml.Node{Kind: yaml.SequenceNode}
	flow := true
	for _, s := range ss {
		if strings.Contains(s, "\n") || len(s) > 60 {
			flow = false
		}
		n.Content = append(n.Content, text(s))
	}
	if flow {
		n.Style = yaml.FlowStyle
	}
	return n
}
