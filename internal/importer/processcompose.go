package importer

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"github.com/robfig/cron/v3"
	"go.yaml.in/yaml/v3"
	"golang.org/x/sys/unix"
)

// ConvertProcessCompose converts a process-compose.yaml.
func ConvertProcessCompose(src Source, opt Options) (*Model, *Report, error) {
	root, err := decodeYAML(src)
	if err != nil {
		return nil, nil, err
	}
	c := &pcConv{src: src, r: &Report{}, m: &Model{}}
	if err := c.readDotenv(opt.DotEnv); err != nil {
		return nil, nil, err
	}
	if root, err = c.extend(root, opt); err != nil {
		return nil, nil, err
	}
	if root, err = c.processExtends(root); err != nil {
		return nil, nil, err
	}
	c.m.Header = []string{
		"Converted by podvisor import from process-compose: " + src.Path,
		"process-compose runs commands with bash -c; podvisor runs a command string with /bin/sh -c.",
	}
	if err := c.convert(root); err != nil {
		return nil, nil, err
	}
	c.globalEnv()
	finish(c.m, c.r)
	return c.m, c.r, nil
}

// decodeYAML parses one YAML document into its top node, refusing
// anchors-heavy or malformed input with a position.
func decodeYAML(src Source) (*yaml.Node, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src.Data))
	if err := safeDecode(dec, &doc); err != nil && err != io.EOF {
		line, msg := 0, strings.TrimPrefix(err.Error(), "yaml: ")
		if m := yamlLine().FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			msg = m[2]
		}
		return nil, perr(src.Path, line, "invalid YAML: %s", msg)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, perr(src.Path, 1, "expected a mapping with processes:")
	}
	return doc.Content[0], nil
}

var yamlLine = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^line (\d+): (.*)$`) })

func safeDecode(dec *yaml.Decoder, v any) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: parser failure: %v", r)
		}
	}()
	return dec.Decode(v)
}

type pcConv struct {
	src Source
	r   *Report
	m   *Model
	// replicas of each process-compose name, for depends_on
	replicas map[string][]string
	// the body of each process-compose process, by its name
	procs map[string]*yaml.Node
	// processes others wait to complete: position of their definition
	pendingOneshot map[string]string
	// the file's vars:, and (while a process converts) its own and
	// PC_REPLICA_NUM, for its Go templates; nil outside a process
	globalVars, vars map[string]string
	// the .env beside the file: its variables, and their global env
	// entries (pcdotenv.go)
	dotenv    map[string]string
	dotenvEnv []string
	// processes with a schedule: made oneshots once converted
	pendingSchedule []*Process
	// literal: disable_env_expansion is on, every $ of the file is text
	// (processcompose_more.go)
	literal bool
	// disabled: the processes process-compose does not start by itself
	// (disabled: true), kept in the profile "disabled"; curDisabled: the
	// process being converted is one
	disabled    map[string]bool
	curDisabled bool
	// origin: the file of each node that comes from a file extends: names
	origin map[*yaml.Node]string
}

func (c *pcConv) pos(n *yaml.Node) string { return at(c.file(n), n.Line) }

// file names the file node n comes from: a base file of extends:
// (processcompose_extends.go), else the file converted.
func (c *pcConv) file(n *yaml.Node) string {
	if f, ok := c.origin[n]; ok {
		return f
	}
	return c.src.Path
}

// pairs returns a mapping's keys and values (nil for a non-mapping),
// following aliases and YAML merge keys (<<: *common, or a list of them),
// which process-compose files use to share settings: keys written in the
// mapping win over merged ones, as in YAML.
func pairs(n *yaml.Node) [][2]*yaml.Node {
	return pairsDepth(n, 0)
}

func pairsDepth(n *yaml.Node, depth int) [][2]*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode || depth > 16 {
		return nil
	}
	var own, merged [][2]*yaml.Node
	have := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && k.Tag != "!!str" {
			v = deref(v)
			srcs := []*yaml.Node{v}
			if v != nil && v.Kind == yaml.SequenceNode {
				srcs = v.Content
			}
			for _, src := range srcs {
				merged = append(merged, pairsDepth(src, depth+1)...)
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, deref(v)})
		have[k.Value] = true
	}
	for _, kv := range merged {
		if !have[kv[0].Value] {
			have[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own
}

// deref follows an alias to the node it names.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func get(n *yaml.Node, key string) *yaml.Node {
	for _, kv := range pairs(n) {
		if kv[0].Value == key {
			return kv[1]
		}
	}
	return nil
}

func scalar(n *yaml.Node) string {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return ""
	}
	return n.Value
}

func (c *pcConv) convert(root *yaml.Node) error {
	procs := get(root, "processes")
	if procs == nil || procs.Kind != yaml.MappingNode {
		return perr(c.file(root), root.Line, "no processes: mapping")
	}
	c.literal, _ = parseBool(scalar(get(root, "disable_env_expansion"))) // before any value is read
	for _, kv := range pairs(root) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "processes", "extends": // extends: merged before (processcompose_extends.go)
		case "version":
			c.r.AsIs(c.pos(k), "version")
		case "environment":
			env, err := c.environment(v)
			if err != nil {
				return err
			}
			c.m.Env = env
			c.r.AsIs(c.pos(k), "environment")
		case "log_level":
			c.r.Approx(c.pos(k), k.Value, "podvisor's own messages have no level setting: it prints info, warnings and errors, each with its level=, on its stdout")
		case "log_location", "log_length", "log_configuration":
			c.r.Approx(c.pos(k), k.Value, "one log for every process has no podvisor equivalent (a log file is per process); output goes to podvisor's stdout as \"name | line\" unless a process sets its own log_location")
		case "shell":
			c.r.Approx(c.pos(k), "shell", "podvisor runs a command string with /bin/sh -c")
		case "env_cmds":
			c.r.Drop(c.pos(k), "env_cmds", "not run: process-compose runs these commands at load and puts their output in variables; podvisor runs no command to fill ${VAR}: set the variables in podvisor's environment")
		case "disable_env_expansion":
			if c.literal {
				c.r.AsIs(c.pos(k), "disable_env_expansion (every $ of the file kept as text: $$ in procs.yaml; a command's $VAR is expanded by its shell at run time, as under process-compose)")
			}
		case "vars":
			c.globalVars = map[string]string{}
			pcVars(v, c.globalVars)
			c.r.AsIs(c.pos(k), "vars (rendered in each process's templates)")
		case "ordered_shutdown":
			if b, _ := parseBool(scalar(v)); b {
				c.r.AsIs(c.pos(k), "ordered_shutdown (podvisor stops in reverse dependency order)")
			}
		default:
			if strings.HasPrefix(k.Value, "x-") {
				c.r.AsIs(c.pos(k), k.Value+" (an extension block; its settings are used where aliases name them)")
				continue
			}
			if why, ok := pcTopDropped[k.Value]; ok {
				c.r.Drop(c.pos(k), k.Value, why)
				continue
			}
			c.r.Drop(c.pos(k), k.Value, "not a process-compose setting: process-compose ignores it (or refuses it with is_strict)")
		}
	}
	if b, _ := parseBool(scalar(get(root, "ordered_shutdown"))); !b && pcHasDependencies(get(root, "processes")) {
		c.r.Approx(c.pos(root), "shutdown order", "process-compose stops every process at once (without ordered_shutdown); podvisor stops them in reverse dependency order, each after its dependents")
	}
	c.replicas = map[string][]string{}
	c.procs = map[string]*yaml.Node{}
	c.disabled = map[string]bool{}
	// First pass: names (replicas expand to name-0 .. name-N-1).
	for _, kv := range pairs(procs) {
		name, body := kv[0].Value, kv[1]
		c.procs[name] = body
		n := 1
		if rep := get(body, "replicas"); rep != nil {
			v, err := strconv.Atoi(scalar(rep))
			if err != nil || v < 1 || v > 1000 {
				return perr(c.file(rep), rep.Line, "replicas %q: want a number from 1 to 1000", scalar(rep))
			}
			n = v
		}
		if why := pcLeftOut(body); why != "" {
			if !pcDisabled(body) {
				c.r.Drop(c.pos(kv[0]), name, why+"; podvisor starts every process it lists, so it is left out")
				continue
			}
			c.disabled[name] = true // kept, in the profile "disabled" (processcompose_more.go)
		}
		if n == 1 {
			c.replicas[name] = []string{sanitizeName(name)}
			continue
		}
		for i := 0; i < n; i++ {
			c.replicas[name] = append(c.replicas[name], sanitizeName(fmt.Sprintf("%s-%d", name, i)))
		}
	}
	for _, kv := range pairs(procs) {
		name := kv[0].Value
		for i, pname := range c.replicas[name] {
			if err := c.process(kv[0], kv[1], pname, i, len(c.replicas[name]) > 1); err != nil {
				return err
			}
		}
	}
	for _, p := range c.m.Processes {
		if pos, ok := c.pendingOneshot[p.Name]; ok {
			setOneshot(p, c.r, pos)
		}
	}
	for _, p := range c.pendingSchedule {
		// podvisor schedules oneshots: a run that ends is not restarted
		// until the next tick, as process-compose's scheduled process.
		p.Type = config.Oneshot
		if p.Restart.Policy == config.Always {
			setRestart(p, config.OnFailure)
			note(p, c.r, p.Written.Origin, "restart", "restart always is not allowed on a scheduled oneshot; on-failure")
		}
	}
	uniqueNames(c.m, c.r)
	return nil
}

// pcLeftOut says why process-compose does not start a process by itself
// ("" when it does): disabled (or is_disabled, its templated form), or a
// foreground process, which is started only by hand from its terminal UI.
func pcLeftOut(body *yaml.Node) string {
	for _, k := range []string{"disabled", "is_disabled"} {
		if b, _ := parseBool(strings.TrimSpace(scalar(get(body, k)))); b {
			return k + ": true"
		}
	}
	if b, _ := parseBool(scalar(get(body, "is_foreground"))); b {
		return "is_foreground: true (process-compose starts it only by hand, from its terminal UI)"
	}
	return ""
}

// pcHasDependencies reports whether a process of procs has depends_on:
// only then does the order of a stop differ.
func pcHasDependencies(procs *yaml.Node) bool {
	for _, kv := range pairs(procs) {
		if len(pairs(get(kv[1], "depends_on"))) > 0 {
			return true
		}
	}
	return false
}

// environment reads a list of "K=V" strings, or a mapping.
func (c *pcConv) environment(n *yaml.Node) ([]string, error) {
	n = deref(n)
	var out []string
	if n == nil || (n.Kind == yaml.ScalarNode && (n.Tag == "!!null" || n.Value == "")) {
		return nil, nil // environment: present but empty: none
	}
	switch n.Kind {
	case yaml.SequenceNode:
		for _, item := range n.Content {
			k, v, ok := strings.Cut(c.render(item, "environment"), "=")
			if !ok || !config.ValidEnvName(k) {
				return nil, perr(c.file(item), item.Line, "environment entry %q is not KEY=value", item.Value)
			}
			out = append(out, envEntry(k, c.str(v)))
		}
	case yaml.MappingNode:
		for _, kv := range pairs(n) {
			if !config.ValidEnvName(kv[0].Value) {
				return nil, perr(c.file(kv[0]), kv[0].Line, "environment key %q is not a variable name", kv[0].Value)
			}
			out = append(out, envEntry(kv[0].Value, c.str(c.render(kv[1], "environment"))))
		}
	default:
		return nil, perr(c.file(n), n.Line, "environment: want a list of KEY=value")
	}
	return out, nil
}

func (c *pcConv) process(key, body *yaml.Node, name string, replica int, replicated bool) error {
	r := c.r
	p := newProcess(name, fmt.Sprintf("%s process %s", c.pos(key), key.Value))
	if name != key.Value && !replicated {
		note(p, r, c.pos(key), "name", "renamed from "+key.Value)
	}
	if replicated {
		p.Env = append(p.Env, envEntry("PC_REPLICA_NUM", strconv.Itoa(replica)))
		if replica == 0 {
			r.AsIs(c.pos(key), key.Value+".replicas (one process per replica, PC_REPLICA_NUM set)")
		}
	}
	c.vars = maps.Clone(c.globalVars)
	if c.vars == nil {
		c.vars = map[string]string{}
	}
	pcVars(get(body, "vars"), c.vars)
	c.vars["PC_REPLICA_NUM"] = strconv.Itoa(replica)
	defer func() { c.vars = nil }()
	if b, _ := parseBool(scalar(get(body, "is_template_disabled"))); b {
		c.vars = nil // process-compose renders none of its templates
		if replica == 0 {
			r.AsIs(c.pos(get(body, "is_template_disabled")), key.Value+".is_template_disabled ({{...}} kept as written)")
		}
	}
	c.curDisabled = c.disabled[key.Value]
	var logLine string
	for _, kv := range pairs(body) {
		if err := c.processKey(p, key, kv[0], kv[1], replica, &logLine); err != nil {
			return err
		}
	}
	if b, _ := parseBool(scalar(get(body, "is_daemon"))); b {
		c.daemon(p, body, get(body, "is_daemon"))
	}
	if logLine != "" {
		lp := &Probe{Kind: config.ProbeLog, Target: regexp.QuoteMeta(logLine)}
		if p.Ready != nil {
			note(p, r, c.pos(body), "ready", "ready_log_line and readiness_probe both given; podvisor takes one readiness check: the readiness_probe is kept")
		} else {
			p.Ready = lp
			r.AsIs(c.pos(body), key.Value+".ready_log_line (ready: {log: ...})")
		}
	}
	if !p.Written.Restart && p.Type == config.Service {
		setRestart(p, config.Never)
		note(p, r, c.pos(key), "restart", "no availability: process-compose does not restart it; podvisor tears everything down if it fails")
	}
	// A completed process does not hold the project back: a success exit
	// that is not restarted leaves it completed and ready.
	p.RemainAfterExit = p.Daemon == nil
	if p.Command == nil {
		c.noCommand(p, key)
	}
	if c.curDisabled {
		c.disabledProfile(p, key)
	}
	c.m.Processes = append(c.m.Processes, p)
	return nil
}

// processKey converts the key k (value v) of the process key; a
// ready_log_line is kept in logLine, for after the readiness_probe.
func (c *pcConv) processKey(p *Process, key, k, v *yaml.Node, replica int, logLine *string) error {
	r := c.r
	what := key.Value + "." + k.Value
	switch k.Value {
	case "command":
		// $VAR is expanded at load, as process-compose expands it over the
		// whole file: a variable only environment: sets is empty here
		setShell(&p.Command, &p.Shell, c.str(c.render(v, what)))
		if s := scalar(v); !c.literal && pcUnbracedVar().MatchString(strings.ReplaceAll(s, "$$", "")) {
			r.AsIs(c.pos(k), what+" ($NAME put in when the file is loaded, from podvisor's environment and the .env, as process-compose does: a variable that only environment: sets is empty there, where a shell would have seen it; $$NAME leaves it to the shell)")
			break
		}
		r.AsIs(c.pos(k), what)
	case "entrypoint":
		if v.Kind == yaml.SequenceNode {
			for _, it := range v.Content { // the entrypoint wins over command
				if p.Shell {
					p.Command, p.Shell = nil, false
				}
				p.Command = append(p.Command, c.str(it.Value))
			}
		}
		r.AsIs(c.pos(k), what)
	case "working_dir":
		p.WorkingDir = c.str(c.render(v, what))
		r.AsIs(c.pos(k), what)
	case "environment":
		env, err := c.environment(v)
		if err != nil {
			return err
		}
		p.Env = append(env, p.Env...)
		r.AsIs(c.pos(k), what)
	case "env_file":
		p.Written.EnvFile = append(p.Written.EnvFile, scalar(v))
		r.AsIs(c.pos(k), what)
	case "depends_on":
		if err := c.dependsOn(p, v, what); err != nil {
			return err
		}
	case "readiness_probe":
		pr, err := c.probe(v, what)
		if err != nil {
			return err
		}
		if p.Ready == nil {
			p.Ready = pr
		}
	case "liveness_probe":
		pr, err := c.probe(v, what)
		if err != nil {
			return err
		}
		p.Live = pr
	case "ready_log_line":
		*logLine = scalar(v)
	case "availability":
		if err := c.availability(p, v, what); err != nil {
			return err
		}
	case "shutdown":
		if err := c.shutdown(p, v, what); err != nil {
			return err
		}
	case "is_daemon":
		// process() converts it once every key is read (pcdaemon.go)
	case "disabled", "replicas", "vars":
	case "namespace":
		r.Drop(c.pos(k), what, "podvisor has no namespaces; the process keeps its name")
	case "success_exit_codes":
		for _, it := range v.Content {
			n, err := strconv.Atoi(it.Value)
			if err != nil {
				return perr(c.file(it), it.Line, "success_exit_codes: %q is not a number", it.Value)
			}
			p.SuccessExitCodes = append(p.SuccessExitCodes, n)
		}
		if len(p.SuccessExitCodes) > 0 && !slices.Contains(p.SuccessExitCodes, 0) {
			// process-compose's list adds to 0; podvisor's replaces [0]
			p.SuccessExitCodes = append([]int{0}, p.SuccessExitCodes...)
			r.AsIs(c.pos(k), what+" (0 added: it stays a success, as in process-compose)")
		} else {
			r.AsIs(c.pos(k), what)
		}
	case "description":
		r.Drop(c.pos(k), what, "kept only in the report")
	case "log_location":
		file := strings.ReplaceAll(c.render(v, what), "{PC_REPLICA_NUM}", strconv.Itoa(replica))
		if strings.TrimSpace(file) == "" || dirLike(file) {
			r.Fail(c.pos(k), what, fmt.Sprintf("%q is not a file name", scalar(v)))
			return nil
		}
		l := &p.Log
		l.Stdout, l.Stderr, l.File = config.DestFile, config.DestFile, c.str(file)
		r.AsIs(c.pos(k), what+" (log: {stdout: file, stderr: file, file: ...})")
	case "log_configuration":
		note(p, r, c.pos(k), "log", "log_configuration: podvisor's log files are rotated by its own max_size and max_files (10MiB, 5 files); the lines are written as they are")
	case "is_tty", "is_interactive":
		if b, _ := parseBool(scalar(v)); b {
			p.TTY = true
			r.AsIs(c.pos(k), what+" (tty: true: a pseudo-terminal, reached with podvisor attach)")
		}
	case "schedule":
		c.schedule(p, v, what)
	case "truncate_log":
		if b, _ := parseBool(scalar(v)); b {
			note(p, r, c.pos(k), "log", "truncate_log: process-compose empties the log at each start; podvisor appends to the file and rotates it by size")
		}
	case "is_template_disabled", "is_disabled":
		// read before the other keys (process, pcDisabled)
	case "extends":
		// empty: no process named (a named one is merged in before,
		// processcompose_extends.go)
	default:
		if why, ok := pcProcessDropped[k.Value]; ok {
			r.Drop(c.pos(k), what, why)
			return nil
		}
		r.Drop(c.pos(k), what, "not a process-compose setting: process-compose ignores it (or refuses it with is_strict)")
	}
	return nil
}

// pcTopDropped says why each top-level process-compose setting that has
// no counterpart in procs.yaml is dropped ("" : not converted).
var pcTopDropped = map[string]string{
	"name":            "the project's name: podvisor has no project name, the processes keep theirs",
	"log_format":      "the format of process-compose's own log file; podvisor's own messages follow --log-format",
	"is_strict":       "makes process-compose refuse unknown keys; the import reports every key it does not convert instead",
	"is_tui_disabled": "podvisor run has no terminal UI (podvisor ui is a separate command)",
	"mcp_server":      "process-compose's MCP server (host, port, transport); podvisor mcp speaks over stdio and its actions are procs.yaml's mcp: key",
	"file_names":      "filled in by process-compose itself when it loads; not a setting",
	"env_file_names":  "filled in by process-compose itself when it loads; not a setting",
	"dot_env_vars":    "filled in by process-compose itself when it loads; not a setting",
}

// pcProcessDropped says why each process setting of process-compose that
// has no counterpart in procs.yaml is dropped.
var pcProcessDropped = map[string]string{
	"name":                      "the process's name is its key",
	"disable_ansi_colors":       "process-compose strips colour codes from the output; podvisor passes the lines as they are",
	"is_elevated":               "process-compose runs it through sudo (asking for a password); podvisor runs it as podvisor's user or user: (set user: root, or run podvisor as root)",
	"launch_timeout_seconds":    "how long process-compose waits for a daemon's starter to close its output; podvisor waits for the starter's exit only",
	"is_dotenv_disabled":        "process-compose keeps the .env's variables from this process; podvisor cannot take a variable out of one process's environment, so they still reach it",
	"original_config":           "filled in by process-compose itself when it loads; not a setting",
	"replica_num":               "filled in by process-compose itself when it loads (PC_REPLICA_NUM is set per replica)",
	"replica_name":              "filled in by process-compose itself when it loads; replicas are named NAME-N",
	"executable":                "process-compose overwrites it from command or entrypoint when it loads",
	"args":                      "process-compose overwrites it from command or entrypoint when it loads",
	"watch":                     "process-compose watches whole directory trees (with include and exclude filters and default excludes); podvisor's watch: matches globs in named directories only, without recursion: write watch: {paths: [DIR/*.EXT, ...]} for the directories that matter",
	"mcp":                       "process-compose exposes the process as an MCP tool; podvisor mcp exposes podvisor's own operations (status, logs, restart), not processes as tools",
	"monitor_for":               "process-compose alerts on output activity or silence; podvisor has no such alert (its /metrics and logs show the output)",
	"monitor_silence_threshold": "process-compose alerts on output silence; podvisor has no such alert",
	"is_foreground":             "",
}

var pcConditions = map[string]graph.Condition{
	"process_started":                graph.Started,
	"process_healthy":                graph.Ready,
	"process_log_ready":              graph.Ready,
	"process_completed":              graph.Completed,
	"process_completed_successfully": graph.Completed,
}

func (c *pcConv) dependsOn(p *Process, n *yaml.Node, what string) error {
	for _, kv := range pairs(n) {
		dep := kv[0].Value
		cond := scalar(get(kv[1], "condition"))
		if cond == "" {
			cond = "process_started"
		}
		pc, ok := pcConditions[cond]
		if !ok {
			return perr(c.file(kv[1]), kv[1].Line, "depends_on.%s: unknown condition %q (want one of process_started, process_healthy, process_log_ready, process_completed, process_completed_successfully)", dep, cond)
		}
		targets, ok := c.replicas[dep]
		if c.disabled[dep] && !c.curDisabled {
			ok = false // process-compose does not start it for this one: left out of its dependencies
		}
		if !ok {
			if _, known := c.procs[dep]; known {
				c.r.Drop(c.pos(kv[0]), what+"."+dep, "the dependency is disabled and left out")
			} else {
				c.unknownDep(c.pos(kv[0]), what, dep)
			}
			continue
		}
		for _, t := range targets {
			p.DependsOn = append(p.DependsOn, Dep{Name: t, Condition: pc})
		}
		switch cond {
		case "process_completed":
			setComment(p, "depends_on."+targets[0], "process_completed: podvisor waits for a successful exit")
			c.r.Approx(c.pos(kv[0]), what+"."+dep, "process_completed accepted any exit; podvisor's completed needs a success code")
			c.markOneshot(dep)
		case "process_completed_successfully":
			c.r.AsIs(c.pos(kv[0]), what+"."+dep)
			c.markOneshot(dep)
		case "process_healthy":
			c.r.AsIs(c.pos(kv[0]), what+"."+dep+" (ready: its readiness probe passed)")
		default:
			c.r.AsIs(c.pos(kv[0]), what+"."+dep)
		}
	}
	return nil
}

// markOneshot remembers that dep must be a oneshot (podvisor allows
// completed only on a oneshot or job); convert applies it once every
// process exists.
func (c *pcConv) markOneshot(dep string) {
	if c.pendingOneshot == nil {
		c.pendingOneshot = map[string]string{}
	}
	for _, name := range c.replicas[dep] {
		c.pendingOneshot[name] = c.pos(c.procs[dep])
	}
}

func setOneshot(p *Process, r *Report, pos string) {
	if p.Type != config.Service {
		return
	}
	p.Type = config.Oneshot
	if p.Written.Restart && p.Restart.Policy == config.Always {
		p.Restart.Policy = config.OnFailure
		note(p, r, pos, "restart", "restart always is not allowed on a oneshot; on-failure")
	}
	r.AsIs(pos, p.Name+": type oneshot (others wait for it to complete)")
}

func (c *pcConv) probe(n *yaml.Node, what string) (*Probe, error) {
	pr, kind := &Probe{}, false
	for _, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		secs := func() (time.Duration, error) {
			d, ok := parseSeconds(scalar(v))
			if !ok {
				return 0, perr(c.file(v), v.Line, "%s.%s: %q is not a number of seconds", what, k.Value, scalar(v))
			}
			return d, nil
		}
		var err error
		switch k.Value {
		case "exec":
			pr.Kind, kind = config.ProbeExec, true
			if v.Kind != yaml.MappingNode {
				// process-compose's exec is {command, working_dir}: its
				// loader refuses a plain string too.
				return nil, perr(c.file(v), v.Line, "%s.exec: want a mapping with command: (exec: {command: %q}), not a %s", what, scalar(v), kindName(v))
			}
			sh := c.str(c.render(get(v, "command"), what+".exec.command"))
			if strings.TrimSpace(sh) == "" {
				return nil, perr(c.file(v), v.Line, "%s.exec.command: empty; write the command the probe runs", what)
			}
			if wd := scalar(get(v, "working_dir")); wd != "" {
				sh = "cd " + c.str(wd) + " && " + sh
			}
			setShell(&pr.Command, &pr.Shell, sh)
		case "http_get":
			pr.Kind, kind = config.ProbeHTTP, true
			scheme := c.render(get(v, "scheme"), what)
			if scheme == "" {
				scheme = "http"
			}
			host := c.render(get(v, "host"), what)
			if host == "" {
				host = "127.0.0.1"
			}
			port := c.render(get(v, "port"), what)
			if port == "" {
				port = scalar(get(v, "num_port")) // process-compose's numeric form
			}
			u := scheme + "://" + host
			if port != "" {
				if n, err := strconv.Atoi(port); err == nil && (n < 1 || n > 65535) {
					return nil, perr(c.file(v), v.Line, "%s.http_get.port: %d is out of range 1-65535", what, n)
				}
				u += ":" + port
			}
			if hs := get(v, "headers"); hs != nil && len(pairs(hs)) > 0 {
				c.r.Drop(c.pos(hs), what+".http_get.headers", "podvisor's http check sends no headers of its own choosing (User-Agent: podvisor/probe only); a check that needs them can be an exec check with curl -H")
			}
			if sc := scalar(get(v, "status_code")); sc != "" {
				c.r.Approx(c.pos(get(v, "status_code")), what+".http_get.status_code", "process-compose wants exactly "+sc+"; podvisor's http check passes on any status from 200 to 399")
			}
			p := c.render(get(v, "path"), what)
			if !strings.HasPrefix(p, "/") {
				p = "/" + p
			}
			pr.Target = c.str(u + p)
			if pu, err := url.Parse(pr.Target); err != nil || pu.Host == "" || strings.ContainsAny(pu.Host, "\\ ") ||
				(pu.Scheme != "http" && pu.Scheme != "https") {
				if !strings.Contains(pr.Target, "${") {
					return nil, perr(c.file(v), v.Line, "%s.http_get: %q is not a URL; check host, port and path", what, pr.Target)
				}
			}
		case "initial_delay_seconds":
			pr.InitialDelay, err = secs()
		case "period_seconds":
			pr.Interval, err = secs()
			pr.StartInterval = pr.Interval
		case "timeout_seconds":
			pr.Timeout, err = secs()
		case "success_threshold":
			pr.SuccessThreshold, _ = strconv.Atoi(scalar(v))
		case "failure_threshold":
			pr.FailureThreshold, _ = strconv.Atoi(scalar(v))
		default:
			c.r.Drop(c.pos(k), what+"."+k.Value, "not a probe setting of process-compose: process-compose ignores it")
			continue
		}
		if err != nil {
			return nil, err
		}
	}
	if !kind {
		return nil, perr(c.file(n), n.Line, "%s: neither exec nor http_get", what)
	}
	c.r.AsIs(c.pos(n), what)
	return pr, nil
}

func (c *pcConv) availability(p *Process, n *yaml.Node, what string) error {
	rs := config.Restart{Policy: config.Never}
	for _, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "restart":
			switch c.fixed(v, p, "restart") {
			case "always":
				rs.Policy = config.Always
				c.r.AsIs(c.pos(k), what+".restart")
			case "on_failure", "on-failure":
				rs.Policy = config.OnFailure
				c.r.AsIs(c.pos(k), what+".restart")
			case "exit_on_failure":
				rs.Policy = config.Never
				c.r.AsIs(c.pos(k), what+".restart=exit_on_failure (restart: never; a failure tears everything down)")
			case "no", "":
				rs.Policy = config.Never
				note(p, c.r, c.pos(k), "restart", "restart: no; process-compose leaves a failed process exited, podvisor tears everything down when it fails")
			default:
				return perr(c.file(v), v.Line, "%s.restart: unknown policy %q (want always, on_failure, exit_on_failure or no)", what, scalar(v))
			}
		case "backoff_seconds":
			d, ok := parseSeconds(scalar(v))
			if !ok {
				return perr(c.file(v), v.Line, "%s.backoff_seconds: %q is not a number", what, scalar(v))
			}
			if d < 10*time.Millisecond {
				d = 10 * time.Millisecond
			}
			rs.Backoff, rs.MaxBackoff = d, d
			c.r.AsIs(c.pos(k), what+".backoff_seconds (a fixed backoff: max_backoff is the same)")
		case "max_restarts":
			rs.Limit, _ = strconv.Atoi(scalar(v))
			c.r.AsIs(c.pos(k), what+".max_restarts")
		case "exit_on_end":
			if b, _ := parseBool(scalar(v)); b {
				p.Type = config.Job
				note(p, c.r, c.pos(k), "type", "exit_on_end: a job; podvisor tears everything down once every job has completed (successfully), or at once when one fails")
			}
		case "exit_on_skipped":
			c.r.Drop(c.pos(k), what+".exit_on_skipped", "podvisor never skips a process")
		default:
			c.r.Drop(c.pos(k), what+"."+k.Value, "not an availability setting of process-compose: process-compose ignores it")
		}
	}
	if p.Type == config.Job && rs.Policy == config.Always {
		rs.Policy = config.OnFailure
		note(p, c.r, c.pos(n), "restart", "restart always is not allowed on a job; on-failure")
	}
	p.Restart, p.Written.Restart = rs, true
	return nil
}

func (c *pcConv) shutdown(p *Process, n *yaml.Node, what string) error {
	for _, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "command":
			setShell(&p.Stop.Command, &p.Stop.Shell, c.str(scalar(v)))
			// docs/configuration.md (Stop): the stop signal follows the command.
			note(p, c.r, c.pos(k), "stop", "shutdown.command: podvisor runs it, then sends the stop signal (SIGTERM unless shutdown.signal) if the process is still running, with what is left of the timeout less a grace for the signal; process-compose sends no signal after it, only SIGKILL at timeout_seconds")
		case "signal":
			sig := signalName(scalar(v))
			if sig == "" {
				return perr(c.file(v), v.Line, "%s.signal: %q is not a signal", what, scalar(v))
			}
			if sig == "SIGKILL" {
				setStopTimeout(p, 0)
				note(p, c.r, c.pos(k), "stop", "signal 9: podvisor sends SIGTERM, then SIGKILL at once (timeout 0s)")
				continue
			}
			p.Stop.Signal = unix.SignalNum(sig)
			c.r.AsIs(c.pos(k), what+".signal")
		case "timeout_seconds":
			d, ok := parseSeconds(scalar(v))
			if !ok {
				return perr(c.file(v), v.Line, "%s.timeout_seconds: %q is not a number", what, scalar(v))
			}
			if !(p.Written.StopTimeout && p.Stop.Timeout == 0) {
				setStopTimeout(p, d)
			}
			c.r.AsIs(c.pos(k), what+".timeout_seconds")
		case "parent_only":
			if b, _ := parseBool(scalar(v)); b {
				note(p, c.r, c.pos(k), "stop", "parent_only: podvisor signals the whole process group")
			}
		case "send_keys":
			if scalar(get(n, "command")) == "" {
				c.r.Drop(c.pos(k), what+".send_keys", "process-compose stops the process by typing these keys on its terminal; podvisor stops it with the stop signal only: a program that quits only on a key needs a stop.command that makes it quit")
			} else {
				c.r.Drop(c.pos(k), what+".send_keys", "process-compose ignores it when shutdown.command is set")
			}
		default:
			c.r.Drop(c.pos(k), what+"."+k.Value, "not a shutdown setting of process-compose: process-compose ignores it")
		}
	}
	return nil
}

// pcString keeps a process-compose value as it is: process-compose expands
// ${VAR} (and $$) in its file at load, as podvisor does in procs.yaml, so
// the text means the same to both. It expands $VAR at load too, which
// podvisor leaves to the shell: that becomes ${VAR:-} (empty when unset,
// as process-compose's os.ExpandEnv makes it).
// Text podvisor could not interpolate (an unterminated ${, or ${...} that
// is not NAME or NAME:-default) is kept literal, every $ escaped.
func pcString(s string) string {
	if !validInterpolation(s) {
		return pcShell(s)
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] != '$' || i+1 == len(s) {
			continue
		}
		if s[i+1] == '$' { // podvisor's $$ too
			b.WriteByte('$')
			i++
			continue
		}
		n := 0
		for i+1+n < len(s) && (isEnvNameByte(s[i+1+n]) && (n > 0 || s[i+1] < '0' || s[i+1] > '9')) {
			n++
		}
		if n > 0 {
			b.WriteString("{" + s[i+1:i+1+n] + ":-}") // unset: empty, as os.ExpandEnv gives
			i += n
		}
	}
	return b.String()
}

// isEnvNameByte reports whether c may be part of a variable name.
func isEnvNameByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// validInterpolation reports whether every ${...} in s is one podvisor
// reads: ${NAME} or ${NAME:-default}, the default without "${".
func validInterpolation(s string) bool {
	for {
		i := strings.Index(s, "$")
		if i < 0 {
			return true
		}
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "$$"):
			s = s[2:]
		case strings.HasPrefix(s, "${"):
			end := strings.IndexByte(s, '}')
			if end < 0 {
				return false
			}
			name, def, _ := strings.Cut(s[2:end], ":-")
			if !config.ValidEnvName(name) || strings.Contains(def, "${") {
				return false
			}
			s = s[end+1:]
		default:
			s = s[1:]
		}
	}
}

// pcRender renders process-compose's Go templates in s as it does for a
// process (vars of the file and of the process, PC_REPLICA_NUM): only
// {{.NAME}} (spaces allowed inside the braces); a name not in vars gives
// "<no value>", as text/template does with a map. Any other action is an
// error: podvisor does not evaluate templates.
func pcRender(s string, vars map[string]string) (string, error) {
	var b strings.Builder
	for {
		i := strings.Index(s, "{{")
		if i < 0 {
			b.WriteString(s)
			return b.String(), nil
		}
		b.WriteString(s[:i])
		end := strings.Index(s[i:], "}}")
		if end < 0 {
			return "", fmt.Errorf("unclosed {{ in %q", s)
		}
		action := strings.Trim(s[i+2:i+end], " \t\r\n") // text/template's spaces
		// {{or ...}} over ${VAR} and vars: processcompose_more.go
		if v, ok := pcOr(action, vars); ok {
			b.WriteString(v)
			s = s[i+end+2:]
			continue
		}
		name, ok := strings.CutPrefix(action, ".")
		if !ok || name == "" || ('0' <= name[0] && name[0] <= '9') || strings.IndexFunc(name, func(r rune) bool { return r > 0x7f || !isEnvNameByte(byte(r)) }) >= 0 {
			return "", errTemplate(s[i+2 : i+end])
		}
		if v, ok := vars[name]; ok {
			b.WriteString(v)
		} else {
			b.WriteString("<no value>")
		}
		s = s[i+end+2:]
	}
}

// pcVars reads a vars: mapping into vars (later keys win).
func pcVars(n *yaml.Node, vars map[string]string) {
	for _, kv := range pairs(n) {
		vars[kv[0].Value] = scalar(kv[1])
	}
}

// render renders the templates of the value of n for the process being
// converted; a template it cannot render fails the key.
func (c *pcConv) render(n *yaml.Node, what string) string {
	s := scalar(n)
	if c.vars == nil {
		return s
	}
	out, err := pcRender(s, c.vars)
	if err != nil {
		c.r.Fail(c.pos(n), what, err.Error())
		return s
	}
	return out
}

// pcUnbracedVar matches a $NAME that process-compose expands at load and a
// shell would expand at run time, from a different environment.
var pcUnbracedVar = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`\$[A-Za-z_]`) })

// pcShell is pcString for a command string: its $VAR is left to the shell,
// which reads it from the process's environment at run time (env:
// included, where process-compose's load-time expansion reads only its own
// environment: docs/import.md says so).
func pcShell(s string) string {
	if validInterpolation(s) {
		return s
	}
	return strings.ReplaceAll(s, "$", "$$")
}

// schedule converts a process's schedule: (cron or interval, timezone):
// podvisor runs a scheduled oneshot at each tick, as process-compose runs a
// scheduled process.
func (c *pcConv) schedule(p *Process, n *yaml.Node, what string) {
	s := &config.Schedule{Location: time.Local}
	for _, kv := range pairs(n) {
		k, v := kv[0], kv[1]
		switch k.Value {
		case "cron":
			s.Cron = scalar(v)
			if sc, err := cron.ParseStandard(s.Cron); err != nil || sc.Next(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)).IsZero() {
				c.r.Fail(c.pos(v), what+".cron", fmt.Sprintf("%q is not a cron expression that fires (five fields, or @daily, @every 10m)", s.Cron))
				return
			}
		case "interval":
			d, err := time.ParseDuration(scalar(v))
			if err != nil || d <= 0 || d > config.MaxDuration {
				c.r.Fail(c.pos(v), what+".interval", fmt.Sprintf("%q is not a duration such as 30m (at most 24h)", scalar(v)))
				return
			}
			s.Every = d
		case "timezone":
			loc, err := time.LoadLocation(scalar(v))
			if err != nil {
				c.r.Fail(c.pos(v), what+".timezone", fmt.Sprintf("%q is not a time zone such as UTC or Europe/Paris", scalar(v)))
				return
			}
			s.Location = loc
		case "run_on_start":
			if b, _ := parseBool(scalar(v)); b {
				c.r.Approx(c.pos(k), what+".run_on_start", "process-compose also runs it at once when it starts; podvisor runs a scheduled oneshot at the ticks only")
			}
		case "max_concurrent":
			if m, _ := strconv.Atoi(scalar(v)); m > 1 {
				c.r.Approx(c.pos(k), what+".max_concurrent", "process-compose may run "+scalar(v)+" at once; podvisor runs one at a time and skips a tick while a run goes on (concurrency: forbid)")
			}
		default:
			c.r.Drop(c.pos(k), what+"."+k.Value, "not a schedule setting of process-compose: process-compose ignores it")
		}
	}
	if (s.Cron == "") == (s.Every == 0) {
		c.r.Fail(c.pos(n), what, "give cron or interval, exactly one")
		return
	}
	if s.Cron == "" && s.Location != time.Local {
		s.Location = time.Local // podvisor reads timezone with cron only
		c.r.Drop(c.pos(n), what+".timezone", "an interval does not depend on the time zone")
	}
	p.Schedule = s
	c.pendingSchedule = append(c.pendingSchedule, p)
	c.r.AsIs(c.pos(n), what+" (schedule: on a oneshot)")
}

// kindName names a YAML node's kind for an error.
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.ScalarNode:
		return "string"
	case yaml.SequenceNode:
		return "list"
	case yaml.MappingNode:
		return "mapping"
	}
	return "value"
}

// pcDefaulted matches a whole value ${VAR:-default} (or ${VAR-default}).
var pcDefaulted = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^\$\{([A-Za-z_][A-Za-z0-9_]*):?-([^}]*)\}$`)
})

// fixed is the value of a key podvisor reads as a fixed word (a restart
// policy), where process-compose substitutes ${VAR:-default} over the whole
// file at load: its default, approximated and said, since the written file
// cannot read the variable there.
func (c *pcConv) fixed(v *yaml.Node, p *Process, key string) string {
	s := scalar(v)
	m := pcDefaulted().FindStringSubmatch(s)
	if m == nil {
		return s
	}
	note(p, c.r, c.pos(v), key, fmt.Sprintf("%s: process-compose reads $%s at load, with %q as its default; the written value is that default (edit it here to change it)", s, m[1], m[2]))
	return m[2]
}
