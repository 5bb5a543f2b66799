package kube

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

const genProcs = `listen: ":9464"
shutdown_timeout: 20s
processes:
  migrate: {command: [migrate], type: oneshot}
  db:
    command: [postgres]
    ready: {tcp: "127.0.0.1:5432", start_interval: 200ms}
    stop: {signal: SIGINT, timeout: 15s}
  proxy:
    command: "exec nginx"
    ready: {http: "http://127.0.0.1:8080/healthz"}
    stop: {command: [nginx, -s, quit]}
  app:
    command: [app]
    depends_on: {db: ready, migrate: completed, proxy: ready}
    env: {MODE: fast}
    ready: {exec: [check]}
    live: {http: "http://127.0.0.1:9000/live"}
`

func genConfig(t *testing.T, procs string) (*config.Config, []byte) {
	t.Helper()
	p := filepath.Join(t.TempDir(), "procs.yaml")
	if err := os.WriteFile(p, []byte(procs), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, []byte(procs)
}

// Generated manifests decode strictly (every field known to the API) and
// kube play can read them back.
func TestGenerateFat(t *testing.T) {
	cfg, raw := genConfig(t, genProcs)
	for _, kind := range []string{"Pod", "Deployment", "Job"} {
		// --profile passes on to the container's podvisor run.
		g, err := Generate(cfg, GenerateOptions{Name: "shop", Kind: kind, Image: "shop:1", Raw: raw, Profiles: []string{"dev", "debug"}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := Decode("gen.yaml", g.Manifest)
		if err != nil {
			t.Fatalf("%s: %v\n%s", kind, err, g.Manifest)
		}
		w, _ := m.Pick("")
		if w.Kind != kind {
			t.Errorf("kind %s, want %s", w.Kind, kind)
		}
		if m.ConfigMaps["shop-procs"]["procs.yaml"] != genProcs {
			t.Errorf("%s: ConfigMap does not hold procs.yaml as written", kind)
		}
		c := w.Spec.Containers[0]
		if !slices.Equal(c.Command, []string{"podvisor", "run", "-c", "/etc/podvisor/procs.yaml", "--profile", "dev", "--profile", "debug"}) || c.Image != "shop:1" {
			t.Errorf("%s: container %+v", kind, c)
		}
		if c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe.HTTPGet.Path != "/livez" || c.Ports[0].ContainerPort != 9464 {
			t.Errorf("%s: probes %+v %+v", kind, c.ReadinessProbe.HTTPGet, c.LivenessProbe.HTTPGet)
		}
		if *w.Spec.TerminationGracePeriodSeconds != 25 {
			t.Errorf("%s: grace %d, want shutdown_timeout 20s + 5", kind, *w.Spec.TerminationGracePeriodSeconds)
		}
		// kube play reads it back: one container running podvisor, the
		// ConfigMap bound at /etc/podvisor.
		res, err := Translate(m, w, Options{Root: true, VolumeDir: "/v"})
		if err != nil {
			t.Fatalf("%s: play: %v", kind, err)
		}
		if len(res.Mounts) != 1 || res.Mounts[0].Target != "/etc/podvisor" || res.Volumes[0].Files["procs.yaml"].Data != genProcs {
			t.Errorf("%s: mounts %+v", kind, res.Mounts)
		}
	}
	if _, err := Generate(cfg, GenerateOptions{Name: "shop", Kind: "StatefulSet"}); err == nil {
		t.Error("--kind StatefulSet accepted")
	}
}

func TestGenerateSidecars(t *testing.T) {
	cfg, raw := genConfig(t, genProcs)
	g, err := Generate(cfg, GenerateOptions{Name: "shop", Shape: "sidecars", Image: "shop:1", Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	m, err := Decode("gen.yaml", g.Manifest)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.Manifest)
	}
	w, _ := m.Pick("")
	var inits []string
	for _, c := range w.Spec.InitContainers {
		inits = append(inits, c.Name+"/"+c.RestartPolicy)
	}
	if want := []string{"db/Always", "migrate/", "proxy/Always"}; !slices.Equal(inits, want) {
		t.Errorf("init containers %q, want %q", inits, want)
	}
	if len(w.Spec.Containers) != 1 || w.Spec.Containers[0].Name != "app" {
		t.Fatalf("containers %+v", w.Spec.Containers)
	}
	db := w.Spec.InitContainers[0]
	if db.StartupProbe == nil || db.StartupProbe.TCPSocket.Port.Int != 5432 || db.Lifecycle.StopSignal != "SIGINT" {
		t.Errorf("db: %+v", db)
	}
	proxy := w.Spec.InitContainers[2]
	if !slices.Equal(proxy.Command, []string{"/bin/sh", "-c", "exec nginx"}) || !slices.Equal(proxy.Lifecycle.PreStop.Exec.Command, []string{"nginx", "-s", "quit"}) {
		t.Errorf("proxy: %+v", proxy)
	}
	app := w.Spec.Containers[0]
	if app.ReadinessProbe.Exec == nil || app.LivenessProbe.HTTPGet.Port.Int != 9000 || app.Env[0].Name != "MODE" {
		t.Errorf("app: %+v", app)
	}
	if *w.Spec.TerminationGracePeriodSeconds != 25 {
		t.Errorf("grace %d", *w.Spec.TerminationGracePeriodSeconds)
	}
	// The start order survives: kube play (kubelet order) gates app on
	// every sidecar's startupProbe and on migrate.
	res, err := Translate(m, w, Options{VolumeDir: "/v"})
	if err != nil {
		t.Fatal(err)
	}
	cfg2, err := config.Parse("procs.yaml", config.Write(res.Procs), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := deps(cfg2, "app"); got != "db:started,proxy:ready" {
		t.Errorf("app depends on %q", got)
	}
	if got := deps(cfg2, "proxy"); got != "db:started,migrate:completed" {
		t.Errorf("proxy depends on %q", got)
	}
	if got := deps(cfg2, "migrate"); got != "db:ready" {
		t.Errorf("migrate depends on %q", got)
	}
	if !slices.ContainsFunc(g.Warnings, func(w string) bool { return strings.Contains(w, "stops regular containers together") }) {
		t.Errorf("warnings %q", g.Warnings)
	}

	jobs, raw := genConfig(t, "processes:\n  build: {command: [make], type: job}\n  cache: {command: [redis]}\n")
	g, err = Generate(jobs, GenerateOptions{Name: "ci", Shape: "sidecars", Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	if m, err := Decode("gen.yaml", g.Manifest); err != nil || m.Workloads[0].Kind != "Job" {
		t.Errorf("jobs make a Job: %v\n%s", err, g.Manifest)
	}

	// A job's startup and ready checks become its startupProbe and
	// readinessProbe, and kube play reads them back as they were.
	jobs, raw = genConfig(t, "processes:\n  build:\n    command: [make]\n    type: job\n"+
		"    startup: {exec: [test, -e, /tmp/up], start_interval: 2s, failure_threshold: 5}\n"+
		"    ready: {tcp: \"127.0.0.1:8080\", interval: 3s}\n")
	g, err = Generate(jobs, GenerateOptions{Name: "ci", Shape: "sidecars", Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	m, err = Decode("gen.yaml", g.Manifest)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.Manifest)
	}
	w, _ = m.Pick("")
	b := w.Spec.Containers[0]
	if b.StartupProbe == nil || b.StartupProbe.Exec == nil || b.StartupProbe.PeriodSeconds != 2 || b.StartupProbe.FailureThreshold != 5 ||
		b.ReadinessProbe == nil || b.ReadinessProbe.TCPSocket == nil || b.ReadinessProbe.PeriodSeconds != 3 {
		t.Errorf("build's probes: startup %+v readiness %+v\n%s", b.StartupProbe, b.ReadinessProbe, g.Manifest)
	}
	res, err = Translate(m, w, Options{VolumeDir: "/v"})
	if err != nil {
		t.Fatal(err)
	}
	if q := res.Procs.Process("build"); q.Startup == nil || q.Startup.FailureThreshold != 5 || q.Ready == nil || q.Ready.Kind != config.ProbeTCP || q.Ready.Target != "127.0.0.1:8080" {
		t.Errorf("kube play reads back startup %+v ready %+v", q.Startup, q.Ready)
	}

	// The same for a service that is a regular container.
	svc, raw := genConfig(t, "processes:\n  web:\n    command: [web]\n"+
		"    startup: {exec: [test, -e, /tmp/up], failure_threshold: 4}\n    ready: {tcp: \"127.0.0.1:8080\"}\n")
	g, err = Generate(svc, GenerateOptions{Name: "web", Shape: "sidecars", Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	m, err = Decode("gen.yaml", g.Manifest)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.Manifest)
	}
	w, _ = m.Pick("")
	if c := w.Spec.Containers[0]; c.StartupProbe == nil || c.StartupProbe.FailureThreshold != 4 || c.ReadinessProbe == nil || c.ReadinessProbe.TCPSocket == nil {
		t.Errorf("web's probes: startup %+v readiness %+v\n%s", c.StartupProbe, c.ReadinessProbe, g.Manifest)
	}
}
