package config

import (
	"errors"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/podvisor/podvisor/internal/graph"
	"go.yaml.in/yaml/v3"
)

// The keys each mapping accepts, in the order hints list them.
var (
	topKeys        = []string{"version", "listen", "listen_hosts", "control", "ui", "mcp", "shutdown_timeout", "log", "env", "processes"}
	logKeys        = []string{"format", "timestamps", "tail", "stdout", "stderr", "file", "stderr_file", "max_size", "max_files", "compress"}
	processKeys    = []string{"command", "type", "env", "env_file", "working_dir", "user", "depends_on", "ready", "start_timeout", "live", "startup", "restart", "success_exit_codes", "stop", "oom_score_adj", "limits", "umask", "no_new_privs", "capabilities", "log", "secret_env", "sidecar", "remain_after_exit", "watchdog", "schedule", "watch", "sockets", "fd_store_max", "daemon", "reload", "resources", "profiles", "tty", "stdin", "root"}
	dependencyKeys = []string{"condition", "restart"}
	restartKeys    = []string{"policy", "backoff", "max_backoff", "limit", "overlap", "during_termination", "rules"}
	stopKeys       = []string{"signal", "timeout", "command", "command_first", "min_grace"}

	typeWords      = []string{"service", "oneshot", "job"}
	policyWords    = []string{"always", "on-failure", "never"}
	conditionWords = []string{"started", "ready", "completed"}
	logFormats     = []string{"text", "json"}
)

// MaxNameLen is the longest process name accepted.
const MaxNameLen = 63

// config decodes the top-level mapping.
func (l *loader) config(root *yaml.Node) *Config {
	cfg := defaultConfig(l.file, l.dir)
	f, ok := l.fields(root, nil, topKeys)
	if !ok {
		return cfg
	}
	if p, ok := f.get("version"); ok {
		n := p.val
		if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!str") || n.Value != "1" {
			l.errorf(n, top("version"), "unsupported version %s", describeValue(n)).Hint = "the only version is 1"
		}
	}
	if p, ok := f.get("listen"); ok {
		cfg.Listen = l.listen(p.val, top("listen"))
	}
	if p, ok := f.get("listen_hosts"); ok {
		cfg.ListenHosts = l.listenHosts(p.val, top("listen_hosts"))
	}
	if p, ok := f.get("control"); ok {
		cfg.Control = l.control(p.val, top("control"))
	}
	if p, ok := f.get("ui"); ok {
		cfg.UI = l.ui(p.val, top("ui"))
	}
	if p, ok := f.get("mcp"); ok {
		cfg.MCP = l.mcp(p.val, top("mcp"))
	}
	if p, ok := f.get("shutdown_timeout"); ok {
		cfg.ShutdownTimeout, _ = l.duration(p.val, top("shutdown_timeout"), true)
	}
	if p, ok := f.get("log"); ok {
		cfg.Log = l.logSection(p.val, top("log"))
	}
	l.logDefaults = cfg.Log.Default
	if p, ok := f.get("env"); ok {
		cfg.Env = MergeEnv(l.env(p.val, top("env")))
	}
	p, ok := f.get("processes")
	if !ok {
		l.errorf(root, nil, "no processes defined").Hint = "add a processes section"
		return cfg
	}
	l.processes(cfg, p)
	l.fileOwners(cfg)
	l.checkSockets(cfg)
	return cfg
}

// describeValue shows a scalar's text, or what a non-scalar is.
func describeValue(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return strconv.Quote(n.Value)
	}
	return describe(n)
}

func (l *loader) listen(n *yaml.Node, path *keyPath) string {
	s, ok := l.str(n, path)
	if !ok || s == "off" {
		return s
	}
	if msg := checkHostPort(s, 0); msg != "" {
		l.errorf(n, path, "invalid listen address %q: %s", s, msg).Hint = `use host:port such as ":9464", or "off"`
	}
	return s
}

// checkHostPort validates host:port with a numeric port of at least minPort,
// returning a message or "".
func checkHostPort(s string, minPort int) string {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		if ae, ok := err.(*net.AddrError); ok {
			return ae.Err
		}
		return "want host:port"
	}
	p, err := strconv.Atoi(port)
	if err != nil || !isDigits(port) {
		return "port " + strconv.Quote(port) + " is not a number"
	}
	if p < minPort || p > 65535 {
		return "port " + port + " is out of range " + strconv.Itoa(minPort) + "-65535"
	}
	return ""
}

func (l *loader) logSection(n *yaml.Node, path *keyPath) Log {
	out := Log{Format: "text", Tail: DefaultLogTail, Default: defaultOutput()}
	f, ok := l.fields(n, path, logKeys)
	if !ok {
		return out
	}
	// format and timestamps are podvisor's stdout's, and the default of
	// every process's file.
	out.Default = l.output(f, path, out.Default, true)
	out.Format, out.Timestamps = out.Default.Format, out.Default.Timestamps
	if p, ok := f.get("tail"); ok {
		out.Tail = l.logTail(p.val, path.field("tail"))
	}
	return out
}

// word reads a string that must be one of words.
func (l *loader) word(n *yaml.Node, path *keyPath, what string, words []string) (string, bool) {
	s, ok := l.str(n, path)
	if !ok {
		return "", false
	}
	if !contains(words, s) {
		hint := "valid: " + strings.Join(words, ", ")
		if h := didYouMean(s, words); h != "" {
			hint = h + " " + hint
		}
		l.errorf(n, path, "unknown %s %q", what, s).Hint = hint
		return "", false
	}
	return s, true
}

// env decodes a mapping of variables, interpolating the values.
func (l *loader) env(n *yaml.Node, path *keyPath) []string {
	pairs, ok := l.mapping(n, path)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(pairs))
	for _, p := range pairs {
		if !validEnvName(p.name) {
			l.errorf(p.key, path, "invalid variable name %q", p.name).Hint =
				"use letters, digits and _, not starting with a digit"
			continue
		}
		vpath := path.field(p.name)
		v, ok := l.text(p.val, vpath)
		if !ok {
			continue
		}
		if v, ok = l.interp(p.val, vpath, v); ok {
			out = append(out, p.name+"="+v)
		}
	}
	return out
}

// MergeEnv concatenates KEY=VALUE lists so that each key appears once, at
// its first position, with its last value (later lists win). The supervisor
// uses it too, to put podvisor's own environment under the config's.
func MergeEnv(lists ...[]string) []string {
	total := 0
	for _, l := range lists {
		total += len(l)
	}
	if total == 0 {
		return nil
	}
	out := make([]string, 0, total)
	at := make(map[string]int, total)
	for _, list := range lists {
		for _, kv := range list {
			k, _, _ := strings.Cut(kv, "=")
			if i, ok := at[k]; ok {
				out[i] = kv
				continue
			}
			at[k] = len(out)
			out = append(out, kv)
		}
	}
	return out
}

// validName reports whether s is a valid process name: 1-63 of A-Za-z0-9_.-
// starting with a letter or digit. Names end up in paths, metric labels and
// log prefixes, so they are kept plain.
func validName(s string) bool {
	if s == "" || len(s) > MaxNameLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case (c == '_' || c == '.' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// processes decodes every process, then checks dependencies across them and
// builds the graph, so that cycles are reported with the other errors.
func (l *loader) processes(cfg *Config, p pair) {
	pairs, ok := l.mapping(p.val, top("processes"))
	if !ok {
		return
	}
	if len(pairs) == 0 {
		l.errorf(p.val, top("processes"), "no processes defined").Hint = "a supervisor needs something to run"
		return
	}
	if len(pairs) > MaxProcesses {
		l.errorf(p.val, top("processes"), "%d processes defined; the limit is %d", len(pairs), MaxProcesses).Hint =
			"split the work across several podvisor instances (containers)"
		return
	}
	type entry struct {
		proc *Process
		refs []depRef
	}
	entries := make([]entry, 0, len(pairs))
	names := make([]string, 0, len(pairs))
	cfg.Processes = make(map[string]*Process, len(pairs))
	refCount := 0
	for _, pp := range pairs {
		if !validName(pp.name) {
			l.errorf(pp.key, top("processes"), "invalid process name %q", pp.name).Hint =
				"use 1-63 of A-Z a-z 0-9 _ . - starting with a letter or digit"
		}
		proc, refs := l.process(pp.name, pp, cfg.Env)
		cfg.Processes[pp.name] = proc
		entries = append(entries, entry{proc, refs})
		refCount += len(refs)
		names = append(names, pp.name)
	}
	l.caseCollisions(pairs)
	slices.Sort(names)
	cfg.Names = names

	edges := make([]graph.Edge, 0, refCount)
	for _, e := range entries {
		name := e.proc.Name
		path := top("processes").field(name).field("depends_on")
		for _, r := range e.refs {
			target, known := cfg.Processes[r.dep.Name]
			switch {
			case r.dep.Name == name:
				l.errorf(r.node, path, "process %q depends on itself", name)
				continue
			case !known:
				l.errorf(r.node, path, "unknown process %q", r.dep.Name).Hint = didYouMean(r.dep.Name, names)
				continue
			case r.dep.Condition == graph.Completed && target.Type == Service:
				l.errorf(r.node, path, "condition completed needs a oneshot or job, but %q is a service", r.dep.Name).Hint =
					"use ready or started"
			}
			e.proc.DependsOn = append(e.proc.DependsOn, r.dep)
			edges = append(edges, graph.Edge{From: name, To: r.dep.Name, Cond: r.dep.Condition})
		}
		slices.SortFunc(e.proc.DependsOn, func(a, b Dependency) int { return strings.Compare(a.Name, b.Name) })
	}

	g, err := graph.New(names, edges)
	var cycles *graph.CycleError
	switch {
	case errors.As(err, &cycles):
		refs := make(map[string][]depRef, len(entries))
		for _, e := range entries {
			refs[e.proc.Name] = e.refs
		}
		for _, c := range cycles.Cycles {
			l.cycle(c, refs, p.key)
		}
	case err != nil:
		l.errorf(p.key, top("processes"), "%s", err.Error())
	default:
		cfg.Graph = g
	}
}

// caseCollisions reports names that differ only in case, such as web and
// Web: they would be confusing in logs and metrics. Exact duplicates are
// already refused, so a collision needs an upper-case letter; the common
// all-lower-case config costs no map.
func (l *loader) caseCollisions(pairs []pair) {
	if !slices.ContainsFunc(pairs, func(p pair) bool { return strings.ToLower(p.name) != p.name }) {
		return
	}
	first := make(map[string]*yaml.Node, len(pairs))
	for _, p := range pairs {
		lower := strings.ToLower(p.name)
		if f := first[lower]; f != nil {
			l.errorf(p.key, top("processes"), "process name %q differs from %q (line %d) only in case", p.name, f.Value, f.Line)
			continue
		}
		first[lower] = p.key
	}
}

// process decodes one entry of processes.
func (l *loader) process(name string, p pair, globalEnv []string) (*Process, []depRef) {
	path := top("processes").field(name)
	proc := &Process{
		Name:             name,
		Pos:              l.pos(p.key),
		Env:              globalEnv,
		WorkingDir:       l.dir,
		Restart:          defaultRestart(Service),
		SuccessExitCodes: defaultSuccessExitCodes(),
		Stop:             defaultStop(),
	}
	f, ok := l.fields(p.val, path, processKeys)
	if !ok {
		return proc, nil
	}
	// The type decides the default restart policy and what may depend on it.
	if v, ok := f.get("type"); ok {
		if w, ok := l.word(v.val, path.field("type"), "type", typeWords); ok {
			proc.Type = Type(slices.Index(typeWords, w))
		}
	}
	proc.Restart = defaultRestart(proc.Type)

	if v, ok := f.get("command"); ok {
		proc.Command, proc.Shell, _ = l.command(v.val, path.field("command"))
	} else {
		l.errorf(p.key, path, "command is required")
	}

	envs := [][]string{globalEnv}
	if v, ok := f.get("env_file"); ok {
		envs = append(envs, l.envFileList(v.val, path.field("env_file"))...)
	}
	if v, ok := f.get("env"); ok {
		envs = append(envs, l.env(v.val, path.field("env")))
	}
	proc.Env = MergeEnv(envs...)
	l.nameLists(f, path, proc)

	if v, ok := f.get("root"); ok {
		proc.Root = l.path(v.val, path.field("root"))
		// Inside a root, the config's directory means nothing: "/" as in
		// an image without WORKDIR.
		proc.WorkingDir = "/"
	}
	if v, ok := f.get("working_dir"); ok {
		if proc.Root != "" {
			proc.WorkingDir = l.rootedDir(v.val, path.field("working_dir"))
		} else {
			proc.WorkingDir = l.path(v.val, path.field("working_dir"))
		}
	}
	if v, ok := f.get("user"); ok {
		proc.User = l.user(v.val, path.field("user"))
	}
	var deps []depRef
	if v, ok := f.get("depends_on"); ok {
		deps = l.dependsOn(v.val, path.field("depends_on"))
	}
	if v, ok := f.get("ready"); ok {
		proc.Ready = l.probe(v.val, path.field("ready"), roleReady)
	}
	if v, ok := f.get("start_timeout"); ok {
		proc.StartTimeout, _ = l.duration(v.val, path.field("start_timeout"), false)
	}
	if v, ok := f.get("live"); ok {
		proc.Live = l.probe(v.val, path.field("live"), roleLive)
	}
	if v, ok := f.get("startup"); ok {
		proc.Startup = l.probe(v.val, path.field("startup"), roleStartup)
	}
	if v, ok := f.get("restart"); ok {
		proc.Restart = l.restart(v.val, path.field("restart"), proc.Type)
	}
	if v, ok := f.get("success_exit_codes"); ok {
		proc.SuccessExitCodes = l.exitCodes(v.val, path.field("success_exit_codes"))
	}
	if v, ok := f.get("stop"); ok {
		proc.Stop = l.stop(v.val, path.field("stop"))
	}
	if v, ok := f.get("watch"); ok {
		proc.Watch = l.watch(v.val, path.field("watch"))
	}
	if v, ok := f.get("schedule"); ok {
		proc.Schedule = l.schedule(v.val, path.field("schedule"), proc)
	}
	if v, ok := f.get("watchdog"); ok {
		proc.Watchdog = l.watchdog(v.val, path.field("watchdog"), proc)
	}
	if v, ok := f.get("oom_score_adj"); ok {
		proc.OOMScoreAdj = l.oomScoreAdj(v.val, path.field("oom_score_adj"))
	}
	l.privileges(f, path, proc)
	if v, ok := f.get("sidecar"); ok {
		proc.Sidecar, _ = l.boolean(v.val, path.field("sidecar"))
	}
	if v, ok := f.get("remain_after_exit"); ok {
		proc.RemainAfterExit = l.remainAfterExit(v.val, path.field("remain_after_exit"), proc)
	}
	var logNode *yaml.Node
	if v, ok := f.get("log"); ok {
		logNode = v.val
		if l.logNodes == nil {
			l.logNodes = map[string]*yaml.Node{}
		}
		l.logNodes[name] = v.val
	}
	proc.Log = l.processOutput(name, logNode, p.key, path.field("log"))
	if v, ok := f.get("sockets"); ok {
		proc.Sockets = l.sockets(name, v.val, path.field("sockets"))
	}
	if v, ok := f.get("reload"); ok {
		proc.Reload = l.reload(v.val, path.field("reload"))
	}
	l.terminal(f, proc, path)
	if v, ok := f.get("daemon"); ok {
		proc.Daemon = l.daemon(v.val, path.field("daemon"), proc)
	}
	if v, ok := f.get("resources"); ok {
		proc.Resources = l.resources(v.val, path.field("resources"))
	}
	if v, ok := f.get("fd_store_max"); ok {
		proc.FDStoreMax = l.fdStoreMax(v.val, path.field("fd_store_max"))
	}
	return proc, deps
}

func (l *loader) fdStoreMax(n *yaml.Node, path *keyPath) int {
	v, ok := l.integer(n, path)
	if ok && (v < 0 || v > MaxFDStore) {
		l.errorf(n, path, "fd_store_max %d is out of range 0-%d", v, MaxFDStore)
		return 0
	}
	return v
}

// command decodes an argv list, or a string run by /bin/sh -c. Both are
// interpolated; neither may be empty.
func (l *loader) command(n *yaml.Node, path *keyPath) (argv []string, shell, ok bool) {
	switch {
	case n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str":
		s, ok := l.noNUL(n, path, n.Value)
		if !ok {
			return nil, false, false
		}
		if s, ok = l.interp(n, path, s); !ok {
			return nil, false, false
		}
		if strings.TrimSpace(s) == "" {
			l.errorf(n, path, "command is empty")
			return nil, false, false
		}
		return []string{"/bin/sh", "-c", s}, true, true
	case n.Kind == yaml.SequenceNode:
		if len(n.Content) == 0 {
			l.errorf(n, path, "command is empty")
			return nil, false, false
		}
		argv = make([]string, 0, len(n.Content))
		ok = true
		for i, c := range n.Content {
			ipath := path.elem(i)
			s, good := l.text(c, ipath)
			if good {
				s, good = l.interp(c, ipath, s)
			}
			if good && i == 0 && strings.TrimSpace(s) == "" {
				l.errorf(c, ipath, "program name is empty")
				good = false
			}
			ok = ok && good
			argv = append(argv, s)
		}
		return argv, false, ok
	}
	l.errorf(n, path, "expected a string or a list of strings, got %s", describe(n))
	return nil, false, false
}

// path decodes an interpolated file system path; a relative one is resolved
// against the config file's directory.
func (l *loader) path(n *yaml.Node, path *keyPath) string {
	s, ok := l.str(n, path)
	if !ok {
		return ""
	}
	if s, ok = l.interp(n, path, s); !ok {
		return ""
	}
	if s == "" {
		l.errorf(n, path, "path is empty")
		return ""
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(l.dir, s)
	}
	return filepath.Clean(s)
}

// rootedDir decodes a working_dir inside a process's root: an absolute
// path there, taken as it is (the root resolves it when the process starts).
func (l *loader) rootedDir(n *yaml.Node, path *keyPath) string {
	s, ok := l.str(n, path)
	if !ok {
		return ""
	}
	if s, ok = l.interp(n, path, s); !ok {
		return ""
	}
	if !filepath.IsAbs(s) {
		l.errorf(n, path, "%q: with root, working_dir is a path inside the root and must be absolute", s)
		return ""
	}
	return filepath.Clean(s)
}

// nameLists decodes the process's lists of names: secret_env (variable
// names) and profiles.
func (l *loader) nameLists(f fieldSet, path *keyPath, proc *Process) {
	if v, ok := f.get("secret_env"); ok {
		proc.SecretEnv = l.nameList(v.val, path.field("secret_env"), "variable names,", validEnvName,
			"%q is not a variable name (letters, digits and _, not starting with a digit)")
	}
	if v, ok := f.get("profiles"); ok {
		proc.Profiles = l.nameList(v.val, path.field("profiles"), "profile names, such as [dev, debug],", ValidProfileName,
			"%q is not a profile name (2 to 63 letters, digits, _ . -, starting with a letter or digit)")
	}
}

// nameList decodes a list of names that valid accepts (bad: the error for
// one it does not, with %q), sorted, without duplicates.
func (l *loader) nameList(n *yaml.Node, path *keyPath, what string, valid func(string) bool, bad string) []string {
	if n.Kind != yaml.SequenceNode {
		l.errorf(n, path, "expected a list of %s got %s", what, describe(n))
		return nil
	}
	var out []string
	for _, item := range n.Content {
		name, ok := l.str(item, path)
		if !ok {
			continue
		}
		if !valid(name) {
			l.errorf(item, path, bad, name)
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// envFileList reads one env_file or a list of them, each relative to the
// config file's directory. Problems inside a file are reported at the
// env_file entry, with the env file's own line in the message.
func (l *loader) envFileList(n *yaml.Node, path *keyPath) [][]string {
	var items []*yaml.Node
	switch n.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{n}
	case yaml.SequenceNode:
		items = n.Content
	default:
		l.errorf(n, path, "expected a file name or a list of file names, got %s", describe(n))
		return nil
	}
	var out [][]string
	for _, item := range items {
		name, ok := l.str(item, path)
		if !ok {
			continue
		}
		if name == "" {
			l.errorf(item, path, "file name is empty")
			continue
		}
		abs := name
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(l.dir, abs)
		}
		if l.envFiles == nil {
			l.envFiles = map[string]envFileResult{}
		}
		res, seen := l.envFiles[abs]
		if !seen {
			res = readEnvFile(name, abs)
			l.envFiles[abs] = res
		}
		if res.err != nil {
			if !l.portable || !l.portableEnvFile(item, path, res.err) {
				l.errorf(item, path, "%s", res.err.Error())
			}
			continue
		}
		out = append(out, res.entries)
	}
	return out
}

// readEnvFile reads and parses one env file; name is how the config refers
// to it and prefixes the errors.
func readEnvFile(name, abs string) envFileResult {
	data, err := readRegularFile(abs, MaxFileSize)
	if err != nil {
		return envFileResult{err: &Error{Pos: Pos{File: name}, Msg: err.Error(), cause: err}}
	}
	entries, err := ParseEnvFile(name, data)
	return envFileResult{entries: entries, err: err}
}

func (l *loader) user(n *yaml.Node, path *keyPath) *User {
	spec, ok := l.text(n, path)
	if !ok {
		return nil
	}
	if l.users == nil {
		l.users = map[string]userResult{}
	}
	res, seen := l.users[spec]
	if !seen {
		res.user, res.err = resolveUser(spec)
		l.users[spec] = res
	}
	if res.err != nil {
		if !l.portable || !l.portableUser(n, path, spec, res.err) {
			l.errorf(n, path, "%s", res.err.Error())
		}
		return nil
	}
	u := *res.user
	u.Groups = slices.Clone(u.Groups)
	return &u
}
