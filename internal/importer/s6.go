package importer

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/graph"
	"golang.org/x/sys/unix"
)

// ConvertS6 converts an s6-overlay layout: v3 s6-rc.d source definition
// directories (…/s6-rc.d/NAME/type, run, up, finish, dependencies.d/,
// notification-fd, timeout-*, producer-for, consumer-for, pipeline-name,
// contents.d/), the user and user2 bundles (in s6-rc.d or user-bundles.d)
// and the legacy directories (…/cont-init.d/*, …/services.d/NAME/run and
// its log/ logger, …/cont-finish.d/*). files holds every regular file of
// the tree, by its path; scripts and working directories are referenced by
// those paths, so a tree read at the image's paths (import --root) gives
// the image's paths.
//
// The order is s6-overlay's stage 2: the cont-init.d scripts one after the
// other in name order, then the user bundle (following dependencies), then
// services.d, then the user2 services that depend on legacy-services.
func ConvertS6(files []Source, opt Options) (*Model, *Report, error) {
	c := &s6Conv{r: &Report{}, m: &Model{}, opt: opt, files: map[string]Source{}, dropped: map[string]bool{}, baseExt: map[string]bool{}, afterLegacy: map[*Process]bool{}}
	for _, f := range files {
		c.files[f.Path] = f
	}
	c.m.Header = []string{
		"Converted by podvisor import from an s6-overlay tree.",
		"Scripts run from where they were found, each service in its service directory;",
		"with-contenv is not needed: podvisor passes its own environment (the",
		"container's) to every process.",
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
	// dropped are the services left out (not started, or loggers whose
	// input podvisor cannot pipe): dependencies on them are left out too.
	dropped map[string]bool
	// baseExt are the base image's services the tree only adds
	// dependencies to (baseExtension): a dependency on one is one on those.
	baseExt map[string]bool
	// afterLegacy are the services that depend on legacy-services.
	afterLegacy map[*Process]bool
	// noKill: some service has neither timeout-kill nor timeout-down.
	noKill bool
}

type s6Service struct {
	name string
	dir  string // the service (definition) directory
	typ  string // longrun, oneshot, bundle
	deps []string
	// members of a bundle
	contents []string
	notify   bool
	// pipelines: the consumer this service's stdout goes to, the
	// producers whose stdout is its stdin, the bundle a last consumer names
	producerFor  string
	consumerFor  []string
	pipelineName string
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

// s6-overlay's own services: a dependency on them orders nothing podvisor
// has (base and legacy-cont-init are the cont-init.d scripts, which every
// converted s6-rc service waits for; legacy-services is handled apart).
var s6Own = map[string]bool{"base": true, "legacy-cont-init": true, "fix-attrs": true, "s6rc-oneshot-runner": true, "s6rc-fdholder": true}

func (c *s6Conv) convert(files []Source) error {
	services := map[string]*s6Service{}
	var order []string
	get := func(name, dir string) *s6Service {
		s := services[name]
		if s == nil {
			s = &s6Service{name: name, dir: dir}
			services[name] = s
			order = append(order, name)
		}
		return s
	}
	// user-bundles.d (s6-overlay 3.1's place for the user bundles) is
	// ignored by s6-overlay when s6-rc.d/user exists.
	userInRC := false
	for _, f := range files {
		if _, name, _, ok := segment(f.Path, "s6-rc.d"); ok && name == "user" {
			userInRC = true
		}
	}
	v2 := map[string]string{} // services.d name -> dir
	var v2order, inits, finishes []string
	for _, f := range files {
		if dir, name, rest, ok := segment(f.Path, "user-bundles.d"); ok {
			if userInRC {
				c.r.Drop(f.Path, "user-bundles.d/"+name, "s6-overlay ignores user-bundles.d when s6-rc.d/user exists")
				continue
			}
			s := get(name, dir)
			s.typ = "bundle"
			if m, ok := strings.CutPrefix(rest, "contents.d/"); ok {
				s.contents = append(s.contents, m)
			}
			continue
		}
		if dir, name, rest, ok := segment(f.Path, "s6-rc.d"); ok {
			s := get(name, dir)
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
			case rest == "producer-for":
				s.producerFor = strings.TrimSpace(string(f.Data))
			case rest == "consumer-for":
				s.consumerFor = strings.Fields(string(f.Data))
			case rest == "pipeline-name":
				s.pipelineName = strings.TrimSpace(string(f.Data))
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
	c.pipelineBundles(services, &order)
	// s6-overlay runs cont-init.d in s6-sort order: bytewise, as sort.Strings.
	sort.Strings(inits)
	sort.Strings(finishes)
	sort.Strings(v2order)
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
		c.r.AsIs(p, "cont-init.d/"+path.Base(p)+" (a oneshot, after the one before it in name order)")
		c.m.Processes = append(c.m.Processes, proc)
		prev = proc.Name
	}
	for _, p := range finishes {
		c.r.Drop(p, "cont-finish.d/"+path.Base(p), "podvisor runs nothing after teardown; move it into a process's stop.command")
	}
	// v3 s6-rc: what the user and user2 bundles start.
	inUser, inUser2, hasBundles := c.userBundles(services)
	for _, name := range order {
		s := services[name]
		switch {
		case name == "user" || name == "user2" || s6Own[name] || s.typ == "bundle":
		case c.baseExtension(s):
			// An image built FROM an s6-overlay base (linuxserver's, say)
			// adds to the dependencies of the base's services: their type
			// and scripts are in the base image, not in this tree.
			c.r.Approx(s.dir, name, "no type, run or up file: a service of the base image this tree only adds dependencies to; left out: what depends on it waits for what this tree adds to it instead (import the whole image's root with --root to keep the base's own steps)")
			c.dropped[name] = true
			c.baseExt[name] = true
		case hasBundles && !inUser[name] && !inUser2[name]:
			c.r.Drop(s.dir, name, "in neither the user nor the user2 bundle: s6-overlay does not start it")
			c.dropped[name] = true
		case len(s.consumerFor) > 0:
			c.dropped[name] = true // a logger: see pipelines
		}
	}
	sort.Strings(order)
	var user, user2 []*Process
	var consumers []*s6Service
	for _, name := range order {
		s := services[name]
		switch {
		case name == "user" || name == "user2":
			continue
		case s.typ == "bundle":
			c.r.AsIs(s.dir, "bundle "+name+" (dependencies on it become dependencies on its members)")
			continue
		case c.dropped[name] && len(s.consumerFor) == 0:
			continue
		case len(s.consumerFor) > 0:
			consumers = append(consumers, s)
			continue
		}
		p, err := c.rcService(s, services, prev)
		if err != nil {
			return err
		}
		if p == nil {
			continue
		}
		if hasBundles && !inUser[name] {
			user2 = append(user2, p)
		} else {
			user = append(user, p)
		}
	}
	for _, s := range consumers {
		c.consumer(s, services)
	}
	// services.d: started by legacy-services, which depends on base (the
	// cont-init.d scripts) and on the user bundle.
	var legacy []*Process
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
		for _, u := range user {
			p.DependsOn = append(p.DependsOn, Dep{Name: u.Name, Condition: upCondition(u)})
		}
		c.r.AsIs(dir+"/run", name+" (a service, after the cont-init.d scripts and the user bundle)")
		c.servicedir(p, name, dir)
		if !p.Written.StopTimeout {
			c.noKill = true
		}
		if _, ok := c.files[dir+"/log/run"]; ok {
			c.legacyLogger(p, name, dir+"/log")
		}
		c.m.Processes = append(c.m.Processes, p)
		legacy = append(legacy, p)
	}
	// user2 services that depend on legacy-services start after them.
	for _, p := range append(user, user2...) {
		if !c.afterLegacy[p] {
			continue
		}
		for _, l := range legacy {
			p.DependsOn = append(p.DependsOn, Dep{Name: l.Name, Condition: graph.Started})
		}
	}
	if c.noKill {
		c.r.Approx("", "no timeout-kill", "s6 never sends SIGKILL to a service without timeout-kill (s6-overlay's shutdown kills what is left S6_KILL_GRACETIME, 3 s, after its end); podvisor sends it after stop.timeout, 10s by default")
	}
	if len(inits) > 0 || c.hasOneshot() {
		c.r.Approx("", "S6_BEHAVIOUR_IF_STAGE2_FAILS", "a failing cont-init.d script or oneshot ends the run (as S6_BEHAVIOUR_IF_STAGE2_FAILS=2); s6-overlay's default 0 goes on without it")
	}
	return nil
}

func (c *s6Conv) hasOneshot() bool {
	for _, p := range c.m.Processes {
		if p.Type == config.Oneshot {
			return true
		}
	}
	return false
}

// upCondition is when s6-rc deems a service up: a oneshot completed, a
// longrun with notification-fd ready, another longrun started.
func upCondition(p *Process) graph.Condition {
	switch {
	case p.Type == config.Oneshot:
		return graph.Completed
	case p.Ready != nil && p.Ready.Kind == config.ProbeNotifyFD:
		return graph.Ready
	}
	return graph.Started
}

// pipelineBundles adds the bundle a last consumer's pipeline-name names:
// every service of the pipeline that ends at it (s6-rc-compile).
func (c *s6Conv) pipelineBundles(services map[string]*s6Service, order *[]string) {
	for _, name := range append([]string{}, *order...) {
		s := services[name]
		if s.pipelineName == "" || len(s.consumerFor) == 0 || s.producerFor != "" {
			continue
		}
		if _, taken := services[s.pipelineName]; taken {
			continue
		}
		b := &s6Service{name: s.pipelineName, dir: s.dir + "/pipeline-name", typ: "bundle"}
		seen := map[string]bool{}
		var walk func(n string, depth int)
		walk = func(n string, depth int) {
			if seen[n] || depth > 64 {
				return
			}
			seen[n] = true
			b.contents = append(b.contents, n)
			if m, ok := services[n]; ok {
				for _, p := range m.consumerFor {
					walk(p, depth+1)
				}
			}
		}
		walk(name, 0)
		services[b.name] = b
		*order = append(*order, b.name)
	}
}

// userBundles returns the services the user and user2 bundles (and
// bundles in them) contain, and whether the tree defines either.
func (c *s6Conv) userBundles(services map[string]*s6Service) (user, user2 map[string]bool, ok bool) {
	collect := func(bundle string) map[string]bool {
		in := map[string]bool{}
		u, found := services[bundle]
		if !found || u.typ != "bundle" {
			return in
		}
		ok = true
		var add func(n string, depth int)
		add = func(n string, depth int) {
			if in[n] || depth > 64 {
				return
			}
			in[n] = true
			if s, found := services[n]; found {
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
	user, user2 = collect("user"), collect("user2")
	return user, user2, ok
}

// expandDep resolves a dependency name: a bundle's members.
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

// rcService converts one s6-rc longrun or oneshot; nil when it could not
// be (the report says why).
func (c *s6Conv) rcService(s *s6Service, services map[string]*s6Service, initDone string) (*Process, error) {
	r := c.r
	p := newProcess(sanitizeName(s.name), s.dir)
	switch s.typ {
	case "longrun":
		if _, ok := c.files[s.dir+"/run"]; !ok {
			r.Fail(s.dir, s.name, "longrun without a run script")
			return nil, nil
		}
		if !c.script(p, s.dir+"/run") {
			return nil, nil
		}
		r.AsIs(s.dir+"/type", s.name+": longrun (a service)")
		c.servicedir(p, s.name, s.dir)
	case "oneshot":
		up, ok := c.read(s.dir + "/up")
		if !ok {
			r.Fail(s.dir, s.name, "oneshot without an up file")
			return nil, nil
		}
		p.Type = config.Oneshot
		c.up(p, s.dir+"/up", up)
		if _, ok := c.files[s.dir+"/down"]; ok {
			r.Drop(s.dir+"/down", s.name+": down", "podvisor runs nothing when a completed oneshot is stopped")
		}
	case "":
		r.Fail(s.dir, s.name, "no type file (want longrun, oneshot or bundle)")
		return nil, nil
	default:
		return nil, &ParseError{Pos: s.dir + "/type:1", Msg: fmt.Sprintf("unknown type %q (want longrun, oneshot or bundle)", s.typ)}
	}
	c.rcTimeouts(p, s)
	if p.Type == config.Service && !p.Written.StopTimeout {
		c.noKill = true
	}
	p.DependsOn = append(p.DependsOn, c.depList(s, services)...)
	if slices.Contains(s.deps, "legacy-services") {
		c.afterLegacy[p] = true
	}
	if initDone != "" {
		p.DependsOn = append(p.DependsOn, Dep{Name: initDone, Condition: graph.Completed})
	}
	c.m.Processes = append(c.m.Processes, p)
	return p, nil
}

// depList converts s's dependencies.d: on a oneshot `completed`, on a
// longrun with notification-fd `ready`, on another longrun `started` (what
// s6-rc waits for); a bundle stands for its members. s6-overlay's own
// services are ordered otherwise (see convert).
func (c *s6Conv) depList(s *s6Service, services map[string]*s6Service) []Dep {
	r := c.r
	var out []Dep
	seen := map[string]bool{}
	for _, d := range s.deps {
		switch {
		case d == "legacy-services":
			r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on legacy-services (started after every services.d service)")
			continue
		case s6Own[d]:
			r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on "+d+" (s6-overlay's own: after the cont-init.d scripts)")
			continue
		}
		for _, m := range c.expandExt(expandDep(d, services, 0), services, 0) {
			dep, ok := services[m]
			switch {
			case s6Own[m] || m == "legacy-services":
				continue
			case !ok:
				// A service of the base image the tree is built on (its
				// own services are not in a checkout of the image's repo).
				r.Approx(s.dir+"/dependencies.d/"+d, s.name+": depends on "+m, "no such service in this tree (one of the base image's?): left out, so "+s.name+" does not wait for it; import the whole image's root with --root to keep it")
				continue
			case c.dropped[m]:
				r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on "+m+" (left out, and this dependency with it)")
				continue
			case seen[m]:
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
			out = append(out, Dep{Name: sanitizeName(m), Condition: cond})
			r.AsIs(s.dir+"/dependencies.d/"+d, s.name+": depends on "+m+" ("+cond.String()+")")
		}
	}
	return out
}

// rcTimeouts converts s6-rc's timeout-up and timeout-down (milliseconds,
// 0 or none: no limit) of a longrun or oneshot.
func (c *s6Conv) rcTimeouts(p *Process, s *s6Service) {
	r := c.r
	if v, ok := c.read(s.dir + "/timeout-up"); ok {
		ms, err := strconv.Atoi(v)
		switch {
		case err != nil || ms < 0:
			r.Fail(s.dir+"/timeout-up:1", s.name+": timeout-up "+strconv.Quote(v), "want milliseconds (0: no limit)")
		case p.Type == config.Oneshot && ms > 0:
			r.Drop(s.dir+"/timeout-up", s.name+": timeout-up", "podvisor sets no time limit on a oneshot's run; s6-rc gives up on it after "+v+" ms")
		case ms == 0:
			r.AsIs(s.dir+"/timeout-up", s.name+": timeout-up 0 (no limit, podvisor's default)")
		default:
			p.StartTimeout = time.Duration(ms) * time.Millisecond
			r.AsIs(s.dir+"/timeout-up", s.name+": timeout-up (start_timeout)")
		}
	}
	v, ok := c.read(s.dir + "/timeout-down")
	if !ok {
		return
	}
	ms, err := strconv.Atoi(v)
	switch {
	case err != nil || ms < 0:
		r.Fail(s.dir+"/timeout-down:1", s.name+": timeout-down "+strconv.Quote(v), "want milliseconds (0: no limit)")
	case p.Type == config.Oneshot:
		r.Drop(s.dir+"/timeout-down", s.name+": timeout-down", "it bounds the down script, which podvisor does not run")
	case p.Written.StopTimeout:
		r.AsIs(s.dir+"/timeout-down", s.name+": timeout-down (s6-rc's wait; the stop ends with timeout-kill's SIGKILL)")
	case ms == 0:
		setStopTimeout(p, maxDuration)
		note(p, r, s.dir+"/timeout-down", "stop", "timeout-down 0: s6-rc waits for the stop without limit, and no timeout-kill sends SIGKILL; podvisor's longest stop.timeout, 24h (shutdown_timeout still bounds a teardown)")
	default:
		setStopTimeout(p, time.Duration(ms)*time.Millisecond)
		note(p, r, s.dir+"/timeout-down", "stop", "timeout-down "+v+" ms: s6-rc gives up waiting for the stop then; podvisor sends SIGKILL then")
	}
}

// servicedir converts what s6-supervise reads in a service directory
// (s6-rc longruns and services.d alike): the working directory, timeout-
// kill, down-signal, notification-fd, and the finish script.
func (c *s6Conv) servicedir(p *Process, name, dir string) {
	r := c.r
	p.WorkingDir = dir
	r.AsIs(dir, name+": working_dir "+dir+" (s6-supervise runs ./run in its service directory; s6-overlay's live copy under /run holds the same files)")
	if v, ok := c.read(dir + "/notification-fd"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 3 || n > 1023 {
			r.Fail(dir+"/notification-fd:1", name, fmt.Sprintf("notification-fd %q: want a number from 3 to 1023 (podvisor keeps 0, 1 and 2 for stdin and the log)", v))
		} else {
			p.Ready = &Probe{Kind: config.ProbeNotifyFD, FD: n}
			r.AsIs(dir+"/notification-fd", name+": notification-fd (ready: {notify: fd:"+v+"}, ready at the first newline)")
		}
	}
	if v, ok := c.read(dir + "/timeout-kill"); ok {
		ms, err := strconv.Atoi(v)
		switch {
		case err != nil || ms < 0:
			r.Fail(dir+"/timeout-kill:1", name+": timeout-kill "+strconv.Quote(v), "want milliseconds (0: never SIGKILL)")
		case ms == 0:
			setStopTimeout(p, maxDuration)
			note(p, r, dir+"/timeout-kill", "stop", "timeout-kill 0: s6 never sends SIGKILL; podvisor's longest stop.timeout, 24h (shutdown_timeout still bounds a teardown)")
		default:
			setStopTimeout(p, time.Duration(ms)*time.Millisecond)
			r.AsIs(dir+"/timeout-kill", name+": timeout-kill (stop.timeout: SIGKILL that long after the stop signal)")
		}
	}
	if _, ok := c.files[dir+"/flag-timeout-killpg"]; ok {
		r.AsIs(dir+"/flag-timeout-killpg", name+": flag-timeout-killpg (podvisor kills the process group)")
	}
	if v, ok := c.read(dir + "/down-signal"); ok {
		switch sig := signalName(v); {
		case sig == "SIGKILL":
			setStopTimeout(p, 0)
			note(p, r, dir+"/down-signal", "stop", "down-signal SIGKILL: stop.timeout 0s (podvisor refuses SIGKILL as the stop signal)")
		case sig != "":
			p.Stop.Signal = unix.SignalNum(sig)
			r.AsIs(dir+"/down-signal", name+": down-signal (stop.signal)")
		default:
			r.Fail(dir+"/down-signal:1", name+": down-signal "+strconv.Quote(v), "not a signal podvisor knows; write its name (TERM, HUP, INT, QUIT, USR1...)")
		}
	}
	if _, ok := c.files[dir+"/timeout-finish"]; ok {
		r.Drop(dir+"/timeout-finish", name+": timeout-finish", "it bounds the finish script, which podvisor does not run")
	}
	c.finish(p, dir)
}

// baseExtension reports whether s is a directory with neither a type file
// nor a script: how an image adds dependencies to its base image's service.
func (c *s6Conv) baseExtension(s *s6Service) bool {
	if s.typ != "" {
		return false
	}
	for _, f := range []string{"/run", "/up", "/finish"} {
		if _, ok := c.files[s.dir+f]; ok {
			return false
		}
	}
	return true
}

// expandExt replaces each base-image service in names that the tree only
// adds dependencies to (baseExtension) by those dependencies, so that
// what waited for it still waits for the tree's services it would have
// waited for (init-config-end for the image's own init-* oneshots).
func (c *s6Conv) expandExt(names []string, services map[string]*s6Service, depth int) []string {
	var out []string
	for _, m := range names {
		if !c.baseExt[m] || depth > 64 {
			out = append(out, m)
			continue
		}
		for _, d := range services[m].deps {
			out = append(out, c.expandExt(expandDep(d, services, 0), services, depth+1)...)
		}
	}
	return out
}
