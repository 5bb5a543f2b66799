package importer

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"golang.org/x/sys/unix"
)

// Options changes how some directives convert.
type Options struct {
	// PriorityOrder (supervisord) turns priority levels into `started`
	// dependencies: every program depends on each program of the next lower
	// priority level.
	PriorityOrder bool
	// ReleaseFirst (Procfile) makes every other process wait for the
	// release process to complete.
	ReleaseFirst bool
	// HasExecline tells the s6 converter whether execlineb is on this
	// machine (execline scripts are kept, with a note when it is not).
	HasExecline bool
	// ReadFile reads a file a unit names by its absolute path (systemd's
	// EnvironmentFile=), as the image sees it (import --root); nil: none
	// is read.
	ReadFile func(path string) (Source, error)
	// DotEnv (process-compose) is the .env file beside the file, which
	// process-compose loads into its environment; nil: none.
	DotEnv *Source
	// Root is import --root: the directory holding the image's root file
	// system; "": this machine's. The s6 tree is read under it and named by
	// the image's paths, and a supervisord [include] of an absolute path is
	// globbed under it.
	Root string
}

// IncludeFunc returns the files matching a glob pattern (an absolute or
// clean relative path), sorted by path; supervisord's [include] uses it.
type IncludeFunc func(pattern string) ([]Source, error)

// supervisordInclude is the IncludeFunc of import: an absolute pattern is
// globbed under opt.Root when one is given (a supervisord.conf written for
// the image names /etc/supervisor/conf.d/*.conf), else on this machine.
func supervisordInclude(opt Options) IncludeFunc {
	if opt.Root == "" || opt.ReadFile == nil {
		return includeGlob
	}
	top, err := filepath.Abs(opt.Root)
	if err != nil {
		return includeGlob
	}
	return func(pattern string) ([]Source, error) {
		if !path.IsAbs(pattern) || strings.HasPrefix(pattern, top+"/") {
			return includeGlob(pattern) // relative to the main file, which is read from here
		}
		rel, err := underRoot(top, pattern)
		if err != nil {
			return nil, err
		}
		root, err := os.OpenRoot(top)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		matches, err := fs.Glob(root.FS(), rel)
		if err != nil {
			return nil, err
		}
		sort.Strings(matches)
		var out []Source
		for _, m := range matches {
			if st, err := fs.Stat(root.FS(), m); err == nil && st.IsDir() {
				continue
			}
			src, err := opt.ReadFile("/" + m)
			if err != nil {
				return nil, err
			}
			out = append(out, src)
		}
		return out, nil
	}
}

// ConvertSupervisord converts a supervisord configuration: main, and the
// files its [include] section names, read through include.
func ConvertSupervisord(main Source, include IncludeFunc, opt Options) (*Model, *Report, error) {
	sections, err := parseINI(main)
	if err != nil {
		return nil, nil, err
	}
	r := &Report{}
	here := path.Dir(main.Path)
	var incErrs ParseErrors // syntax errors of included files, all reported
	for _, s := range sections {
		if s.Name != "include" {
			continue
		}
		k, ok := s.get("files")
		if !ok {
			r.Drop(at(s.File, s.Line), "[include]", "no files= key")
			continue
		}
		for _, pat := range strings.Fields(k.Value) {
			hasHere := strings.Contains(pat, "%(here)s")
			pat = strings.ReplaceAll(pat, "%(here)s", here)
			if !path.IsAbs(pat) && !hasHere {
				pat = path.Join(here, pat)
			}
			if include == nil {
				r.Fail(at(s.File, k.Line), "[include] files="+pat, "includes cannot be read here")
				continue
			}
			srcs, err := include(pat)
			if errors.Is(err, ErrOutsideRoot) {
				// as an EnvironmentFile= outside --root: not converted (exit 1)
				r.Fail(at(s.File, k.Line), "[include] files="+pat, err.Error())
				continue
			}
			if err != nil {
				return nil, nil, perr(s.File, k.Line, "include %s: %v", pat, err)
			}
			if len(srcs) == 0 {
				r.Drop(at(s.File, k.Line), "[include] files="+pat, "matches no file")
			}
			for _, src := range srcs {
				more, err := parseINI(src)
				if err != nil {
					incErrs = appendErr(incErrs, err)
					continue
				}
				r.AsIs(at(s.File, k.Line), "[include] "+src.Path)
				for _, m := range more {
					if m.Name == "include" {
						r.Drop(at(m.File, m.Line), "[include]", "supervisord reads [include] only in the main file")
						continue
					}
					sections = append(sections, m)
				}
			}
		}
	}
	if len(incErrs) > 0 {
		return nil, nil, incErrs.err()
	}
	c := &svConv{r: r, m: &Model{}, opt: opt}
	c.m.Header = []string{"Converted by podvisor import from supervisord: " + main.Path}
	c.convert(sections)
	finish(c.m, r)
	return c.m, r, nil
}

type svConv struct {
	r   *Report
	m   *Model
	opt Options
	// priority of each process, for PriorityOrder
	priority map[string]int
	groupOf  map[string]string  // program name -> group name
	env      map[string]svValue // [supervisord] environment=, for %(ENV_X)s
	retries  map[string]int     // startretries of each process
	// [supervisord] minfds and minprocs, as limits for every program
	minimums []svMinimum
	// listeners that stop supervisord: section -> the events they act on
	stoppers []svStopper
}

// sections supervisord itself configures, with why they are dropped.
var svDropped = map[string]string{
	"unix_http_server":     "podvisor's control socket replaces it (podvisor restart/stop/start/signal)",
	"inet_http_server":     "podvisor serves /status and /metrics on listen; changes go through the control socket",
	"supervisorctl":        "podvisor's own commands replace supervisorctl",
	"rpcinterface":         "podvisor has no XML-RPC interface",
	"eventlistener":        "podvisor has no event listeners; /status, /metrics and the logs carry the same news",
	"fcgi-program":         "supervisord passes the socket as the program's stdin (fd 0); podvisor's sockets: passes it as fd 3 with LISTEN_FDS: write a program with sockets: and a command that takes fd 3 (sh -c 'exec prog <&3')",
	"supervisord.logfile":  "podvisor prints its own messages on its stdout, among the processes' lines (as \"podvisor | message\")",
	"supervisord.pidfile":  "podvisor writes no pid file",
	"supervisord.nodaemon": "podvisor always runs in the foreground",
}

func (c *svConv) convert(sections []*iniSection) {
	c.priority = map[string]int{}
	c.groupOf = map[string]string{}
	c.env = map[string]svValue{}
	c.retries = map[string]int{}
	seen := map[string]*iniSection{}
	for _, s := range sections {
		if prev, dup := seen[s.Name]; dup {
			c.r.Approx(at(s.File, s.Line), "["+s.Name+"]", fmt.Sprintf("defined again (first at %s:%d); the keys of both are merged, later ones win", prev.File, prev.Line))
			prev.Keys = append(prev.Keys, s.Keys...)
			continue
		}
		seen[s.Name] = s
	}
	if s, ok := seen["supervisord"]; ok {
		c.supervisord(s) // read first, as supervisord does: programs expand its environment
	}
	for _, s := range sections {
		if seen[s.Name] != s {
			continue
		}
		kind, name, _ := strings.Cut(s.Name, ":")
		switch kind {
		case "include":
		case "supervisord":
		case "group":
			c.group(s, name)
		case "program":
			c.program(s, name)
		case "eventlistener":
			c.eventListener(s, name)
		default:
			why, ok := svDropped[kind]
			if !ok {
				why = "not a section supervisord knows; it ignores it"
			}
			c.r.Drop(at(s.File, s.Line), "["+s.Name+"]", why)
		}
	}
	uniqueNames(c.m, c.r)
	c.applyMinimums()
	c.applyStoppers()
	if c.opt.PriorityOrder {
		c.priorityOrder()
	}
}

func (c *svConv) supervisord(s *iniSection) {
	for _, k := range s.Keys {
		pos := at(s.File, k.Line)
		switch k.Name {
		case "environment":
			env, err := c.environment(k.Value, svExpand{here: path.Dir(s.File)}, c.env)
			if err != nil {
				c.r.Fail(pos, "[supervisord] environment", err.Error())
				continue
			}
			c.m.Env = append(c.m.Env, env...)
			c.r.AsIs(pos, "[supervisord] environment")
		case "nodaemon", "logfile", "pidfile":
			c.r.Drop(pos, "[supervisord] "+k.Name, svDropped["supervisord."+k.Name])
		case "minfds", "minprocs":
			c.minimum(pos, k)
		default:
			c.r.Drop(pos, "[supervisord] "+k.Name, "a setting of supervisord itself, with no podvisor equivalent")
		}
	}
}

func (c *svConv) group(s *iniSection, name string) {
	pk, _ := s.get("programs")
	var progs []string
	for _, p := range strings.Split(pk.Value, ",") {
		if p = strings.TrimSpace(p); p != "" {
			progs = append(progs, p)
			c.groupOf[p] = name
		}
	}
	c.r.Approx(at(s.File, s.Line), "[group:"+name+"]", "podvisor has no groups: "+strings.Join(progs, ", ")+
		" keep their own names (supervisorctl's "+name+":* becomes one podvisor command per name)")
	if k, ok := s.get("priority"); ok && !c.opt.PriorityOrder {
		c.r.Drop(at(s.File, k.Line), "[group:"+name+"] priority", "start order comes from depends_on; --priority-order turns priorities into dependencies")
	}
}

// svPiece is a piece of an expanded value: literal text, or (env set) a
// variable of supervisord's environment that only run time knows.
type svPiece struct{ text, env string }

// svValue is an expanded value.
type svValue []svPiece

// runtime reports whether v needs a variable's value at run time.
func (v svValue) runtime() []string {
	var names []string
	for _, p := range v {
		if p.env != "" {
			names = append(names, p.env)
		}
	}
	return names
}

// literal is v's text when it needs no run-time variable.
func (v svValue) literal() (string, bool) {
	var b strings.Builder
	for _, p := range v {
		if p.env != "" {
			return "", false
		}
		b.WriteString(p.text)
	}
	return b.String(), true
}

// podvisor writes v in podvisor's syntax: run-time variables as ${X}, read
// at load from podvisor's environment as supervisord reads them from its
// own at start; each $ podvisor would read in the literal text escaped.
func (v svValue) podvisor() string {
	var b strings.Builder
	for i, p := range v {
		if p.env != "" {
			b.WriteString("${" + p.env + "}")
			continue
		}
		b.WriteString(escapeDollars(p.text, i+1 < len(v)))
	}
	return b.String()
}

// svExpand holds the values of supervisord's %(name)s expansions.
type svExpand struct {
	programName, groupName, here string
	processNum, numprocs         int
	// env holds the variables the file itself sets ([supervisord] and the
	// program's environment=): supervisord (4.2 on) expands %(ENV_X)s of
	// those to their values, the others from its environment at start.
	env map[string]svValue
}

var svExpansion = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%%|%\(([A-Za-z0-9_]+)\)([-#0 +]*[0-9]*)([sdir])`) })

// expand applies supervisord's expansions, writing the result in
// podvisor's syntax (svValue.podvisor).
func (e svExpand) expand(s string) (string, error) {
	v, err := e.value(s)
	return v.podvisor(), err
}

// value applies supervisord's expansions to s.
func (e svExpand) value(s string) (svValue, error) {
	var (
		out     svValue
		lastEnd int
		err     error
	)
	lit := func(t string) {
		if n := len(out); n > 0 && out[n-1].env == "" {
			out[n-1].text += t
		} else if t != "" {
			out = append(out, svPiece{text: t})
		}
	}
	for _, m := range svExpansion().FindAllStringSubmatchIndex(s, -1) {
		lit(s[lastEnd:m[0]])
		lastEnd = m[1]
		if s[m[0]:m[1]] == "%%" {
			lit("%")
			continue
		}
		name, flags, verb := s[m[2]:m[3]], s[m[4]:m[5]], s[m[6]:m[7]]
		var val any
		switch {
		case strings.HasPrefix(name, "ENV_"):
			v := strings.TrimPrefix(name, "ENV_")
			if known, ok := e.env[v]; ok {
				for _, p := range known {
					if p.env != "" {
						out = append(out, p)
					} else {
						lit(p.text)
					}
				}
			} else if config.ValidEnvName(v) {
				out = append(out, svPiece{env: v})
			} else {
				err = fmt.Errorf("%%(%s)s: %q is not a variable name", name, v)
			}
			continue
		case name == "program_name":
			val = e.programName
		case name == "group_name":
			val = e.groupName
		case name == "here":
			val = e.here
		case name == "process_num":
			val = e.processNum
		case name == "numprocs":
			val = e.numprocs
		case name == "host_node_name":
			out = append(out, svPiece{env: "HOSTNAME"})
			continue
		default:
			err = fmt.Errorf("unknown expansion %%(%s)%s", name, verb)
			continue
		}
		if verb != "s" {
			verb = "d"
			if _, ok := val.(int); !ok {
				err = fmt.Errorf("%%(%s)%s%s needs a number", name, flags, verb)
				continue
			}
		}
		lit(fmt.Sprintf("%"+flags+verb, val))
	}
	lit(s[lastEnd:])
	return out, err
}

// escapeDollars escapes each $ that podvisor would interpret: one before
// { or $, and one at the end when more follows (it could start with {).
func escapeDollars(s string, more bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte(s[i])
		if s[i] == '$' && ((i+1 == len(s) && more) || (i+1 < len(s) && (s[i+1] == '{' || s[i+1] == '$'))) {
			b.WriteByte('$')
		}
	}
	return b.String()
}

// environment parses KEY="value",KEY2=value2 (values may be quoted, with
// commas inside quotes), and records each expanded value in set.
func (c *svConv) environment(v string, e svExpand, set map[string]svValue) ([]string, error) {
	var out []string
	var cur strings.Builder
	var parts []string
	quote := byte(0)
	for i := 0; i < len(v); i++ {
		ch := v[i]
		switch {
		case quote != 0 && ch == quote:
			quote = 0
		case quote == 0 && (ch == '"' || ch == '\''):
			quote = ch
		case quote == 0 && ch == ',':
			parts = append(parts, cur.String())
			cur.Reset()
			continue
		case quote == 0 && ch == '\n':
			continue
		}
		cur.WriteByte(ch)
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote in %q", v)
	}
	parts = append(parts, cur.String())
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, val, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || !config.ValidEnvName(k) {
			return nil, fmt.Errorf("%q is not KEY=value", p)
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && (val[0] == '"' || val[0] == '\'') && val[len(val)-1] == val[0] {
			val = val[1 : len(val)-1]
		}
		x, err := e.value(val)
		if err != nil {
			return nil, err
		}
		set[k] = x
		out = append(out, envEntry(k, x.podvisor()))
	}
	return out, nil
}

// program keys handled by program(); any other key supervisord ignores.
var svProgramKeys = []string{"command", "process_name", "numprocs", "numprocs_start", "priority",
	"autostart", "startsecs", "startretries", "autorestart", "exitcodes", "stopsignal",
	"stopwaitsecs", "stopasgroup", "killasgroup", "user", "redirect_stderr", "stdout_logfile",
	"stdout_logfile_maxbytes", "stdout_logfile_backups", "stdout_capture_maxbytes",
	"stdout_events_enabled", "stdout_syslog", "stderr_logfile", "stderr_logfile_maxbytes",
	"stderr_logfile_backups", "stderr_capture_maxbytes", "stderr_events_enabled", "stderr_syslog",
	"environment", "directory", "umask", "serverurl"}

func (c *svConv) program(s *iniSection, name string) {
	r := c.r
	where := func(k iniKey) string { return at(s.File, k.Line) }
	get := func(key string) (iniKey, bool) { return s.get(key) }
	for _, k := range s.Keys {
		if !slices.Contains(svProgramKeys, k.Name) {
			why := "supervisord does not know this key and ignores it"
			if sug := config.Suggest(k.Name, svProgramKeys); sug != "" {
				why += fmt.Sprintf(" (a typo of %s? its value was not converted)", sug)
			}
			r.Drop(where(k), "[program:"+name+"] "+k.Name, why)
		}
	}
	cmdKey, ok := get("command")
	if !ok {
		r.Fail(at(s.File, s.Line), "[program:"+name+"]", "no command= (supervisord refuses this too); add the command")
		return
	}
	if k, ok := get("autostart"); ok {
		if v, ok := parseBool(k.Value); ok && !v {
			r.Drop(where(k), "[program:"+name+"]", "autostart=false: podvisor starts every process it lists, and this one was started by hand (supervisorctl start); add it to processes when it should run")
			return
		}
	}
	numprocs, start := 1, 0
	if k, ok := get("numprocs"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(k.Value))
		if err != nil || n < 1 || n > 1000 {
			r.Fail(where(k), "[program:"+name+"] numprocs", fmt.Sprintf("%q is not a number from 1 to 1000", k.Value))
			return
		}
		numprocs = n
		r.AsIs(where(k), "[program:"+name+"] numprocs")
	}
	if k, ok := get("numprocs_start"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(k.Value))
		if err != nil || n < 0 {
			r.Fail(where(k), "[program:"+name+"] numprocs_start", fmt.Sprintf("%q is not a number ≥ 0", k.Value))
			return
		}
		start = n
	}
	pnameTpl := "%(program_name)s"
	if k, ok := get("process_name"); ok {
		pnameTpl = k.Value
	}
	if numprocs > 1 && !strings.Contains(pnameTpl, "%(process_num)") {
		r.Fail(at(s.File, s.Line), "[program:"+name+"] process_name", "numprocs > 1 needs %(process_num)s in process_name (supervisord refuses the program too); add process_name=%(program_name)s_%(process_num)02d")
		return
	}
	for num := start; num < start+numprocs; num++ {
		e := svExpand{programName: name, groupName: name, here: path.Dir(s.File), processNum: num, numprocs: numprocs, env: maps.Clone(c.env)}
		if g, ok := c.groupOf[name]; ok {
			e.groupName = g
		}
		pname, err := e.expand(pnameTpl)
		if err != nil {
			r.Fail(at(s.File, s.Line), "[program:"+name+"] process_name", err.Error())
			return
		}
		p := newProcess(sanitizeName(pname), fmt.Sprintf("%s:%d [program:%s]", s.File, s.Line, name))
		if p.Name != pname {
			note(p, r, at(s.File, s.Line), "name", "renamed from "+pname+" (podvisor names are A-Za-z0-9_.-)")
		}
		if !c.programKeys(s, name, e, p, cmdKey) {
			return
		}
		c.m.Processes = append(c.m.Processes, p)
		prio := 999
		if k, ok := get("priority"); ok {
			if n, err := strconv.Atoi(strings.TrimSpace(k.Value)); err == nil {
				prio = n
			}
		}
		c.priority[p.Name] = prio
	}
}

// programKeys converts one copy of a program; false when it failed.
func (c *svConv) programKeys(s *iniSection, name string, e svExpand, p *Process, cmdKey iniKey) bool {
	if !c.programRun(s, name, e, p, cmdKey) || !c.programRestart(s, name, p) || !c.programStop(s, name, p) {
		return false
	}
	c.programRest(s, name, e, p)
	return true
}

// programReaders returns what each step of a program reads its keys with:
// the section's name for the report, a key's position, a key by name.
func programReaders(s *iniSection, name string) (sec string, where func(iniKey) string, get func(string) (iniKey, bool)) {
	sec = "[program:" + name + "] "
	where = func(k iniKey) string { return at(s.File, k.Line) }
	return sec, where, s.get
}

// progNote records an approximation of a program's key: a comment beside
// key in each copy, one report entry for the section (numprocs copies say
// the same thing once).
func progNote(p *Process, r *Report, sec, pos, key, how string) {
	p.Comment(key, how)
	r.approxBeside(pos, sec+key, how)
}

// programRun converts the command and what it runs with: environment
// (first: the other keys may expand its variables), directory, user.
func (c *svConv) programRun(s *iniSection, name string, e svExpand, p *Process, cmdKey iniKey) bool {
	r := c.r
	sec, where, get := programReaders(s, name)
	var err error
	if k, ok := get("environment"); ok {
		if p.Env, err = c.environment(k.Value, e, e.env); err != nil {
			r.Fail(where(k), sec+"environment", err.Error())
			return false
		}
		r.AsIs(where(k), sec+"environment")
	}
	if !c.command(s, name, e, p, cmdKey) {
		return false
	}
	if k, ok := get("directory"); ok {
		if p.WorkingDir, err = e.expand(k.Value); err != nil {
			r.Fail(where(k), sec+"directory", err.Error())
			return false
		}
		if path.IsAbs(p.WorkingDir) {
			p.WorkingDir = path.Clean(p.WorkingDir)
		}
		r.AsIs(where(k), sec+"directory")
	}
	if k, ok := get("user"); ok {
		v, ok := c.literal(s, sec, e, k)
		if !ok {
			return false
		}
		p.User = user(strings.TrimSpace(v))
		r.AsIs(where(k), sec+"user")
	}
	return true
}

// literal is key k's value expanded, for a key podvisor reads as written
// (no ${X}): a variable only run time knows fails it.
func (c *svConv) literal(s *iniSection, sec string, e svExpand, k iniKey) (string, bool) {
	v, err := e.value(k.Value)
	if err == nil {
		if lit, ok := v.literal(); ok {
			return lit, true
		}
		err = fmt.Errorf("needs %s from supervisord's environment at start, and podvisor reads this key as written (no ${X}); write the value", strings.Join(v.runtime(), ", "))
	}
	c.r.Fail(at(s.File, k.Line), sec+k.Name, err.Error())
	return "", false
}

// command converts command=. supervisord expands it, then splits it into
// words (shlex): a run-time variable's value is split too, so a command
// holding one runs under /bin/sh -c, which splits podvisor's expansion of
// ${X} as shlex would (said: the shell also reads $, `, ; and the like in
// the value).
func (c *svConv) command(s *iniSection, name string, e svExpand, p *Process, cmdKey iniKey) bool {
	sec, pos := "[program:"+name+"] ", at(s.File, cmdKey.Line)
	v, err := e.value(cmdKey.Value)
	if err == nil {
		if lit, ok := v.literal(); ok {
			var words []string
			words, err = splitWords(lit)
			for _, w := range words {
				p.Command = append(p.Command, escapeDollars(w, false))
			}
		} else {
			var sh string
			if sh, err = svShell(v); err == nil {
				setShell(&p.Command, &p.Shell, "exec "+sh)
				progNote(p, c.r, sec, pos, "command", "supervisord splits command= into words after expanding "+
					strings.Join(v.runtime(), ", ")+"; /bin/sh -c splits podvisor's ${X} the same way (and also reads shell characters such as ; | * $ in the value)")
			}
		}
	}
	if err != nil || emptyCommand(p.Command, p.Shell) {
		if err == nil {
			err = fmt.Errorf("is empty")
		}
		c.r.Fail(pos, sec+"command", err.Error())
		return false
	}
	if !p.Shell {
		c.r.AsIs(pos, sec+"command")
	}
	return true
}

// svShell writes an expanded command as a shell command line with the
// words shlex would find in it: the literal text quoted for the shell
// where the shell would read it differently, each run-time variable as
// ${X} in the same quoting context, so that its value is split as
// supervisord splits it.
func svShell(v svValue) (string, error) {
	var b strings.Builder
	quote := byte(0) // ', " or 0
	for i, p := range v {
		if p.env != "" {
			b.WriteString("${" + p.env + "}")
			continue
		}
		var t strings.Builder
		for j := 0; j < len(p.text); j++ {
			ch := p.text[j]
			switch {
			case quote == '\'':
				if ch == '\'' {
					quote = 0
				}
			case ch == '\\':
				t.WriteByte(ch)
				if j+1 < len(p.text) {
					j++
					ch = p.text[j]
				}
			case quote == '"':
				if ch == '"' {
					quote = 0
				} else if ch == '$' || ch == '`' {
					t.WriteByte('\\')
				}
			case ch == '"' || ch == '\'':
				quote = ch
			case !svShellPlain(ch):
				t.WriteByte('\\')
			}
			t.WriteByte(ch)
		}
		b.WriteString(escapeDollars(t.String(), i+1 < len(v)))
	}
	if quote != 0 {
		return "", fmt.Errorf("unterminated %c quote", quote)
	}
	return b.String(), nil
}

// svShellPlain reports whether the shell reads ch, outside quotes, as
// shlex does: a plain character or a blank.
func svShellPlain(ch byte) bool {
	return ch == ' ' || ch == '\t' || ch == '\n' || ch >= 0x80 ||
		'a' <= ch && ch <= 'z' || 'A' <= ch && ch <= 'Z' || '0' <= ch && ch <= '9' ||
		strings.IndexByte("-_./=:,+@%^", ch) >= 0
}

// programRestart converts exitcodes, autorestart, startretries and
// startsecs.
func (c *svConv) programRestart(s *iniSection, name string, p *Process) bool {
	r := c.r
	sec, where, get := programReaders(s, name)
	// autorestart, exitcodes
	codes := []int{0}
	if k, ok := get("exitcodes"); ok {
		codes = nil
		for _, f := range strings.Split(k.Value, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 0 || n > 255 {
				r.Fail(where(k), sec+"exitcodes", fmt.Sprintf("%q is not a list of exit codes", k.Value))
				return false
			}
			codes = append(codes, n)
		}
		r.AsIs(where(k), sec+"exitcodes")
	}
	policy, pos := "unexpected", at(s.File, s.Line) // the default: the section's line
	if k, ok := get("autorestart"); ok {
		pos = where(k)
		v := strings.ToLower(strings.TrimSpace(k.Value))
		if b, ok := parseBool(v); ok {
			policy = map[bool]string{true: "true", false: "false"}[b]
		} else if v != "unexpected" {
			r.Fail(where(k), sec+"autorestart", fmt.Sprintf("%q: want true, false or unexpected", k.Value))
			return false
		}
	}
	switch policy {
	case "true":
		setRestart(p, config.Always)
		r.AsIs(pos, sec+"autorestart=true")
	case "false":
		setRestart(p, config.Never)
		p.RemainAfterExit = true // an expected exit leaves it EXITED, nothing amiss
		progNote(p, r, sec, pos, "restart", "autorestart=false; supervisord leaves a failed program exited, podvisor tears the pod down when a restart: never service fails")
	default:
		setRestart(p, config.OnFailure)
		p.RemainAfterExit = true // an expected exit leaves it EXITED, nothing amiss
		r.AsIs(pos, sec+"autorestart=unexpected")
	}
	if !slices.Equal(codes, []int{0}) {
		p.SuccessExitCodes = codes
	}
	c.retries[p.Name] = 3 // supervisord's default
	if k, ok := get("startretries"); ok {
		if n, err := strconv.Atoi(strings.TrimSpace(k.Value)); err == nil && n >= 0 {
			c.retries[p.Name] = n
		}
		progNote(p, r, sec, where(k), "restart", "startretries="+strings.TrimSpace(k.Value)+" counts failed starts in a row, podvisor's restart.limit every restart of the process's life, so it is not set: podvisor retries with backoff (500ms doubling to 30s) without a count")
	}
	if k, ok := get("startsecs"); ok {
		d, ok := parseSeconds(k.Value)
		if !ok {
			r.Fail(where(k), sec+"startsecs", fmt.Sprintf("%q is not a number of seconds", k.Value))
			return false
		}
		if d > 0 {
			p.Ready = &Probe{Kind: config.ProbeExec, Command: []string{"true"}, InitialDelay: d}
			progNote(p, r, sec, where(k), "ready", fmt.Sprintf("startsecs=%s: ready once it has stayed up %s (a probe that always succeeds, first run after %s)", strings.TrimSpace(k.Value), config.FormatDuration(d), config.FormatDuration(d)))
		}
	}
	return true
}

// programStop converts stopsignal, stopwaitsecs, stopasgroup and
// killasgroup.
func (c *svConv) programStop(s *iniSection, name string, p *Process) bool {
	r := c.r
	sec, where, get := programReaders(s, name)
	if k, ok := get("stopsignal"); ok {
		sig := signalName(k.Value)
		switch sig {
		case "":
			r.Fail(where(k), sec+"stopsignal", fmt.Sprintf("%q is not a signal", k.Value))
			return false
		case "SIGKILL":
			setStopTimeout(p, 0)
			progNote(p, r, sec, where(k), "stop", "stopsignal=KILL: podvisor sends SIGTERM, then SIGKILL at once (timeout 0s)")
		default:
			p.Stop.Signal = unix.SignalNum(sig)
			r.AsIs(where(k), sec+"stopsignal")
		}
	}
	if k, ok := get("stopwaitsecs"); ok && !p.Written.StopTimeout {
		d, ok := parseSeconds(k.Value)
		if !ok {
			r.Fail(where(k), sec+"stopwaitsecs", fmt.Sprintf("%q is not a number of seconds", k.Value))
			return false
		}
		setStopTimeout(p, d)
		r.AsIs(where(k), sec+"stopwaitsecs")
	}
	for _, key := range []string{"stopasgroup", "killasgroup"} {
		if k, ok := get(key); ok {
			if v, _ := parseBool(k.Value); v {
				r.AsIs(where(k), sec+key+" (podvisor always signals the process group)")
			} else {
				progNote(p, r, sec, where(k), "stop", key+"=false: podvisor signals the whole process group, not only the program")
			}
		}
	}
	return true
}

// programRest converts priority and the log keys, and reports the keys
// podvisor has no use for.
func (c *svConv) programRest(s *iniSection, name string, e svExpand, p *Process) {
	r := c.r
	sec, where, get := programReaders(s, name)
	if k, ok := get("priority"); ok && !c.opt.PriorityOrder {
		r.Drop(where(k), sec+"priority", "start order comes from depends_on; --priority-order turns priorities into started dependencies")
	} else if ok {
		r.Approx(where(k), sec+"priority", "became started dependencies on the next lower priority level (--priority-order)")
	}
	c.logKeys(s, sec, e, p)
	for _, key := range []string{"umask", "serverurl", "stdout_capture_maxbytes", "stderr_capture_maxbytes",
		"stdout_events_enabled", "stderr_events_enabled", "stdout_syslog", "stderr_syslog"} {
		if k, ok := get(key); ok {
			why := map[string]string{
				"umask":     "podvisor does not set a umask; set it in the command (sh -c 'umask 022; exec ...')",
				"serverurl": "podvisor has no XML-RPC server for processes to call",
			}[key]
			if why == "" {
				why = "events and syslog have no podvisor equivalent; output goes to podvisor's stdout"
			}
			r.Drop(where(k), sec+key, why)
		}
	}
}

// logKeys converts the log settings: a file becomes the process's log
// file (rotated by size, as supervisord rotates it), /dev/stdout the
// default (podvisor's stdout), NONE "off".
func (c *svConv) logKeys(s *iniSection, sec string, e svExpand, p *Process) {
	r := c.r
	redirect := false
	if k, ok := s.get("redirect_stderr"); ok {
		redirect, _ = parseBool(k.Value)
		if redirect {
			r.AsIs(at(s.File, k.Line), sec+"redirect_stderr (stderr goes where stdout goes)")
		}
	}
	for _, stream := range []string{"stdout", "stderr"} {
		k, ok := s.get(stream + "_logfile")
		if !ok || (stream == "stderr" && redirect) {
			continue
		}
		v, ok := c.literal(s, sec, e, k)
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		pos := at(s.File, k.Line)
		switch strings.ToLower(v) {
		case "/dev/stdout", "/dev/fd/1", "/proc/self/fd/1":
			r.AsIs(pos, sec+k.Name+"="+v+" (podvisor prints it on its stdout as \"name | line\")")
			c.unrotated(s, sec, stream)
		case "/dev/stderr", "/dev/fd/2", "/proc/self/fd/2":
			progNote(p, r, sec, pos, "log", k.Name+"="+v+": podvisor prints the "+stream+" lines on its own stdout (stream "+stream+" in --log-format json)")
			c.unrotated(s, sec, stream)
		case "auto", "":
			progNote(p, r, sec, pos, "log", k.Name+"="+v+": supervisord wrote a file it named itself; podvisor prints the lines on its stdout")
			c.unrotated(s, sec, stream)
		case "none":
			if stream == "stdout" {
				p.Log.Stdout = config.DestOff
			} else {
				p.Log.Stderr = config.DestOff
			}
			r.AsIs(pos, sec+k.Name+"=NONE (log."+stream+": off)")
		default:
			if dirLike(v) {
				r.Fail(pos, sec+k.Name, fmt.Sprintf("%q is a directory; name the file, such as app.log", v))
				continue
			}
			l := &p.Log
			if stream == "stdout" {
				l.Stdout, l.File = config.DestFile, v
				if redirect {
					l.Stderr = config.DestFile // merged into the same file
				}
			} else {
				l.Stderr = config.DestFile
				if v != l.File {
					l.StderrFile = v
				}
			}
			r.AsIs(pos, sec+k.Name+" (log."+map[string]string{"stdout": "file", "stderr": "stderr_file"}[stream]+")")
			c.rotation(s, sec, stream, p)
		}
	}
}

// unrotated reports the rotation keys of a stream that podvisor prints on
// its stdout, which it never rotates: 0 (supervisord's "never") as is.
func (c *svConv) unrotated(s *iniSection, sec, stream string) {
	for _, key := range []string{stream + "_logfile_maxbytes", stream + "_logfile_backups"} {
		k, ok := s.get(key)
		if !ok {
			continue
		}
		if n, ok := parseByteSize(k.Value); ok && n == 0 {
			c.r.AsIs(at(s.File, k.Line), sec+key+"=0 (podvisor's stdout is not rotated)")
		} else {
			c.r.Drop(at(s.File, k.Line), sec+key, "podvisor's stdout is not rotated")
		}
	}
}

// rotation converts *_logfile_maxbytes and *_logfile_backups. podvisor
// has one max_size and max_files per process: stdout's win when both
// streams set them.
func (c *svConv) rotation(s *iniSection, sec, stream string, p *Process) {
	r, l := c.r, &p.Log
	if k, ok := s.get(stream + "_logfile_maxbytes"); ok {
		n, ok := parseByteSize(k.Value)
		switch {
		case !ok:
			r.Fail(at(s.File, k.Line), k.Name, fmt.Sprintf("%q is not a size (want bytes, KB, MB or GB)", k.Value))
		case l.MaxSize > 0 && l.MaxSize != n:
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"="+k.Value+": podvisor has one max_size per process; stdout's is kept")
		case n == 0:
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"=0: supervisord never rotated this file; podvisor rotates at its default max_size (10MiB)")
		case n < 1<<20:
			l.MaxSize = 1 << 20
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"="+k.Value+": podvisor's smallest max_size is 1MiB")
		default:
			l.MaxSize = n
			r.AsIs(at(s.File, k.Line), sec+k.Name+" (log.max_size)")
		}
	}
	if k, ok := s.get(stream + "_logfile_backups"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(k.Value))
		files := n + 1 // podvisor counts the current file
		switch {
		case err != nil || n < 0:
			r.Fail(at(s.File, k.Line), k.Name, fmt.Sprintf("%q is not a number of backups", k.Value))
		case l.MaxFiles > 0 && l.MaxFiles != files:
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"="+k.Value+": podvisor has one max_files per process; stdout's is kept")
		case files < 2:
			l.MaxFiles = 2
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"=0: supervisord kept no rotated file; podvisor keeps at least one (max_files: 2)")
		case files > 1000:
			l.MaxFiles = 1000
			progNote(p, r, sec, at(s.File, k.Line), "log", k.Name+"="+k.Value+": podvisor keeps at most 1000 files")
		default:
			l.MaxFiles = files
			r.AsIs(at(s.File, k.Line), sec+k.Name+" (log.max_files, the current file counted)")
		}
	}
}

// parseByteSize reads supervisord's sizes: bytes, or a number with KB, MB
// or GB (powers of 1024, as supervisord computes them).
func parseByteSize(v string) (int64, bool) {
	v = strings.ToUpper(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		m      int64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"KB", 1 << 10}} {
		if strings.HasSuffix(v, u.suffix) {
			v, mult = strings.TrimSpace(strings.TrimSuffix(v, u.suffix)), u.m
			break
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > (1<<50)/mult {
		return 0, false
	}
	return n * mult, true
}

// priorityOrder makes each process depend (started) on every process of
// the next lower priority level: supervisord starts lower priorities first
// and stops them last, which podvisor's dependency order then reproduces.
func (c *svConv) priorityOrder() {
	var levels []int
	byLevel := map[int][]string{}
	for _, p := range c.m.Processes {
		pr := c.priority[p.Name]
		if _, ok := byLevel[pr]; !ok {
			levels = append(levels, pr)
		}
		byLevel[pr] = append(byLevel[pr], p.Name)
	}
	sort.Ints(levels)
	for i := 1; i < len(levels); i++ {
		below := byLevel[levels[i-1]]
		for _, name := range byLevel[levels[i]] {
			p := c.m.Process(name)
			for _, b := range below {
				p.DependsOn = append(p.DependsOn, Dep{Name: b, Condition: graph.Started})
			}
			setComment(p, "depends_on", fmt.Sprintf("priority %d starts after priority %d (--priority-order)", levels[i], levels[i-1]))
		}
	}
}

// svStopper is an event listener that stops supervisord: on FATAL (a
// program that failed its starts), on EXITED (any exit of a program).
type svStopper struct {
	pos, section  string
	fatal, exited bool
}

// svStopCommand matches a listener command that stops supervisord: a kill
// (of $PPID, of supervisord) or supervisorctl shutdown, inline or by the
// name of its script (kill_supervisor.py, stop-supervisor.sh).
var svStopCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\bkill|shutdown|stop[-_]?supervisor`)
})

// eventListener reads an [eventlistener:x]: one whose command stops
// supervisord on a program's FATAL or EXITED state becomes, on every
// program, the rule that ends the run (applyStoppers); any other is
// dropped.
func (c *svConv) eventListener(s *iniSection, name string) {
	sec, pos := "[eventlistener:"+name+"]", at(s.File, s.Line)
	cmd, _ := s.get("command")
	ev, _ := s.get("events")
	st := svStopper{pos: pos, section: sec}
	for _, e := range strings.Split(ev.Value, ",") {
		switch strings.ToUpper(strings.TrimSpace(e)) {
		case "PROCESS_STATE":
			st.fatal, st.exited = true, true
		case "PROCESS_STATE_FATAL":
			st.fatal = true
		case "PROCESS_STATE_EXITED":
			st.exited = true
		}
	}
	if !svStopCommand().MatchString(cmd.Value) || (!st.fatal && !st.exited) {
		c.r.Drop(pos, sec, svDropped["eventlistener"])
		return
	}
	c.stoppers = append(c.stoppers, st)
}

// applyStoppers gives every program the rules of the listeners that stop
// supervisord: EXITED ends the run on any exit (restart.rules action
// shutdown for every code); FATAL after startretries failed starts
// (restart.limit, counted over the process's life).
func (c *svConv) applyStoppers() {
	for _, st := range c.stoppers {
		var how []string
		if st.exited {
			how = append(how, "on PROCESS_STATE_EXITED it stops supervisord, so any exit of a program ends the run: restart.rules action shutdown for every exit code; podvisor then exits with that program's code, supervisord (stopped by a signal) with 0")
		}
		if st.fatal && !st.exited {
			how = append(how, "on PROCESS_STATE_FATAL (startretries failed starts in a row) it stops supervisord: restart.limit is startretries, after which a failure ends the run; podvisor counts every restart of the process's life, not failed starts in a row")
		}
		c.r.Approx(st.pos, st.section, strings.Join(how, "; ")+" (its command kills supervisord or shuts it down)")
		for _, p := range c.m.Processes {
			if st.exited {
				p.Restart.Rules = []config.ExitRule{{In: []int{0}, Action: config.RuleShutdown}, {NotIn: []int{0}, Action: config.RuleShutdown}}
				p.Written.Restart = true
				addComment(p, "restart", st.section+" stops supervisord when a program exits: any exit ends the run")
			} else if st.fatal {
				p.Restart.Limit = max(c.retries[p.Name], 1)
				p.Written.Restart = true
				addComment(p, "restart", st.section+" stops supervisord when a program is FATAL (startretries="+strconv.Itoa(c.retries[p.Name])+" failed starts in a row): limit counts restarts over the process's life")
			}
		}
	}
}

// addComment adds how to the comment beside key.
func addComment(p *Process, key, how string) {
	if old := p.Written.Comments[key]; old != "" {
		how = old + "; " + how
	}
	setComment(p, key, how)
}
