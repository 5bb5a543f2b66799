package importer

import (
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"golang.org/x/sys/unix"
)

// unitFile is one parsed systemd unit.
type unitFile struct {
	name string // "web" for web.service
	src  Source
	sec  map[string][]iniKey // by section, every assignment in order
	typ  string
	// unit is the file's name without .service (x@inst for an instance);
	// prefix and instance are its parts around the @ of a template unit.
	unit, prefix, instance string
}

// parseUnit reads systemd's unit syntax: [Section], Key=Value, comments
// with # or ;, a trailing backslash continues the line, keys repeat.
func parseUnit(src Source) (map[string][]iniKey, error) {
	out := map[string][]iniKey{}
	cur := ""
	var errs ParseErrors
	ls := lines(src.Data)
	for i := 0; i < len(ls); i++ {
		n := i + 1
		t := strings.TrimSpace(ls[i])
		for strings.HasSuffix(t, "\\") && i+1 < len(ls) {
			i++
			next := strings.TrimSpace(ls[i])
			if next != "" && (next[0] == '#' || next[0] == ';') {
				continue
			}
			t = strings.TrimSuffix(t, "\\") + " " + next
		}
		if t == "" || t[0] == '#' || t[0] == ';' {
			continue
		}
		if t[0] == '[' {
			if !strings.HasSuffix(t, "]") {
				errs = append(errs, perr(src.Path, n, "section header %q has no closing ]", t))
				cur = ""
				continue
			}
			cur = t[1 : len(t)-1]
			continue
		}
		k, v, ok := strings.Cut(t, "=")
		if !ok {
			errs = append(errs, perr(src.Path, n, "line %q is not Key=Value", t))
			continue
		}
		if cur == "" {
			errs = append(errs, perr(src.Path, n, "assignment %q before the first [section]", t))
			continue
		}
		out[cur] = append(out[cur], iniKey{Name: strings.TrimSpace(k), Value: strings.TrimSpace(v), Line: n, File: src.Path})
	}
	if len(errs) > 0 {
		return nil, errs.err()
	}
	return out, nil
}

// ConvertSystemd converts service units (several files: one process each,
// and dependencies among them).
func ConvertSystemd(units []Source, opt Options) (*Model, *Report, error) {
	r := &Report{}
	m := &Model{}
	var names []string
	var files []*unitFile
	var dropins []Source
	var sockets []*unitFile
	var allErrs ParseErrors
	for _, u := range units {
		base := path.Base(u.Path)
		if strings.HasSuffix(path.Dir(u.Path), ".service.d") && strings.HasSuffix(base, ".conf") {
			dropins = append(dropins, u)
			continue
		}
		ext := path.Ext(base)
		if ext == ".socket" {
			sec, err := parseUnit(u)
			if err != nil {
				allErrs = appendErr(allErrs, err)
				continue
			}
			sockets = append(sockets, &unitFile{name: strings.TrimSuffix(base, ext), src: u, sec: sec})
			names = append(names, base)
			continue
		}
		if ext != ".service" {
			r.Drop(u.Path, base, "only .service units become processes and .socket units their sockets (targets, timers, mounts have no podvisor equivalent)")
			continue
		}
		sec, err := parseUnit(u)
		if err != nil {
			allErrs = appendErr(allErrs, err)
			continue
		}
		f := &unitFile{name: strings.TrimSuffix(base, ext), src: u, sec: sec, typ: "simple"}
		f.unit, f.prefix = f.name, f.name
		if prefix, inst, ok := strings.Cut(f.name, "@"); ok {
			f.name, f.prefix, f.instance = prefix, prefix, inst
			if inst != "" {
				f.name = prefix + "-" + inst
			}
		}
		if v, ok := last(sec["Service"], "Type"); ok {
			f.typ = v.Value
		}
		files = append(files, f)
		names = append(names, base)
	}
	if len(allErrs) > 0 {
		return nil, nil, allErrs.err()
	}
	if len(files) == 0 {
		return nil, nil, &ParseError{Pos: "", Msg: "no .service unit among the inputs"}
	}
	for _, d := range dropins {
		unit := strings.TrimSuffix(path.Base(path.Dir(d.Path)), ".d")
		var f *unitFile
		for _, g := range files {
			if g.unit+".service" == unit {
				f = g
			}
		}
		if f == nil {
			r.Drop(d.Path, "drop-in", unit+" is not among the imported units")
			continue
		}
		sec, err := parseUnit(d)
		if err != nil {
			return nil, nil, err
		}
		for name, keys := range sec {
			f.sec[name] = append(f.sec[name], keys...)
		}
		if v, ok := last(f.sec["Service"], "Type"); ok {
			f.typ = v.Value
		}
		r.AsIs(d.Path, "drop-in for "+unit+" (its keys added after the unit's, as systemd reads them)")
	}
	m.Header = []string{"Converted by podvisor import from systemd units: " + strings.Join(names, ", ")}
	byUnit := map[string]*unitFile{}
	for _, f := range files {
		byUnit[f.unit+".service"] = f
	}
	c := &sdConv{r: r, m: m, byUnit: byUnit, opt: opt}
	for _, f := range files {
		c.unit(f)
	}
	for _, so := range sockets {
		c.socketUnit(so)
	}
	// Before= on a unit puts the edge on the other side.
	for _, f := range files {
		for _, k := range f.sec["Unit"] {
			if k.Name != "Before" {
				continue
			}
			for _, other := range strings.Fields(k.Value) {
				o, ok := byUnit[other]
				if !ok {
					r.Drop(kpos(f, k), "Before="+other, "not among the imported units")
					continue
				}
				if p := m.Process(sanitizeName(o.name)); p != nil && !hasDep(p, sanitizeName(f.name)) {
					p.DependsOn = append(p.DependsOn, Dep{Name: sanitizeName(f.name), Condition: condFor(f.typ)})
					r.AsIs(kpos(f, k), f.name+": Before="+other)
				}
			}
		}
	}
	uniqueNames(m, r)
	finish(m, r)
	sdShutdownTimeout(m, r)
	return m, r, nil
}

// kpos is where a key was written: the unit or one of its drop-ins.
func kpos(f *unitFile, k iniKey) string {
	if k.File != "" {
		return at(k.File, k.Line)
	}
	return at(f.src.Path, k.Line)
}

type sdConv struct {
	r      *Report
	m      *Model
	byUnit map[string]*unitFile
	opt    Options
}

func last(keys []iniKey, name string) (iniKey, bool) {
	for i := len(keys) - 1; i >= 0; i-- {
		if keys[i].Name == name {
			return keys[i], true
		}
	}
	return iniKey{}, false
}

func hasDep(p *Process, name string) bool {
	return slices.ContainsFunc(p.DependsOn, func(d Dep) bool { return d.Name == name })
}

// condFor is the depends_on condition that matches how systemd considers
// a unit of this Type started.
func condFor(typ string) graph.Condition {
	switch typ {
	case "oneshot":
		return graph.Completed
	case "notify", "notify-reload", "forking":
		return graph.Ready
	}
	return graph.Started
}

// Directives dropped because podvisor leaves them to the container.
var sdSandbox = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(Protect|Private|Restrict|NoNewPrivileges|CapabilityBoundingSet|ReadOnly|ReadWrite|Inaccessible|SystemCall|LockPersonality|MemoryDeny|RemoveIPC|DynamicUser|SecureBits|UMask|RootDirectory|RootImage|BindPaths|BindReadOnlyPaths|TemporaryFileSystem|DevicePolicy|DeviceAllow|IPAddress|SELinux|AppArmor|Keyring|ProcSubset|StateDirectory|RuntimeDirectory|CacheDirectory|LogsDirectory|ConfigurationDirectory)`)
})
var sdResource = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^(Limit|Memory|CPU|Tasks|IO|BlockIO|Nice|CPUScheduling|CPUAffinity|Slice|Delegate|Startup|AllowedCPUs|ManagedOOM)`)
})

var sdSpecifier = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`%.`) })

func (c *sdConv) unit(f *unitFile) {
	r := c.r
	name := sanitizeName(f.name)
	p := newProcess(name, f.src.Path)
	if name != f.name {
		note(p, r, f.src.Path, "name", "renamed from "+f.name)
	}
	spec, cmdSpec := c.specifiers(f, p)
	svc := f.sec["Service"]
	if len(svc) == 0 {
		r.Fail(f.src.Path, f.name, "no [Service] section")
		return
	}
	starts, pres, posts := execKeys(svc)
	if len(starts) == 0 {
		r.Fail(f.src.Path, f.name, "no ExecStart=; add the command")
		return
	}
	if !c.unitType(f, p) {
		return
	}
	if len(starts) > 1 && f.typ != "oneshot" {
		r.Fail(kpos(f, starts[1]), f.name+": ExecStart", "several ExecStart= are allowed only with Type=oneshot (systemd refuses this too)")
		return
	}
	daemon, ok := c.startCommand(f, p, starts, cmdSpec)
	if !ok {
		return
	}
	if f.typ == "forking" && !c.forking(f, p, svc, daemon, spec) {
		return
	}
	c.deps(f, p)
	c.service(f, p, svc, spec, cmdSpec)
	// After service: the hooks take the unit's environment, user and
	// working directory as systemd runs them.
	for i, k := range pres {
		c.hook(f, p, k, suffixName(p.Name, fmt.Sprintf("-pre%d", i+1)), true, cmdSpec)
	}
	for i, k := range posts {
		c.hook(f, p, k, suffixName(p.Name, fmt.Sprintf("-post%d", i+1)), false, cmdSpec)
	}
	c.dropSections(f)
	c.m.Processes = append(c.m.Processes, p)
}

// specifiers returns the functions that replace systemd's % specifiers in
// a value of f: spec for paths and values, cmdSpec for command lines, where
// the user's home and name become ${HOME} and ${USER}, expanded from the
// process's environment.
func (c *sdConv) specifiers(f *unitFile, p *Process) (spec, cmdSpec func(iniKey, string) string) {
	r := c.r
	specifiers := func(k iniKey, s string, inCmd bool) string {
		return sdSpecifier().ReplaceAllStringFunc(s, func(m string) string {
			switch m {
			case "%%":
				return "%"
			case "%n":
				return f.unit + ".service"
			case "%N":
				return f.unit
			case "%p":
				return f.prefix
			case "%i", "%I":
				if f.instance == "" {
					note(p, r, kpos(f, k), "command", "template unit without an instance: "+m+" left empty (import name@instance.service to set it)")
				}
				if m == "%I" {
					return sdUnescape(f.instance)
				}
				return f.instance
			case "%P":
				return sdUnescape(f.prefix)
			case "%H":
				if inCmd {
					note(p, r, kpos(f, k), "command", "%H (the host name) became ${HOSTNAME}, from podvisor's environment at load")
					return "${HOSTNAME}"
				}
			case "%t":
				return "/run"
			case "%h", "%u":
				v := map[string]string{"%h": "HOME", "%u": "USER"}[m]
				if inCmd {
					return "${" + v + "}"
				}
				return "$" + v
			}
			note(p, r, kpos(f, k), "command", "specifier "+m+" kept as it is; systemd would replace it")
			return m
		})
	}
	spec = func(k iniKey, s string) string { return specifiers(k, s, false) }
	cmdSpec = func(k iniKey, s string) string { return specifiers(k, s, true) }
	return spec, cmdSpec
}

// execKeys picks the ExecStart= (an empty one resets the list),
// ExecStartPre= and ExecStartPost= keys of svc.
func execKeys(svc []iniKey) (starts, pres, posts []iniKey) {
	for _, k := range svc {
		switch k.Name {
		case "ExecStart":
			if k.Value == "" {
				starts = nil
			} else {
				starts = append(starts, k)
			}
		case "ExecStartPre":
			pres = append(pres, k)
		case "ExecStartPost":
			posts = append(posts, k)
		}
	}
	return starts, pres, posts
}

// unitType converts Type=; false when it is unknown (reported).
func (c *sdConv) unitType(f *unitFile, p *Process) bool {
	r := c.r
	switch f.typ {
	case "simple", "exec":
		r.AsIs(f.src.Path, f.name+": Type="+f.typ)
	case "idle", "dbus":
		note(p, r, f.src.Path, "command", "Type="+f.typ+" run as Type=simple")
	case "notify", "notify-reload":
		p.Ready = &Probe{Kind: config.ProbeNotifySystemd}
		r.AsIs(f.src.Path, f.name+": Type="+f.typ+" (ready: {notify: systemd})")
	case "oneshot":
		p.Type = config.Oneshot
		r.AsIs(f.src.Path, f.name+": Type=oneshot")
	case "forking":
	default:
		r.Fail(f.src.Path, f.name, "unknown Type="+f.typ)
		return false
	}
	return true
}

// startCommand sets p's command from the ExecStart= keys: an argv when one
// converts as it is, else a shell command. daemon is that shell command
// without the exec added here (for Type=forking); ok is false when a
// command cannot be converted (reported).
func (c *sdConv) startCommand(f *unitFile, p *Process, starts []iniKey, cmdSpec func(iniKey, string) string) (daemon string, ok bool) {
	var parts, why []string
	argvOK := len(starts) == 1
	if !argvOK {
		why = append(why, "several ExecStart= run one after the other with &&")
	}
	split := false
	for _, k := range starts {
		x, ignore, ok := c.command(f, p, k, cmdSpec)
		if !ok {
			return "", false
		}
		line := x.sh
		if ignore {
			line += " || true"
			argvOK = false
			why = append(why, "the - prefix became || true")
		}
		if x.env {
			argvOK = false
			why = append(why, "$VAR and ${VAR} expand from the process's environment as systemd expands them from Environment=; every other word is quoted")
		}
		split = split || x.split
		why = append(why, x.caveats()...)
		parts = append(parts, line)
		if argvOK {
			setArgv(&p.Command, &p.Shell, escapeAll(x.argv))
		}
	}
	if argvOK {
		c.r.AsIs(kpos(f, starts[0]), f.name+": ExecStart")
		return "", true
	}
	sh := strings.Join(parts, " && ")
	daemon = sh
	if len(starts) == 1 && !strings.HasSuffix(parts[0], "|| true") {
		sh = "exec " + sh
	}
	if split {
		sh = "set -f; " + sh
		daemon = "set -f; " + daemon
	}
	p.Command, p.Shell = shellForm(config.Literal(sh)), true
	daemon = config.Literal(daemon) // same $ as sh: escaped alike
	var once []string
	for _, w := range why {
		if !slices.Contains(once, w) {
			once = append(once, w)
		}
	}
	note(p, c.r, kpos(f, starts[0]), "command", "run by /bin/sh -c: "+strings.Join(once, "; "))
	return daemon, true
}

// forking follows a Type=forking daemon through its PIDFile= (podvisor's
// daemon: {pid_file}); without one it converts the unit as
// systemd_guess.go says. false when the unit cannot be converted
// (reported).
//
// systemd (systemd.service(5), PIDFile=): a relative path is taken below
// /run/; once the start command has exited with success the pid is read
// from the file, and the unit is started (active) then, its dependents go
// on; the daemon's exit is the service's exit, Restart= applies; at stop,
// ExecStop= runs and then KillSignal= reaches what is left; the file is
// removed once the service has ended, so that a restart never reads a
// stale pid. podvisor's daemon mode adopts the pid once the command exited
// with success (internal/launch/daemon.go) and from then on its exit and
// signals are the process's; but without a ready: check a process counts
// as ready from its spawn, before the pid file is read, so the import adds
// one (the file names a live process), and removes the file before each
// start as systemd removes it after each end.
func (c *sdConv) forking(f *unitFile, p *Process, svc []iniKey, daemon string, spec func(iniKey, string) string) bool {
	pid, ok := last(svc, "PIDFile")
	if !ok || strings.TrimSpace(pid.Value) == "" {
		c.forkingGuess(f, p, svc, daemon)
		return true
	}
	pf := strings.TrimSpace(spec(pid, pid.Value))
	if !path.IsAbs(pf) {
		c.r.AsIs(kpos(f, pid), f.name+": PIDFile="+pf+" is relative: /run/"+pf+", as systemd prefixes it")
		pf = "/run/" + pf
	}
	pf = path.Clean(pf)
	cmd := daemon
	if cmd == "" && !p.Shell {
		cmd = strings.Join(shellQuoteAll(p.Command), " ")
	}
	// The path is one literal word for /bin/sh, and its $ are not
	// podvisor's ${VAR} either.
	qpf := config.Literal(shQuote(pf))
	p.Command, p.Shell = shellForm("rm -f -- "+qpf+"; "+cmd), true
	p.Daemon = &config.Daemon{PidFile: config.Literal(pf)}
	p.Ready = &Probe{Kind: config.ProbeExec, Command: shellForm("pid=$(cat " + qpf + ") && test -d \"/proc/$pid\""), Shell: true}
	c.r.AsIs(kpos(f, pid), f.name+": Type=forking, PIDFile="+pf+" (daemon.pid_file: podvisor supervises the pid it reads once the start command exited with success; its exit follows restart:, the stop signal reaches it after ExecStop=)")
	note(p, c.r, kpos(f, pid), "ready", "systemd counts a forking unit started once the start command exited and the pid file was read; podvisor's daemon counts as ready from its spawn, so this waits for the file to name a live process (not a stale pid of an earlier run; a moment early if the daemon writes it before its parent exits)")
	note(p, c.r, kpos(f, pid), "command", "the pid file is removed before each start: systemd removes it once the service has ended, so that a restart never reads a stale pid")
	return true
}

// dropSections reports the sections and [Unit] keys podvisor has no use for.
func (c *sdConv) dropSections(f *unitFile) {
	r := c.r
	secNames := make([]string, 0, len(f.sec))
	for n := range f.sec {
		secNames = append(secNames, n)
	}
	slices.Sort(secNames)
	for _, secName := range secNames {
		switch secName {
		case "Unit", "Service":
		default:
			for _, k := range f.sec[secName] {
				r.Drop(kpos(f, k), "["+secName+"] "+k.Name, "podvisor starts every process it lists; installation targets have no meaning here")
			}
		}
	}
	for _, k := range f.sec["Unit"] {
		switch k.Name {
		case "After", "Before", "Requires", "Wants", "BindsTo":
		case "Description", "Documentation":
			r.Drop(kpos(f, k), f.name+": "+k.Name, "kept only in the report")
		default:
			why := sdUnitDropped(k.Name)
			r.Drop(kpos(f, k), f.name+": [Unit] "+k.Name, why)
		}
	}
}

// command splits and converts the command line of k (sdexec.go); ok is
// false when it cannot, and the failure is reported.
func (c *sdConv) command(f *unitFile, p *Process, k iniKey, spec func(iniKey, string) string) (x execWords, ignore, ok bool) {
	line, ignore := execPrefix(spec(k, k.Value))
	words, err := splitExecLine(line)
	if err == nil && len(words) == 0 {
		err = errors.New("no command")
	}
	if err != nil {
		c.r.Fail(kpos(f, k), f.name+": "+k.Name, fmt.Sprintf("cannot split %q: %v", k.Value, err))
		return execWords{}, false, false
	}
	return convertWords(words), ignore, true
}

// caveats says where the /bin/sh form of x differs from systemd.
func (x execWords) caveats() []string {
	var out []string
	if len(x.odd) > 0 {
		out = append(out, "variables /bin/sh cannot name ("+strings.Join(x.odd, ", ")+") expand to nothing")
	}
	if x.split {
		out = append(out, "a $VAR word is split at blanks by /bin/sh (pathname expansion off); quotes inside its value do not group as systemd's do")
	}
	return out
}

// setCommand converts the one command of k (ExecStartPre/Post, ExecStop)
// into argv, or shell when it expands variables or ignores failure; the
// caveats of the shell form are noted on p's key.
func (c *sdConv) setCommand(f *unitFile, p *Process, k iniKey, spec func(iniKey, string) string, key string, cmd *[]string, shell *bool) bool {
	x, ignore, ok := c.command(f, p, k, spec)
	if !ok {
		return false
	}
	if cv := x.caveats(); len(cv) > 0 {
		note(p, c.r, kpos(f, k), key, strings.Join(cv, "; "))
	}
	switch {
	case !x.env && !ignore:
		setArgv(cmd, shell, escapeAll(x.argv))
	default:
		sh := x.sh
		if ignore {
			sh += " || true"
		}
		if x.split {
			sh = "set -f; " + sh
		}
		setShell(cmd, shell, config.Literal(sh))
	}
	return true
}

// execPrefix strips systemd's ExecStart prefixes; ignore is "-" (a failure
// is ignored).
func execPrefix(s string) (string, bool) {
	ignore := false
	for len(s) > 0 && strings.IndexByte("@-:+!", s[0]) >= 0 {
		if s[0] == '-' {
			ignore = true
		}
		s = s[1:]
	}
	return strings.TrimSpace(s), ignore
}

func escapeAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = config.Literal(w)
	}
	return out
}

func shellQuoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		if w != "" && !strings.ContainsAny(w, " \t\n'\"\\$`&|;<>()*?[]{}~#") {
			out[i] = w
		} else {
			out[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
		}
	}
	return out
}

// hook turns ExecStartPre/Post into a oneshot before (or after) the
// service.
func (c *sdConv) hook(f *unitFile, p *Process, k iniKey, name string, pre bool, spec func(iniKey, string) string) {
	h := newProcess(name, kpos(f, k)+" "+k.Name)
	h.Type = config.Oneshot
	if !c.setCommand(f, h, k, spec, "command", &h.Command, &h.Shell) {
		return
	}
	// systemd runs every Exec*= line of the unit with its Environment=,
	// EnvironmentFile=, User=, Group= and WorkingDirectory=.
	h.Env = slices.Clone(p.Env)
	h.Written.EnvFile = slices.Clone(p.Written.EnvFile)
	h.User, h.WorkingDir = p.User, p.WorkingDir
	if pre {
		p.DependsOn = append(p.DependsOn, Dep{Name: name, Condition: graph.Completed})
		note(h, c.r, kpos(f, k), "type", k.Name+" of "+f.name+": a oneshot it waits for; it runs once, not before every restart")
	} else {
		h.DependsOn = []Dep{{Name: p.Name, Condition: condFor(f.typ)}}
		if f.typ == "oneshot" {
			h.DependsOn[0].Condition = graph.Completed
		}
		note(h, c.r, kpos(f, k), "type", k.Name+" of "+f.name+": a oneshot after it; it runs once, not after every restart")
	}
	c.m.Processes = append(c.m.Processes, h)
}

func (c *sdConv) deps(f *unitFile, p *Process) {
	r := c.r
	rel := map[string]map[string]iniKey{} // unit -> relation -> key
	var order []string
	for _, k := range f.sec["Unit"] {
		switch k.Name {
		case "After", "Requires", "Wants", "BindsTo", "Requisite", "PartOf":
		default:
			continue
		}
		for _, u := range strings.Fields(k.Value) {
			if rel[u] == nil {
				rel[u] = map[string]iniKey{}
				order = append(order, u)
			}
			rel[u][k.Name] = k
		}
	}
	for _, u := range order {
		rs := rel[u]
		var k iniKey // the first line that names u
		for _, kk := range rs {
			if k.Line == 0 || kk.Line < k.Line {
				k = kk
			}
		}
		pos := kpos(f, k)
		other, ok := c.byUnit[u]
		if !ok {
			var how []string
			for n := range rs {
				how = append(how, n)
			}
			slices.Sort(how)
			r.Drop(pos, f.name+": "+strings.Join(how, "/")+"="+u, "not among the imported units (system targets and other services are the container's business)")
			continue
		}
		d := Dep{Name: sanitizeName(other.name), Condition: condFor(other.typ)}
		if _, ok := rs["BindsTo"]; ok {
			d.Restart = true
		}
		if _, ok := rs["PartOf"]; ok {
			d.Restart = true
		}
		p.DependsOn = append(p.DependsOn, d)
		if _, after := rs["After"]; !after {
			setComment(p, "depends_on."+d.Name, "no After=: systemd would start both at once; podvisor waits")
			r.Approx(pos, f.name+": "+u, "without After= systemd starts both at once; podvisor waits for "+d.Condition.String())
		} else {
			r.AsIs(pos, f.name+": After="+u+" ("+d.Condition.String()+", from the Type of "+u+")")
		}
	}
}

// svcKeys is what service collects from the [Service] keys that are
// decided together once all are read.
type svcKeys struct {
	user, group, restart string
	restartDelay         time.Duration
	// the last TimeoutStartSec=/TimeoutStopSec= (TimeoutSec= sets both),
	// and whether one was given: systemd's default is 90 s (sdTimeoutDefault)
	startTimeout, stopTimeout    time.Duration
	startGiven, stopGiven        bool
	startKey, stopKey            iniKey
	forceRestart, preventRestart []int
	// the signal names of those lists: restart.rules signals
	forceSignals, preventSignals []syscall.Signal
	forceKey, preventKey         iniKey
}

// sdTimeoutDefault is systemd's DefaultTimeoutStartSec= and
// DefaultTimeoutStopSec= (docs/import.md): a unit without its own
// timeout waits this long.
const sdTimeoutDefault = 90 * time.Second

func (c *sdConv) service(f *unitFile, p *Process, svc []iniKey, spec, cmdSpec func(iniKey, string) string) {
	var st svcKeys
	for _, k := range svc {
		c.serviceKey(f, p, k, &st, spec, cmdSpec)
	}
	c.serviceUser(f, p, st)
	c.serviceRestart(f, p, st)
	c.serviceTimeouts(f, p, st)
	c.serviceRules(f, p, st)
	c.envPrecedence(f, p)
}

// envPrecedence gives EnvironmentFile= the last word, as systemd does
// (docs/import.md): its settings override Environment=. podvisor's env wins over
// env_file (docs/reference.md), so a variable the file sets leaves env;
// when the file cannot be read here, that is said.
func (c *sdConv) envPrecedence(f *unitFile, p *Process) {
	files := p.Written.EnvFile
	if len(files) == 0 || len(p.Env) == 0 {
		return
	}
	var unread []string
	fromFile := map[string]string{}
	for _, name := range files {
		if c.opt.ReadFile == nil {
			unread = append(unread, name)
			continue
		}
		src, err := c.opt.ReadFile(name)
		if errors.Is(err, ErrOutsideRoot) {
			c.r.Fail(f.src.Path, f.name+": EnvironmentFile", err.Error())
			continue
		}
		if err != nil {
			unread = append(unread, name)
			continue
		}
		env, err := config.ParseEnvFile(src.Path, src.Data)
		if err != nil {
			unread = append(unread, name)
			continue
		}
		for _, kv := range env {
			k, _, _ := strings.Cut(kv, "=")
			fromFile[k] = name
		}
	}
	var keep, moved []string
	for _, kv := range p.Env {
		k, _, _ := strings.Cut(kv, "=")
		if name, ok := fromFile[k]; ok {
			if m := k + " (from " + name + ")"; !slices.Contains(moved, m) {
				moved = append(moved, m)
			}
			continue
		}
		keep = append(keep, kv)
	}
	p.Env = keep
	if len(moved) > 0 {
		p.Comment("env_file", "sets "+strings.Join(moved, ", ")+": EnvironmentFile= overrides Environment= under systemd, so env leaves them out")
		c.r.AsIs(f.src.Path, f.name+": EnvironmentFile= over Environment= for "+strings.Join(moved, ", "))
	}
	if len(unread) > 0 {
		note(p, c.r, f.src.Path, "env", "EnvironmentFile= "+strings.Join(unread, ", ")+" not read here (import --root DIR reads it from an image): under systemd the file overrides Environment=, here env wins for a variable both set")
	}
}

// serviceKey converts one [Service] key, or records it in st.
func (c *sdConv) serviceKey(f *unitFile, p *Process, k iniKey, st *svcKeys, spec, cmdSpec func(iniKey, string) string) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	v := k.Value
	if c.sdLimitKey(f, p, k) {
		return
	}
	switch k.Name {
	case "Type", "ExecStart", "ExecStartPre", "ExecStartPost", "PIDFile":
	case "ExecStop":
		if c.setCommand(f, p, k, cmdSpec, "stop", &p.Stop.Command, &p.Stop.Shell) {
			r.AsIs(pos, what)
		}
	case "ExecReload":
		c.serviceReload(f, p, k, cmdSpec)
	case "FileDescriptorStoreMax":
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 || n > config.MaxFDStore {
			r.Fail(pos, what, fmt.Sprintf("%q is not a number 0-%d", v, config.MaxFDStore))
			return
		}
		p.FDStoreMax = n
		r.AsIs(pos, what+" (fd_store_max: FDSTORE=1 over NOTIFY_SOCKET)")
	case "Restart":
		st.restart = v
	case "RestartSec":
		d, ok := parseTimespan(v)
		if !ok {
			r.Fail(pos, what, fmt.Sprintf("%q is not a time span", v))
			return
		}
		st.restartDelay = d
	case "Environment":
		if strings.TrimSpace(v) == "" { // an empty assignment resets the list
			p.Env = nil
			return
		}
		c.serviceEnv(f, p, k, spec)
	case "EnvironmentFile":
		if strings.TrimSpace(v) == "" {
			p.Written.EnvFile = nil
			return
		}
		c.serviceEnvFile(f, p, k, spec)
	case "User":
		st.user = spec(k, v)
	case "Group":
		st.group = spec(k, v)
	case "WorkingDirectory":
		wd := strings.TrimPrefix(v, "-")
		if wd == "~" {
			note(p, r, pos, "working_dir", "WorkingDirectory=~ is the user's home; podvisor has no such shorthand, left at the config's directory")
			return
		}
		p.WorkingDir = config.Literal(spec(k, wd))
		r.AsIs(pos, what)
	case "TimeoutStartSec", "TimeoutStopSec", "TimeoutSec", "KillSignal", "KillMode":
		c.serviceStop(f, p, k, st)
	case "WatchdogSec":
		c.serviceWatchdog(f, p, k)
	case "RestartForceExitStatus", "RestartPreventExitStatus":
		c.serviceExitStatus(f, p, k, st)
	case "SuccessExitStatus":
		codes := []int{0}
		for _, w := range strings.Fields(v) {
			n, err := strconv.Atoi(w)
			switch {
			case err == nil && n >= 0 && n <= 255:
				codes = append(codes, n)
			case err != nil && sdSignal(w) != 0:
				// podvisor's exit code of a death by signal N is 128+N
				sig := sdSignal(w)
				code := 128 + int(sig)
				codes = append(codes, code)
				note(p, r, pos, "success_exit_codes", fmt.Sprintf("SuccessExitStatus %s: podvisor's success_exit_codes are exit codes, and a death by %s is exit code %d, so %d is a success; an exit with code %d is a success too, which under systemd it is not", w, unix.SignalName(sig), code, code, code))
			default:
				r.Fail(pos, what, fmt.Sprintf("%q is not an exit code 0-255 or a signal name", w))
			}
		}
		if strings.TrimSpace(v) == "" { // an empty assignment resets the list
			codes = nil
		}
		p.SuccessExitCodes = codes
		r.AsIs(pos, what)
	case "RemainAfterExit":
		on, _ := parseBool(strings.ToLower(v))
		p.RemainAfterExit = on // a oneshot stays completed anyway; on a service, remain_after_exit
		r.AsIs(pos, what+" (a completed oneshot stays completed; a service: remain_after_exit)")
	case "OOMScoreAdjust":
		n, err := strconv.Atoi(v)
		if err != nil || n < -1000 || n > 1000 {
			r.Fail(pos, what, fmt.Sprintf("%q is not -1000..1000", v))
			return
		}
		p.OOMScoreAdj = &n
		r.AsIs(pos, what)
	case "StandardOutput", "StandardError":
		k.Value = spec(k, v)
		c.serviceOutput(f, p, k)
	case "SyslogIdentifier":
		r.Drop(pos, what, "podvisor names each line with the process name")
	default:
		switch {
		case sdSandbox().MatchString(k.Name):
			r.Drop(pos, what, "sandboxing: podvisor relies on the container's own isolation")
		case sdResource().MatchString(k.Name):
			r.Drop(pos, what, "resource control: set limits on the container (resources in Kubernetes)")
		case sdServiceDropped[k.Name] != "":
			r.Drop(pos, what, sdServiceDropped[k.Name])
		default:
			r.Drop(pos, what, "not a [Service] setting the import knows: look it up in systemd.service(5), systemd.exec(5) or systemd.kill(5) and write what it does into the command")
		}
	}
}

// serviceEnv converts a non-empty Environment=.
func (c *sdConv) serviceEnv(f *unitFile, p *Process, k iniKey, spec func(iniKey, string) string) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	// systemd sets each valid assignment, ignores (with a warning) a word
	// that is not one, and ignores the rest of the line after a syntax
	// error: a "# comment" after the value is such words. The import does
	// the same and says so.
	words, err := splitWordsPartial(k.Value)
	var ignored []string
	set := 0
	for _, w := range words {
		kk, vv, ok := strings.Cut(w, "=")
		if !ok || !config.ValidEnvName(kk) {
			ignored = append(ignored, strconv.Quote(w))
			continue
		}
		p.Env = append(p.Env, envEntry(kk, config.Literal(spec(k, vv))))
		set++
	}
	if len(ignored) > 0 {
		r.Drop(pos, what+" "+strings.Join(ignored, " "), "not KEY=value: systemd ignores these words too")
	}
	if err != nil {
		r.Drop(pos, what+" (the rest of the line)", err.Error()+": systemd ignores the rest of the line too")
	}
	if set > 0 {
		r.AsIs(pos, what)
	}
}

// serviceEnvFile converts a non-empty EnvironmentFile=.
func (c *sdConv) serviceEnvFile(f *unitFile, p *Process, k iniKey, spec func(iniKey, string) string) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	file := spec(k, k.Value)
	if !path.IsAbs(strings.TrimPrefix(file, "-")) {
		r.Fail(pos, what, fmt.Sprintf("%q is not an absolute path (systemd refuses it too)", k.Value))
		return
	}
	if strings.HasPrefix(file, "-") {
		file = strings.TrimPrefix(file, "-")
		note(p, r, pos, "env_file", "EnvironmentFile=-"+file+": optional under systemd; podvisor needs the file to exist")
	} else {
		r.AsIs(pos, what)
	}
	p.Written.EnvFile = append(p.Written.EnvFile, file)
}

// serviceStop converts the timeouts and the kill settings.
func (c *sdConv) serviceStop(f *unitFile, p *Process, k iniKey, st *svcKeys) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	v := k.Value
	switch k.Name {
	case "KillSignal":
		sig := signalName(v)
		switch sig {
		case "":
			r.Fail(pos, what, fmt.Sprintf("%q is not a signal", v))
		case "SIGKILL":
			setStopTimeout(p, 0)
			note(p, r, pos, "stop", "KillSignal=SIGKILL: podvisor sends SIGTERM, then SIGKILL at once (timeout 0s)")
		default:
			p.Stop.Signal = unix.SignalNum(sig)
			r.AsIs(pos, what)
		}
	case "KillMode":
		switch v {
		case "control-group", "":
			r.AsIs(pos, what+" (podvisor signals the process group)")
		default:
			note(p, r, pos, "stop", "KillMode="+v+": podvisor signals the whole process group")
		}
	default: // TimeoutStartSec, TimeoutStopSec, TimeoutSec
		d, ok := parseTimespan(v)
		if !ok {
			r.Fail(pos, what, fmt.Sprintf("%q is not a time span", v))
			return
		}
		if k.Name != "TimeoutStopSec" {
			st.startTimeout, st.startGiven, st.startKey = d, true, k
		}
		if k.Name != "TimeoutStartSec" {
			st.stopTimeout, st.stopGiven, st.stopKey = d, true, k
		}
	}
}

// serviceTimeouts sets start_timeout and stop.timeout as systemd reads its
// timeouts (docs/import.md): 0 or infinity is no timeout, an absent one
// is the manager's default of 90 s, and a oneshot has no start timeout
// unless one is given. A start timeout matters only where podvisor waits
// for readiness (notify, forking), as systemd's does.
func (c *sdConv) serviceTimeouts(f *unitFile, p *Process, st svcKeys) {
	r := c.r
	switch {
	case st.startGiven:
		p.StartTimeout = st.startTimeout // 0: podvisor waits forever too
		r.AsIs(kpos(f, st.startKey), f.name+": "+st.startKey.Name+" (start_timeout)")
	case p.Ready != nil && p.Type != config.Oneshot:
		p.StartTimeout = sdTimeoutDefault
		note(p, r, f.src.Path, "start_timeout", "no TimeoutStartSec=: systemd's default, 90s")
	}
	switch {
	case st.stopGiven && st.stopTimeout == 0:
		setStopTimeout(p, maxDuration)
		note(p, r, kpos(f, st.stopKey), "stop", st.stopKey.Name+"="+st.stopKey.Value+": no stop timeout under systemd; podvisor's longest, 24h (shutdown_timeout still bounds a teardown)")
	case st.stopGiven:
		setStopTimeout(p, st.stopTimeout)
		r.AsIs(kpos(f, st.stopKey), f.name+": "+st.stopKey.Name+" (stop.timeout)")
	case p.Stop.Timeout == 0 && p.Written.StopTimeout: // KillSignal=SIGKILL
	default:
		setStopTimeout(p, sdTimeoutDefault)
		note(p, r, f.src.Path, "stop", "no TimeoutStopSec=: systemd's default, 90s (shutdown_timeout still bounds a teardown)")
	}
}

// serviceWatchdog converts WatchdogSec=: podvisor's watchdog, which needs
// notify readiness as systemd's needs sd_notify.
func (c *sdConv) serviceWatchdog(f *unitFile, p *Process, k iniKey) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	d, ok := parseTimespan(k.Value)
	switch {
	case !ok:
		r.Fail(pos, what, fmt.Sprintf("%q is not a time span", k.Value))
	case d == 0:
		p.Watchdog = 0
		r.AsIs(pos, what+" (off)")
	case p.Ready == nil || p.Ready.Kind != config.ProbeNotifySystemd:
		r.Drop(pos, what, "systemd takes WATCHDOG=1 only over sd_notify; podvisor's watchdog needs ready: {notify: systemd} (Type=notify)")
	case d < 100*time.Millisecond:
		p.Watchdog = 100 * time.Millisecond
		note(p, r, pos, "watchdog", "WatchdogSec="+k.Value+": podvisor's shortest watchdog, 100ms")
	default:
		p.Watchdog = min(d, maxDuration)
		r.AsIs(pos, what+" (watchdog)")
	}
}

// serviceExitStatus collects RestartForceExitStatus= and
// RestartPreventExitStatus= (an empty one resets the list); signal names
// in them are reported.
func (c *sdConv) serviceExitStatus(f *unitFile, p *Process, k iniKey, st *svcKeys) {
	list, sigs, key := &st.forceRestart, &st.forceSignals, &st.forceKey
	if k.Name == "RestartPreventExitStatus" {
		list, sigs, key = &st.preventRestart, &st.preventSignals, &st.preventKey
	}
	*key = k
	if strings.TrimSpace(k.Value) == "" {
		*list, *sigs = nil, nil
		return
	}
	for _, w := range strings.Fields(k.Value) {
		n, err := strconv.Atoi(w)
		switch {
		case err == nil && n >= 0 && n <= 255:
			*list = append(*list, n)
		case err != nil && sdSignal(w) != 0:
			// a rule's signals match a death by that signal only, as
			// systemd's signal names do
			*sigs = append(*sigs, sdSignal(w))
		default:
			c.r.Fail(kpos(f, k), f.name+": "+k.Name, fmt.Sprintf("%q is not an exit code 0-255 or a signal name", w))
		}
	}
}

// serviceRules turns the exit statuses into restart.rules: prevent first,
// as systemd's RestartPreventExitStatus= wins over the policy and over
// RestartForceExitStatus=.
func (c *sdConv) serviceRules(f *unitFile, p *Process, st svcKeys) {
	add := func(codes []int, signals []syscall.Signal, action config.RuleAction, k iniKey) {
		var in []int
		for _, n := range codes {
			if !slices.Contains(in, n) && !slices.ContainsFunc(p.Restart.Rules, func(x config.ExitRule) bool { return slices.Contains(x.In, n) }) {
				in = append(in, n)
			}
		}
		var sigs []syscall.Signal
		for _, sg := range signals {
			if !slices.Contains(sigs, sg) && !slices.ContainsFunc(p.Restart.Rules, func(x config.ExitRule) bool { return slices.Contains(x.Signals, sg) }) {
				sigs = append(sigs, sg)
			}
		}
		if len(in) == 0 && len(sigs) == 0 {
			return
		}
		if !p.Written.Restart {
			setRestart(p, config.Never)
		}
		if p.Type == config.Oneshot && action == config.RuleRestart && p.Restart.Policy == config.Never {
			p.Restart.Policy = config.OnFailure
		}
		p.Restart.Rules = append(p.Restart.Rules, config.ExitRule{In: in, Signals: sigs, Action: action})
		c.r.AsIs(kpos(f, k), f.name+": "+k.Name+" (restart.rules, action "+action.String()+")")
	}
	add(st.preventRestart, st.preventSignals, config.RuleStop, st.preventKey)
	add(st.forceRestart, st.forceSignals, config.RuleRestart, st.forceKey)
}

// serviceOutput converts StandardOutput= and StandardError=.
func (c *sdConv) serviceOutput(f *unitFile, p *Process, k iniKey) {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	v := k.Value
	kind, file, _ := strings.Cut(v, ":")
	stdout := k.Name == "StandardOutput"
	switch {
	case v == "journal" || v == "inherit" || v == "journal+console" || v == "tty" || v == "kmsg" || v == "syslog" || v == "":
		r.AsIs(pos, what+" (podvisor prints the lines on its stdout)")
	case v == "null":
		if stdout {
			p.Log.Stdout = config.DestOff
		} else {
			p.Log.Stderr = config.DestOff
		}
		r.AsIs(pos, what+" (off)")
	case (kind == "file" || kind == "append" || kind == "truncate") && path.IsAbs(file) && dirLike(file):
		r.Fail(pos, what, fmt.Sprintf("%q is a directory; name the file, such as /var/log/app.log", file))
	case (kind == "file" || kind == "append" || kind == "truncate") && path.IsAbs(file):
		l := &p.Log
		if stdout {
			l.Stdout, l.File = config.DestFile, config.Literal(file)
		} else if l.Stderr = config.DestFile; file != l.File {
			l.StderrFile = config.Literal(file)
		}
		if kind == "append" {
			r.AsIs(pos, what+" (a log file, appended to)")
		} else {
			note(p, r, pos, "log", k.Name+"="+v+": podvisor appends to the file and rotates it by size")
		}
	default:
		note(p, r, pos, "log", k.Name+"="+v+": podvisor prints the lines on its stdout")
	}
}

// serviceUser sets user: from User= and Group=.
func (c *sdConv) serviceUser(f *unitFile, p *Process, st svcKeys) {
	r := c.r
	switch {
	case st.user != "" && st.group != "":
		p.User = user(st.user + ":" + st.group)
	case st.user != "":
		p.User = user(st.user)
	case st.group != "":
		note(p, r, f.src.Path, "user", "Group="+st.group+" without User=: podvisor sets a group only with a user (user: root:"+st.group+" if podvisor runs as root)")
	}
	if st.user != "" || st.group != "" {
		r.AsIs(f.src.Path, f.name+": User/Group")
	}
	if p.User == nil && len(p.AmbientCaps) > 0 {
		note(p, r, f.src.Path, "capabilities", "AmbientCapabilities= without User=: the process runs as root, which holds every capability already; left out")
		p.AmbientCaps = nil
	}
}

// serviceRestart sets restart: from Restart= and RestartSec=.
func (c *sdConv) serviceRestart(f *unitFile, p *Process, st svcKeys) {
	r := c.r
	restart := st.restart
	switch restart {
	case "", "no":
		if p.Type == config.Service {
			setRestart(p, config.Never)
			note(p, r, f.src.Path, "restart", "Restart=no (systemd's default): a failure tears everything down under podvisor, where systemd would leave the unit failed")
		}
	case "always":
		setRestart(p, config.Always)
	case "on-failure":
		setRestart(p, config.OnFailure)
	case "on-abnormal", "on-abort", "on-watchdog":
		setRestart(p, config.OnFailure)
		note(p, r, f.src.Path, "restart", "Restart="+restart+": on-failure also restarts on a non-zero exit code")
	case "on-success":
		setRestart(p, config.Always)
		note(p, r, f.src.Path, "restart", "Restart=on-success: podvisor has no such policy; always")
	default:
		r.Fail(f.src.Path, f.name+": Restart", fmt.Sprintf("%q is not a restart policy", restart))
	}
	switch {
	case f.typ == "forking" && p.Type == config.Oneshot && p.Written.Restart: // without PIDFile= (systemd_guess.go)
		p.Restart.Policy = config.OnFailure
		note(p, r, f.src.Path, "restart", "Restart="+restart+": systemd restarts the unit when the daemon it guessed dies, which podvisor does not see; on-failure retries a start command that fails")
	case p.Type == config.Oneshot && p.Written.Restart && p.Restart.Policy == config.Always:
		p.Restart.Policy = config.OnFailure
		note(p, r, f.src.Path, "restart", "restart always is not allowed on a oneshot; on-failure")
	}
	if st.restartDelay > 0 {
		if !p.Written.Restart {
			setRestart(p, config.Always)
			if p.Type != config.Service {
				p.Restart.Policy = config.OnFailure
			}
		}
		p.Restart.Backoff, p.Restart.MaxBackoff = st.restartDelay, st.restartDelay
		r.AsIs(f.src.Path, f.name+": RestartSec (a fixed backoff)")
	}
	if restart != "" && restart != "no" {
		r.AsIs(f.src.Path, f.name+": Restart="+restart)
	}
}

var timespanPart = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9.]+)\s*([a-z]*)\s*`) })

// parseTimespan reads systemd's time spans: "90", "5min 30s", "500ms",
// "infinity" (0: no limit).
func parseTimespan(s string) (time.Duration, bool) {
	s = strings.TrimSpace(s)
	if s == "infinity" {
		return 0, true
	}
	units := map[string]time.Duration{
		"": time.Second, "us": time.Microsecond, "usec": time.Microsecond, "ms": time.Millisecond, "msec": time.Millisecond,
		"s": time.Second, "sec": time.Second, "second": time.Second, "seconds": time.Second,
		"m": time.Minute, "min": time.Minute, "minute": time.Minute, "minutes": time.Minute,
		"h": time.Hour, "hr": time.Hour, "hour": time.Hour, "hours": time.Hour,
		"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	}
	var total time.Duration
	rest := s
	for rest != "" {
		m := timespanPart().FindStringSubmatch(rest)
		if m == nil {
			return 0, false
		}
		f, err := strconv.ParseFloat(m[1], 64)
		u, ok := units[m[2]]
		if err != nil || !ok || f > 1e7 {
			return 0, false
		}
		total += time.Duration(f * float64(u))
		rest = rest[len(m[0]):]
	}
	if s == "" {
		return 0, false
	}
	return total.Round(time.Millisecond), true
}

// sdUnescape undoes systemd's unit-name escaping for %I and %P: "-" is "/", and
// \xNN is the byte NN.
func sdUnescape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '-':
			b.WriteByte('/')
		case s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x':
			if n, err := strconv.ParseUint(s[i+2:i+4], 16, 8); err == nil && n != 0 {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
			b.WriteByte(s[i])
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
