package config

import (
	"fmt"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/graph"
)

// TestWriteRoundTrip is the property that Write writes every key the
// loader reads: for random valid documents, Write then Parse gives back
// the same processes. Coverage is checked by reflection over Process: a
// field that no generated process set (a new key the generator, and so
// most likely the writer, does not know yet) fails the test, naming it.
func TestWriteRoundTrip(t *testing.T) {
	root, err := resolveUser("0:0")
	if err != nil {
		t.Skipf("no user 0:0 here: %v", err)
	}
	covered := map[string]bool{}
	for seed := uint64(0); seed < 300; seed++ {
		r := rand.New(rand.NewPCG(seed, 37))
		d := randDocument(r, root)
		for _, p := range d.Processes {
			markCovered(reflect.ValueOf(*p), "Process", covered)
		}
		out := Write(d)
		cfg, err := Parse("/etc/podvisor/procs.yaml", out, nil)
		if err != nil {
			t.Fatalf("seed %d: the written document does not load: %v\n%s", seed, err, out)
		}
		for _, want := range d.Processes {
			got := cfg.Processes[want.Name]
			if got == nil {
				t.Fatalf("seed %d: %s not loaded\n%s", seed, want.Name, out)
			}
			w, g := normalized(want), normalized(got)
			if diff := fieldDiff(w, g); diff != "" {
				t.Fatalf("seed %d: %s differs after Write and Parse: %s\n%s", seed, want.Name, diff, out)
			}
		}
	}
	var missing []string
	for _, f := range fieldPaths(reflect.TypeFor[Process](), "Process") {
		if !covered[f] && !notGenerated[f] {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no generated process set %s: teach randProcess (and Write) the new keys", strings.Join(missing, ", "))
	}
}

// notGenerated are Process fields that are not keys of their own: the
// loader derives them (positions, resolved users, compiled patterns), or
// the writer's annotation.
var notGenerated = map[string]bool{
	"Process.Pos": true, "Process.Written": true,
	"Process.Ready.Regexp": true, "Process.Live.Regexp": true, "Process.Startup.Regexp": true,
	"Process.DependsOn.Pos": true, "Process.Restart.Rules.Pos": true, "Process.Sockets.Pos": true,
	"Process.Sockets.Network": true, "Process.Sockets.Address": true,
	"Process.Schedule.sched": true, "Process.Schedule.Location": true,
	// keys of a ready check only
	"Process.Live.FD": true, "Process.Live.WhileStopping": true, "Process.Startup.FD": true, "Process.Startup.WhileStopping": true,
}

// leaf reports whether a struct type is compared as one value: a
// resolved user (its spec is the key), a position, the notes.
func leaf(t reflect.Type) bool {
	return t.Kind() != reflect.Struct || t.PkgPath() != reflect.TypeFor[Process]().PkgPath() ||
		t == reflect.TypeFor[User]() || t == reflect.TypeFor[Pos]() || t == reflect.TypeFor[Written]()
}

// fieldPaths lists the leaf fields of t (through structs, pointers to
// structs and slices of structs), as Type.Field.Field; a resolved User
// is one leaf (its spec is the key).
func fieldPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		path := prefix + "." + f.Name
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if !leaf(ft) {
			out = append(out, fieldPaths(ft, path)...)
			continue
		}
		out = append(out, path)
	}
	return out
}

// markCovered records every leaf field of v that holds a non-zero value.
func markCovered(v reflect.Value, prefix string, covered map[string]bool) {
	for i := range v.NumField() {
		f, fv := v.Type().Field(i), v.Field(i)
		path := prefix + "." + f.Name
		ft := f.Type
		for ft.Kind() == reflect.Pointer || ft.Kind() == reflect.Slice {
			ft = ft.Elem()
		}
		if !leaf(ft) {
			switch fv.Kind() {
			case reflect.Pointer:
				if !fv.IsNil() {
					markCovered(fv.Elem(), path, covered)
				}
			case reflect.Slice:
				for j := range fv.Len() {
					markCovered(fv.Index(j), path, covered)
				}
			default:
				markCovered(fv, path, covered)
			}
			continue
		}
		if !fv.IsZero() {
			covered[path] = true
		}
	}
}

// normalized is a copy of p without what the loader derives or the
// writer annotates (positions, compiled patterns, the Written notes).
func normalized(p *Process) Process {
	c := *p
	c.Pos, c.Written = Pos{}, nil
	for _, pr := range []**Probe{&c.Ready, &c.Live, &c.Startup} {
		if *pr != nil {
			q := **pr
			q.Regexp = nil
			*pr = &q
		}
	}
	c.DependsOn = slices.Clone(c.DependsOn)
	for i := range c.DependsOn {
		c.DependsOn[i].Pos = Pos{}
	}
	c.Restart.Rules = slices.Clone(c.Restart.Rules)
	for i := range c.Restart.Rules {
		c.Restart.Rules[i].Pos = Pos{}
	}
	c.Sockets = slices.Clone(c.Sockets)
	for i := range c.Sockets {
		c.Sockets[i].Pos = Pos{}
	}
	if c.Schedule != nil {
		s := *c.Schedule
		s.sched = nil
		if s.Location != nil {
			s.Location = time.FixedZone(s.Location.String(), 0) // compared by name
		}
		c.Schedule = &s
	}
	return c
}

// fieldDiff names the first field of Process that differs, with both values.
func fieldDiff(want, got Process) string {
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	for i := range w.NumField() {
		if !reflect.DeepEqual(w.Field(i).Interface(), g.Field(i).Interface()) {
			show := func(v reflect.Value) string {
				if v.Kind() == reflect.Pointer && !v.IsNil() {
					v = v.Elem()
				}
				return fmt.Sprintf("%+v", v.Interface())
			}
			return fmt.Sprintf("%s: want %s, got %s", w.Type().Field(i).Name, show(w.Field(i)), show(g.Field(i)))
		}
	}
	return ""
}

// text returns a random string that needs quoting in YAML more often than
// not (no $: the loader would interpolate it).
func text(r *rand.Rand) string {
	parts := []string{"a", "b c", "yes", "no", "a: b", `q"u`, `back\slash`, "#x", "- y", "[z]", "{w}", "é", "line\nbreak", "tab\tx", "'s'", "*", "&a", "!t", "%p", "@at", "0755", "1.5", "null", "~", ""}
	n := 1 + r.IntN(3)
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	if strings.TrimSpace(b.String()) == "" {
		return "x"
	}
	return b.String()
}

func dur(r *rand.Rand) time.Duration {
	return []time.Duration{time.Second, 1500 * time.Millisecond, 250 * time.Millisecond, 90 * time.Second, 2 * time.Hour}[r.IntN(5)]
}

func randCommand(r *rand.Rand) ([]string, bool) {
	if r.IntN(2) == 0 {
		return []string{"/bin/sh", "-c", "exec " + text(r)}, true
	}
	argv := []string{"/usr/bin/" + strings.ReplaceAll(text(r), "\n", "")}
	for range r.IntN(4) {
		argv = append(argv, text(r))
	}
	return argv, false
}

func randProbe(r *rand.Rand, role probeRole, p *Process) *Probe {
	pr := &Probe{
		StartInterval: dur(r), Interval: dur(r), Timeout: dur(r), InitialDelay: dur(r),
		SuccessThreshold: 1 + r.IntN(3), FailureThreshold: 1 + r.IntN(5),
	}
	pr.StopTimeout = dur(r)
	if role == roleReady && r.IntN(2) == 0 {
		pr.WhileStopping = true
	}
	kinds := []ProbeKind{ProbeHTTP, ProbeTCP, ProbeGRPC, ProbeExec, ProbeFile}
	if role == roleReady {
		kinds = append(kinds, ProbeLog, ProbeNotifyFD, ProbeNotifySystemd)
	}
	switch pr.Kind = kinds[r.IntN(len(kinds))]; pr.Kind {
	case ProbeHTTP:
		pr.Target = "http://127.0.0.1:8080/healthz?x=1"
		pr.H2C = r.IntN(2) == 0
	case ProbeTCP:
		pr.Target = "127.0.0.1:5432"
	case ProbeGRPC:
		pr.Target = "[::1]:9090"
		pr.Service = "my.Service"
		pr.TLS = r.IntN(2) == 0
	case ProbeExec:
		pr.Command, pr.Shell = randCommand(r)
	case ProbeFile:
		pr.Target = "/run/ready file"
	case ProbeLog:
		pr.Target = `listening on .*: \d+`
	case ProbeNotifyFD:
		pr.FD = 100 + r.IntN(10) // above any socket or stored fd
		pr.Target = fmt.Sprintf("fd:%d", pr.FD)
	case ProbeNotifySystemd:
		pr.Target = "systemd"
	}
	return pr
}

// randProcess returns a random valid process in the form Parse gives it
// (defaults explicit), named name; earlier are the processes before it,
// which it may depend on.
func randProcess(r *rand.Rand, name string, earlier []*Process, root *User) *Process {
	coin := func() bool { return r.IntN(2) == 0 }
	p := &Process{
		Name:             name,
		Type:             Type(r.IntN(3)),
		WorkingDir:       "/etc/podvisor",
		SuccessExitCodes: []int{0},
		Written:          &Written{Restart: true, StopTimeout: true},
	}
	p.Command, p.Shell = randCommand(r)
	p.Restart = Restart{Policy: Policy(1 + r.IntN(2)), Backoff: time.Second, MaxBackoff: 2 * time.Hour}
	if p.Type == Service && coin() {
		p.Restart.Policy = Always
		p.Restart.Overlap = coin()
	}
	if coin() {
		p.Restart.Limit = 1 + r.IntN(5)
		p.Restart.DuringTermination = coin()
		p.Restart.Rules = []ExitRule{
			{In: []int{3, 4}, Action: RuleRestart},
			{Signals: []syscall.Signal{syscall.SIGSEGV, syscall.SIGTERM}, Action: RuleAction(r.IntN(4))},
			{In: []int{7}, Action: RuleStop},
			{NotIn: []int{0, 3, 4, 7, 139, 143}, Action: RuleShutdown},
		}[:1+r.IntN(4)]
	}
	p.Stop = Stop{Signal: []syscall.Signal{syscall.SIGTERM, syscall.SIGINT, syscall.SIGQUIT, syscall.SIGHUP, syscall.SIGUSR1}[r.IntN(5)], Timeout: dur(r)}
	if coin() {
		p.Stop.Command, p.Stop.Shell = randCommand(r)
		p.Stop.CommandFirst = coin()
		p.Stop.MinGrace = dur(r)
	}
	if coin() {
		p.Env = []string{"A=" + text(r), "B_2=" + text(r), "EMPTY="}
	}
	if coin() {
		p.WorkingDir = "/srv/app dir"
	}
	if coin() { // inside a root, the working directory is the root's
		p.Root = "/var/lib/images/app root"
		p.WorkingDir = []string{"/", "/app"}[r.IntN(2)]
	}
	if coin() {
		p.User = root
	}
	for _, e := range earlier {
		if coin() {
			continue
		}
		cond := graph.Condition(r.IntN(2))
		if e.Type != Service && coin() {
			cond = graph.Completed
		}
		p.DependsOn = append(p.DependsOn, Dependency{Name: e.Name, Condition: cond, Restart: coin()})
	}
	if coin() {
		p.Ready = randProbe(r, roleReady, p)
	}
	if coin() {
		p.StartTimeout = dur(r)
	}
	if coin() {
		p.Live = randProbe(r, roleLive, p)
	}
	if coin() {
		p.Startup = randProbe(r, roleStartup, p)
	}
	if coin() {
		p.SuccessExitCodes = []int{0, 3, 143}
	}
	if coin() {
		p.Watch = &Watch{Paths: []string{"/srv/app/*.go", "/etc/app conf/x.yaml"}, Debounce: dur(r), Cascade: coin()}
		if coin() {
			p.Watch.Ignore = []string{"*.tmp", "/srv/app/gen_*"}
		}
		if coin() {
			p.Watch.Signal = syscall.SIGHUP
		}
	}
	if p.Type == Oneshot && coin() {
		p.Schedule = &Schedule{Location: time.Local, Concurrency: Concurrency(r.IntN(2))}
		if coin() {
			p.Schedule.Cron = "*/5 * * * *"
			if coin() {
				p.Schedule.Location, _ = time.LoadLocation("UTC")
			}
		} else {
			p.Schedule.Every = time.Hour
			p.Schedule.Jitter = dur(r) % time.Hour
		}
	}
	if p.Ready != nil && p.Ready.Kind == ProbeNotifySystemd && coin() {
		p.Watchdog = 5 * time.Second
	}
	if coin() {
		n := -1000 + r.IntN(2001)
		p.OOMScoreAdj = &n
	}
	if coin() {
		p.Limits = []Rlimit{{Name: "nofile", Soft: 1024, Hard: 4096}}
		if coin() {
			p.Limits = append([]Rlimit{{Name: "stack", Soft: RlimInfinity, Hard: RlimInfinity}}, p.Limits...) // LimitNames order
		}
		m := uint32(0o027)
		p.Umask = &m
		p.NoNewPrivs = coin()
	}
	if p.User != nil && coin() {
		p.AmbientCaps = []string{"CAP_NET_BIND_SERVICE"}
	}
	if coin() {
		p.Log = Output{Stdout: DestFile, Stderr: DestFile, File: "/var/log/" + name + ".log", StderrFile: "/var/log/" + name + ".err",
			MaxSize: 5 << 20, MaxFiles: 2 + r.IntN(3), Compress: coin(), Format: []string{"text", "json"}[r.IntN(2)], Timestamps: coin()}
	} else {
		p.Log = defaultOutput()
	}
	if coin() {
		p.SecretEnv = []string{"A", "TOKEN"}
		p.Profiles = []string{"debug", "dev"}
	}
	p.Sidecar = coin()
	if p.Type == Service && p.Restart.Policy != Always && coin() {
		p.RemainAfterExit = true
	}
	if coin() {
		p.Sockets = []Socket{{Listen: "tcp://127.0.0.1:" + fmt.Sprint(8000+r.IntN(1000)), Name: "web", Backlog: 128, Mode: 0o666, ReusePort: coin()}}
		p.Sockets[0].Network, p.Sockets[0].Address = "tcp", strings.TrimPrefix(p.Sockets[0].Listen, "tcp://")
		if coin() {
			so := Socket{Listen: "unix:///run/" + name + ".sock", Network: "unix", Address: "/run/" + name + ".sock", Name: name, Mode: os.FileMode(0o660)}
			if coin() {
				so.Owner = root
			}
			p.Sockets = append(p.Sockets, so)
		}
		p.FDStoreMax = r.IntN(10)
	}
	if p.Type == Service && coin() {
		p.Daemon = &Daemon{PidFile: "/run/" + name + " daemon.pid"}
	}
	switch r.IntN(3) {
	case 1:
		p.Reload = &Reload{Signal: syscall.SIGHUP}
	case 2:
		p.Reload = &Reload{}
		p.Reload.Command, p.Reload.Shell = randCommand(r)
	}
	if coin() {
		p.Resources = &Resources{Memory: &MemoryResources{Max: 512 << 20, High: 256 << 20}, CPU: &CPUResources{Max: 1500, Weight: 200}, Pids: &PidsResources{Max: 64}}
	}
	switch r.IntN(3) {
	case 1:
		p.TTY = true
	case 2:
		p.Stdin = true
	}
	return p
}

func randDocument(r *rand.Rand, root *User) *Document {
	d := &Document{}
	for i := range 1 + r.IntN(4) {
		d.Processes = append(d.Processes, randProcess(r, fmt.Sprintf("p%d", i), d.Processes, root))
	}
	return d
}
