package importer

import (
	"fmt"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"golang.org/x/sys/unix"
)

// ConvertS6 converts an s6-overlay layout: v3 s6-rc.d service directories
// (…/s6-rc.d/NAME/type, run, up, dependencies.d/, notification-fd,
// timeout-up, timeout-down, contents.d/, and the user bundle) and v2
// directories (…/services.d/NAME/run, …/cont-init.d/*, …/cont-finish.d/*).
// files holds every regular file of the tree, by its path; scripts are
// referenced by those paths.
func ConvertS6(files []Source, opt Options) (*Model, *Report, error) {
	c := &s6Conv{r: &Report{}, m: &Model{}, opt: opt, files: map[string]Source{}}
	for _, f := range files {
		c.files[f.Path] = f
	}
	c.m.Header = []string{
		"Converted by podvisor import from an s6-overlay tree.",
		"Scripts run from where they were found; with-contenv is not needed: podvisor",
		"passes its own environment (the container's) to every process.",
	}
	if err := c.convert(files); err != nil {
		return nil, nil, err
	}
	if len(c.m.Processes) == 0 {
		return nil, nil, &ParseError{Pos: "", Msg: "no s6-overlay service found (want s6-rc.d/NAME/type, services.d/NAME/run or cont-init.d/*)"}
	}
	uniqueNames(c.m, c.r)
	finish(c.m, c.r)
	return c.m, c.r, nil
}

type s6Conv struct {
	r     *Report
	m     *Model
	opt   Options
	files map[string]Source
}

type s6Service struct {
	name string
	dir  string // the service directory
	typ  string // longrun, oneshot, bundle
	deps []string
	// members of a bundle
	contents []string
	notify   bool
}

// segment finds ".../<marker>/NAME/rest" in p.
func segment(p, marker string) (dir, name, rest string, ok bool) {
	i := strings.LastIndex(p, "/"+marker+"/")
	if i < 0 {
		if !strings.HasPrefix(p, marker+"/") {
			return "", "", "", false
		}
		i = -1
	}
	after := p[i+len(marker)+2:]
	name, rest, _ = strings.Cut(after, "/")
	return p[:i+len(marker)+2] + name, name, rest, true
}

func (c *s6Conv) read(p string) (string, bool) {
	f, ok := c.files[p]
	return strings.TrimSpace(string(f.Data)), ok
}

func (c *s6Conv) convert(files []Source) error {
	services := map[string]*s6Service{}
	var order []string
	v2 := map[string]string{} // services.d name -> dir
	var v2order, inits, finishes []string
	for _, f := range files {
		if dir, name, rest, ok := segment(f.Path, "s6-rc.d"); ok {
			s := services[name]
			if s == nil {
				s = &s6Service{name: name, dir: dir}
				services[name] = s
				order = append(order, name)
			}
			switch {
			case rest == "type":
				s.typ = strings.TrimSpace(string(f.Data))
			case strings.HasPrefix(rest, "dependencies.d/"):
				s.deps = append(s.deps, strings.TrimPrefix(rest, "dependencies.d/"))
			case rest == "dependencies":
				s.deps = append(s.deps, strings.Fields(string(f.Data))...)
			case strings.HasPrefix(rest, "contents.d/"):
				s.contents = append(s.contents, strings.TrimPrefix(rest, "contents.d/"))
			case rest == "contents":
				s.contents = append(s.contents, strings.Fields(string(f.Data))...)
			case rest == "notification-fd":
				s.notify = true
			}
			continue
		}
		if dir, name, rest, ok := segment(f.Path, "services.d"); ok {
			if _, seen := v2[name]; !seen && (rest == "run" || rest == "finish" || rest == "down") {
				v2[name] = dir
				v2order = append(v2order, name)
			}
			continue
		}
		if _, _, rest, ok := segment(f.Path, "cont-init.d"); ok && rest == "" {
			inits = append(inits, f.Path)
			continue
		}
		if _, _, rest, ok := segment(f.Path, "cont-finish.d"); ok && rest == "" {
			finishes = append(finishes, f.Path)
		}
	}
	sort.Strings(inits)
	sort.Strings(finishes)
	// v2 cont-init.d: oneshots, one after the other.
	prev := ""
	for _, p := range inits {
		proc := newProcess(sanitizeName("init-"+strings.TrimPrefix(path.Base(p), "init-")), p)
		proc.Type = config.Oneshot
		if !c.script(proc, p) {
			continue
		}
		if prev != "" {
			proc.DependsOn = []Dep{{Name: prev, Condition: graph.Completed}}
		}
		c.r.AsIs(p, "cont-init.d/"+path.Base(p)+" (a oneshot, in name order)")
		c.m.Processes = append(c.m.Processes, proc)
		prev = proc.Name
	}
	for _, p := range finishes {
		c.r.Drop(p, "cont-finish.d/"+path.Base(p), "podvisor runs nothing after teardown; move it into a process's stop.command")
	}
	// v3 s6-rc.d
	inUser := c.userBundle(services)
	sort.SliceStable(order, func(i, j int) bool { return order[i] < order[j] })
	for _, name := range order {
		s := services[name]
		switch {
		case name == "user" || name == "user2" || name == "base":
			continue
		case s.typ == "bundle":
			c.r.AsIs(s.dir, "bundle "+name+" (dependencies on it become dependencies on its members)")
			continue
		case inUser != nil && !inUser[name]:
			c.r.Drop(s.dir, name, "not in the user bundle: s6-overlay does not start it")
			continue
		}
		if err := c.rcService(s, services, prev); err != nil {
			return err
		}
	}
	// v2 services.d: longruns after every cont-init.d script.
	for _, name := range v2order {
		dir := v2[name]
		if _, ok := c.files[dir+"/down"]; ok {
			c.r.Drop(dir+"/down", name, "a down file: s6 does not start it")
			continue
		}
		if _, ok := c.files[dir+"/run"]; !ok {
			c.r.Fail(dir, name, "no run script")
			continue
		}
		p := newProcess(sanitizeName(name), dir)
		if !c.script(p, dir+"/run") {
			continue
		}
		if prev != "" {
			p.DependsOn = []Dep{{Name: prev, Condition: graph.Completed}}
		}
		c.r.AsIs(dir+"/run", name+" (a service)")
		c.finish(p, dir)
		c.m.Processes = append(c.m.Processes, p)
	}
	return nil
}

// userBundle returns the services the user bundle (and bundles in it)
// contains, or nil when the tree has no user bundle.
func (c *s6Conv) userBundle(services map[string]*s6Service) map[string]bool {
	u, ok := services["user"]
	if !ok || u.typ != "bundle" {
		return nil
	}
	in := map[string]bool{}
	var add func(n string, depth int)
	add = func(n string, depth int) {
		if in[n] || depth > 64 {
			return
		}
		in[n] = true
		if s, ok := services[n]; ok {
			if s.typ == "bundle" {
				for _, m := range s.contents {
					add(m, depth+1)
				}
			}
			// what a started service depends on is started too
			for _, d := range s.deps {
				add(d, depth+1)
			}
		}
	}
	for _, m := range u.contents {
		add(m, 0)
	}
	return in
}

// expand resolves a dependency name: a bundle's members, base dropped.
func expandDep(name string, services map[string]*s6Service, depth int) []string {
	s, ok := services[name]
	if !ok || depth > 64 {
		return []string{name}
	}
	if s.typ != "bundle" {
		return []string{name}
	}
	var out []string
	for _, m := range s.contents {
		out = append(out, expandDep(m, services, depth+1)...)
	}
	return out
}

func (c *s6Conv) rcService(s *s6Service, services map[string]*s6Service, initDone string) error {
	r := c.r
	p := newProcess(sanitizeName(s.name), s.dir)
	switch s.typ {
	case "longrun":
		if _, ok := c.files[s.dir+"/run"]; !ok {
			r.Fail(s.dir, s.name, "longrun without a run script")
			return nil
		}
		if !c.script(p, s.dir+"/run") {
			return nil
		}
		r.AsIs(s.dir+"/type", s.name+": longrun (a service)")
		c.finish(p, s.dir)
	case "oneshot":
		up, ok := c.read(s.dir + "/up")
		if !ok {
			r.Fail(s.dir, s.name, "oneshot without an up file")
			return nil
		}
		p.Type = config.Oneshot
		c.up(p, s.dir+"/up", up)
		if _, ok := c.files[s.dir+"/down"]; ok {
			r.Drop(s.dir+"/down", s.name+": down", "podvisor runs nothing when a completed oneshot is stopped")
		}
	case "":
		r.Fail(s.dir, s.name, "no type file (want longrun, oneshot or bundle)")
		return nil
	default:
		return &ParseError{Pos: s.dir + "/type:1", Msg: fmt.Sprintf("unknown type %q (want longrun, oneshot or bundle)", s.typ)}
	}
	if v, ok := c.read(s.dir + "/notification-fd"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 3 || n > 1023 {
			r.Fail(s.dir+"/notification-fd:1", s.name, fmt.Sprintf("notification-fd %q: want a number from 3 to 1023", v))
		} else {
			p.Ready = &Probe{Kind: config.ProbeNotifyFD, FD: n}
			r.AsIs(s.dir+"/notification-fd", s.name+": notification-fd (ready: {notify: fd:"+v+"})")
		}
	}
	if v, ok := c.read(s.dir + "/timeout-up"); ok {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			p.StartTimeout = time.Duration(ms) * time.Millisecond
			r.AsIs(s.dir+"/timeout-up", s.name+": timeout-up")
		}
	}
	if v, ok := c.read(s.dir + "/timeout-down"); ok {
		if ms, err := strconv.Atoi(v); err == nil && ms > 0 {
			setStopTimeout(p, time.Duration(ms)*time.Millisecond)
			r.AsIs(s.dir+"/timeout-down", s.name+": timeout-down")
		}
	}
	if v, ok := c.read(s.dir + "/down-signal"); ok {
		if sig := signalName(v); sig != "" && sig != "SIGKILL" {
			p.Stop.Signal = unix.SignalNum(sig)
			r.AsIs(s.dir+"/down-signal", s.name+": down-signal")
		}
	}
	for _, x := range []string{"producer-for", "consumer-for", "pipeline-name"} {
		if _, ok := c.files[s.dir+"/"+x]; ok {
			r.Drop(s.dir+"/"+x, s.name+": "+x, "podvisor collects every process's output itself; a logger pipeline is not needed")
		}
	}
	seen := map[string]bool{}
	for _, d := range s.deps {
		if d == "base" || d == "legacy-cont-init" || d == "legacy-services" || d == "fix-attrs" {
			r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on "+d+" (s6-overlay's own; podvisor has nothing to wait for)")
			continue
		}
		for _, m := range expandDep(d, services, 0) {
			dep, ok := services[m]
			if !ok {
				r.Fail(s.dir+"/dependencies.d/"+d, s.name+": dependency "+m, "no such service in the tree")
				continue
			}
			if seen[m] {
				continue
			}
			seen[m] = true
			cond := graph.Started
			switch {
			case dep.typ == "oneshot":
				cond = graph.Completed
			case dep.notify:
				cond = graph.Ready
			}
			p.DependsOn = append(p.DependsOn, Dep{Name: sanitizeName(m), Condition: cond})
			r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on "+m+" ("+cond.String()+")")
		}
	}
	if initDone != "" {
		p.DependsOn = append(p.DependsOn, Dep{Name: initDone, Condition: graph.Completed})
	}
	c.m.Processes = append(c.m.Processes, p)
	return nil
}

// finish reports a finish script: dropped, or, when it halts the
// container, the process becomes a job.
func (c *s6Conv) finish(p *Process, dir string) {
	f, ok := c.read(dir + "/finish")
	if !ok {
		return
	}
	if strings.Contains(f, "s6-svscanctl -t") || strings.Contains(f, "/run/s6/basedir/bin/halt") {
		p.Type = config.Job
		note(p, c.r, dir+"/finish", "type", "the finish script stops the container when it exits: a job (podvisor tears everything down when it ends, with its exit code)")
		return
	}
	c.r.Drop(dir+"/finish", p.Name+": finish", "podvisor runs nothing after a process exits; put the clean-up in the run script (trap) or stop.command")
}

// up converts a oneshot's up file: one execline command line. A plain
// command line (words only) becomes the argv; anything using execline
// syntax runs under execlineb -Pc.
func (c *s6Conv) up(p *Process, file, text string) {
	var body []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			body = append(body, t)
		}
	}
	line := strings.Join(body, " ")
	words, err := splitWords(line)
	if err == nil && len(words) > 0 && !strings.ContainsAny(line, "{}$;|&<>") && len(body) == 1 {
		script := words[0]
		if found := c.inTree(words[0]); found != "" {
			script = found
			note(p, c.r, file, "command", "up names "+words[0]+", found in the tree at "+found+"; run the import inside the image to keep the image's path")
		}
		if _, ok := c.files[script]; ok && len(words) == 1 {
			// A script of the tree: converted like a run script, so that
			// its with-contenv #! line is not needed.
			c.r.AsIs(file, p.Name+": up runs "+words[0]+" (a oneshot)")
			c.script(p, script)
			return
		}
		words[0] = script
		c.r.AsIs(file, p.Name+": up (a oneshot)")
		setArgv(&p.Command, &p.Shell, escapeAll(words))
		return
	}
	setArgv(&p.Command, &p.Shell, []string{"execlineb", "-Pc", config.Literal(text)})
	c.noteExecline(p, file, "up")
}

func (c *s6Conv) noteExecline(p *Process, file, what string) {
	if c.opt.HasExecline {
		c.r.AsIs(file, p.Name+": "+what+" (an execline script, run by execlineb as it is)")
		return
	}
	note(p, c.r, file, "command", what+" is an execline script and execlineb is not on this machine: the image that runs this file needs execline")
}

// script converts a run (or cont-init.d) script. A script whose body is a
// single "exec [s6-setuidgid USER] COMMAND" line becomes that command (and
// user); any other script is run by its interpreter from where it is, with
// with-contenv left out.
func (c *s6Conv) script(p *Process, file string) bool {
	text, _ := c.read(file)
	ls := strings.Split(text, "\n")
	var interp []string
	if len(ls) > 0 && strings.HasPrefix(ls[0], "#!") {
		interp = strings.Fields(strings.TrimPrefix(ls[0], "#!"))
		ls = ls[1:]
	}
	if len(interp) > 0 && path.Base(interp[0]) == "with-contenv" {
		interp = interp[1:]
		c.r.AsIs(file, p.Name+": with-contenv (podvisor passes the container's environment)")
	}
	if len(interp) == 0 {
		interp = []string{"/bin/sh"}
	}
	execline := strings.HasPrefix(path.Base(interp[0]), "execlineb")
	// The logical lines of the body: comments and blank lines left out,
	// backslash continuations joined.
	var body []string
	cur := ""
	for _, l := range ls {
		t := strings.TrimSpace(l)
		if cur == "" && (t == "" || strings.HasPrefix(t, "#")) {
			continue
		}
		if strings.HasSuffix(t, "\\") {
			cur += strings.TrimSuffix(t, "\\") + " "
			continue
		}
		body = append(body, strings.TrimSpace(cur+t))
		cur = ""
	}
	if cur != "" {
		body = append(body, strings.TrimSpace(cur))
	}
	shellish := map[string]bool{"sh": true, "bash": true, "ash": true, "dash": true}[path.Base(interp[0])]
	if shellish && len(body) == 1 {
		line := strings.TrimSpace(strings.TrimPrefix(body[0], "exec "))
		if strings.HasPrefix(line, "s6-notifyoncheck ") && !strings.ContainsAny(line, "$`") {
			if words, err := splitWords(line); err == nil {
				if rest, probe, timeout, ok := notifyOnCheck(words[1:], path.Dir(file)); ok && len(rest) > 0 {
					p.Ready = probe
					if p.StartTimeout == 0 {
						p.StartTimeout = timeout
					}
					note(p, c.r, file, "ready", "s6-notifyoncheck: its check became an exec readiness probe with the same timings")
					line = strings.Join(shellQuoteAll(rest), " ")
				}
			}
		}
		words, err := splitWords(line)
		if err == nil && len(words) >= 3 && words[0] == "s6-setuidgid" {
			p.User = user(words[1])
			after := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "s6-setuidgid"))
			line = strings.TrimSpace(after[strings.Index(after, words[1])+len(words[1]):])
			c.r.AsIs(file, p.Name+": s6-setuidgid "+words[1]+" (user: "+words[1]+")")
		}
		setShell(&p.Command, &p.Shell, "exec "+config.Literal(line))
		if path.Base(interp[0]) == "bash" {
			note(p, c.r, file, "command", "the one-line bash script runs under /bin/sh -c")
		} else {
			c.r.AsIs(file, p.Name+": run script (its one command)")
		}
		return true
	}
	if strings.Contains(text, "s6-setuidgid") && shellish {
		note(p, c.r, file, "command", "the script calls s6-setuidgid itself; the image needs s6-setuidgid (or set user: and remove it)")
	}
	setArgv(&p.Command, &p.Shell, escapeAll(append(append([]string{}, interp...), file)))
	if execline {
		c.noteExecline(p, file, "run script")
	} else {
		c.r.AsIs(file, p.Name+": script run by "+strings.Join(interp, " "))
	}
	return true
}

// inTree returns where an absolute path an up file names is in the
// imported tree, when the tree is not at / (a repository's root/ copied
// into the image): the one file whose path ends with it. "" when the path
// is there as it is, or not found, or ambiguous.
func (c *s6Conv) inTree(p string) string {
	if !path.IsAbs(p) {
		return ""
	}
	if _, ok := c.files[p]; ok {
		return ""
	}
	found := ""
	for f := range c.files {
		if strings.HasSuffix(f, p) {
			if found != "" {
				return ""
			}
			found = f
		}
	}
	return found
}

// notifyOnCheck reads s6-notifyoncheck's options (times in ms) and returns
// the program it runs and the readiness probe its check amounts to. With
// no -c, the check is the service's data/check script.
//
// The start timeout is -T, else -s plus -n tries of -w (1 s when not
// given), else 0.
func notifyOnCheck(args []string, dir string) ([]string, *Probe, time.Duration, bool) {
	pr := &Probe{Kind: config.ProbeExec, Command: []string{path.Join(dir, "data", "check")}}
	ms := func(v string) (time.Duration, bool) {
		n, err := strconv.Atoi(v)
		return time.Duration(n) * time.Millisecond, err == nil && n >= 0 && n < 1e9
	}
	tries := 0
	var global time.Duration
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-") && len(args[i]) > 1; i++ {
		opt := args[i]
		if opt == "--" {
			i++
			break
		}
		if opt == "-d" {
			continue
		}
		if i+1 >= len(args) {
			return nil, nil, 0, false
		}
		v := args[i+1]
		i++
		var ok bool
		switch opt {
		case "-s":
			pr.InitialDelay, ok = ms(v)
		case "-t":
			pr.Timeout, ok = ms(v)
		case "-w":
			pr.StartInterval, ok = ms(v)
		case "-T":
			global, ok = ms(v)
		case "-n":
			var err error
			tries, err = strconv.Atoi(v)
			ok = err == nil && tries >= 0
		case "-3":
			ok = true // the notification fd: podvisor needs none for an exec probe
		case "-c":
			pr.Command, pr.Shell, ok = shellForm(config.Literal(v)), true, v != ""
		}
		if !ok {
			return nil, nil, 0, false
		}
	}
	if pr.StartInterval > 0 && pr.StartInterval < 10*time.Millisecond {
		pr.StartInterval = 10 * time.Millisecond
	}
	timeout := global
	if timeout == 0 && tries > 0 {
		w := pr.StartInterval
		if w == 0 {
			w = time.Second
		}
		timeout = pr.InitialDelay + time.Duration(tries)*w
	}
	return args[i:], pr, timeout, true
}
