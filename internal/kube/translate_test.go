package kube

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

func play(t *testing.T, manifest string, opts Options) *Result {
	t.Helper()
	res, err := playErr(manifest, opts)
	if err != nil {
		t.Fatalf("translate: %v", err)
	}
	return res
}

func playErr(manifest string, opts Options) (*Result, error) {
	m, err := Decode("pod.yaml", []byte(manifest))
	if err != nil {
		return nil, err
	}
	w, err := m.Pick("")
	if err != nil {
		return nil, err
	}
	if opts.Self == "" {
		opts.Self = "/usr/bin/podvisor"
	}
	opts.VolumeDir = "/vol"
	return Translate(m, w, opts)
}

// load checks that the procs.yaml loads and returns it.
func load(t *testing.T, res *Result) *config.Config {
	t.Helper()
	data := config.Write(res.Procs)
	cfg, err := config.Parse("procs.yaml", data, nil)
	if err != nil {
		t.Fatalf("generated procs.yaml does not load: %v\n%s", err, data)
	}
	return cfg
}

func deps(cfg *config.Config, name string) string {
	var s []string
	for _, d := range cfg.Processes[name].DependsOn {
		s = append(s, d.Name+":"+d.Condition.String())
	}
	slices.Sort(s)
	return strings.Join(s, ",")
}

const sidecarPod = `
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  os: {name: linux}
  terminationGracePeriodSeconds: 20
  initContainers:
    - name: setup
      command: [sh, -c, "true"]
    - name: proxy
      restartPolicy: Always
      command: [proxy]
      startupProbe: {tcpSocket: {port: 15000}, periodSeconds: 1, failureThreshold: 5}
      readinessProbe: {httpGet: {path: /ready, port: admin}}
      ports: [{name: admin, containerPort: 15021}]
    - name: logs
      restartPolicy: Always
      command: [logs]
  containers:
    - name: app
      command: [app]
      lifecycle:
        postStart: {exec: {command: [wait-for-it]}}
        preStop: {httpGet: {path: /drain, port: 8080}}
        stopSignal: SIGQUIT
      livenessProbe: {exec: {command: [alive]}, periodSeconds: 2}
    - name: worker
      command: [worker]
`

func TestKubeletOrder(t *testing.T) {
	res := play(t, sidecarPod, Options{})
	cfg := load(t, res)
	for name, want := range map[string]string{
		"setup":          "",
		"proxy":          "setup:completed",
		"logs":           "proxy:ready",                // the startupProbe gates the next init step
		"app":            "logs:started,proxy:started", // after every init step; sidecars stop after it
		"app.post-start": "app:started",
		"worker":         "app.post-start:completed,logs:started,proxy:started", // postStart holds it back
	} {
		if got := deps(cfg, name); got != want {
			t.Errorf("%s depends on %q, want %q", name, got, want)
		}
	}
	// No edge between app and worker: regular containers stop together.
	app, proxy := cfg.Processes["app"], cfg.Processes["proxy"]
	if app.Stop.Signal.String() != "quit" || app.Stop.Timeout.Seconds() != 20 || cfg.ShutdownTimeout.Seconds() != 20 {
		t.Errorf("app stop = %+v, shutdown %s", app.Stop, cfg.ShutdownTimeout)
	}
	if want := []string{"/usr/bin/podvisor", "wait", "--http", "http://127.0.0.1:8080/drain", "--timeout", "10s", "--once"}; !slices.Equal(app.Stop.Command, want) {
		t.Errorf("preStop = %q, want %q", app.Stop.Command, want)
	}
	// Every preStop starts with the termination; each container gets 2 s
	// after its signal even past the grace; sidecars are marked.
	if !app.Stop.CommandFirst || app.Stop.MinGrace.Seconds() != 2 {
		t.Errorf("app stop = %+v, want command_first and min_grace 2s", app.Stop)
	}
	if !proxy.Sidecar || !cfg.Processes["logs"].Sidecar || app.Sidecar {
		t.Errorf("sidecar: proxy %v, logs %v, app %v; want true, true, false", proxy.Sidecar, cfg.Processes["logs"].Sidecar, app.Sidecar)
	}
	if proxy.Ready == nil || proxy.Ready.Target != "127.0.0.1:15000" || proxy.StartTimeout.Seconds() != 6 {
		t.Errorf("proxy ready = %+v, start_timeout %s: want the startupProbe, budget 5x1s+1s", proxy.Ready, proxy.StartTimeout)
	}
	if proxy.Restart.Backoff.Seconds() != 10 || proxy.Restart.MaxBackoff.Minutes() != 5 {
		t.Errorf("proxy restart = %+v, want the kubelet's back-off", proxy.Restart)
	}
	if cfg.Processes["setup"].Type != config.Oneshot || cfg.Processes["app"].Type != config.Service {
		t.Error("types")
	}
	if app.Live == nil || app.Live.Interval.Seconds() != 2 {
		t.Errorf("app live = %+v", app.Live)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "readinessProbe") }) {
		t.Errorf("no warning that proxy's readinessProbe is not run: %q", res.Warnings)
	}
}

func TestOrdered(t *testing.T) {
	cfg := load(t, play(t, sidecarPod, Options{Ordered: true}))
	for name, want := range map[string]string{
		"proxy":  "setup:completed",
		"logs":   "proxy:ready,setup:completed",
		"app":    "logs:ready,proxy:ready,setup:completed",
		"worker": "app.post-start:completed,app:ready,logs:ready,proxy:ready,setup:completed",
	} {
		if got := deps(cfg, name); got != want {
			t.Errorf("%s depends on %q, want %q", name, got, want)
		}
	}
	// --ordered gates on the readinessProbe, with podvisor's back-off.
	proxy := cfg.Processes["proxy"]
	if proxy.Ready.Target != "http://127.0.0.1:15021/ready" || proxy.Restart.Backoff != config.DefaultBackoff {
		t.Errorf("proxy ready %q backoff %s", proxy.Ready.Target, proxy.Restart.Backoff)
	}
}

func TestDependsOnAnnotation(t *testing.T) {
	pod := strings.Replace(sidecarPod, "metadata: {name: web}", `metadata:
  name: web
  annotations: {podvisor.dev/depends-on: "worker=app:ready"}`, 1)
	for _, ordered := range []bool{false, true} {
		cfg := load(t, play(t, pod, Options{Ordered: ordered}))
		want := "app.post-start:completed,app:ready,logs:started,proxy:started"
		if ordered {
			want = "app:ready,logs:ready,proxy:ready,setup:completed"
		}
		if got := deps(cfg, "worker"); got != want {
			t.Errorf("ordered=%v: worker depends on %q, want %q", ordered, got, want)
		}
	}
	bad := strings.Replace(pod, "worker=app:ready", "worker=nope", 1)
	if _, err := playErr(bad, Options{}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("unknown dependency: err = %v", err)
	}
}

func TestJobRun(t *testing.T) {
	const job = `
apiVersion: batch/v1
kind: Job
metadata: {name: build}
spec:
  backoffLimit: 2
  template:
    spec:
      restartPolicy: OnFailure
      initContainers:
        - {name: sidecar, restartPolicy: Always, command: [s]}
      containers:
        - {name: build, command: [make]}
`
	cfg := load(t, play(t, job, Options{}))
	b := cfg.Processes["build"]
	if b.Type != config.Job || b.Restart.Policy != config.OnFailure || b.Restart.Limit != 2 {
		t.Errorf("build: type %s restart %+v", b.Type, b.Restart)
	}
	if cfg.Processes["sidecar"].Type != config.Service {
		t.Error("a sidecar must not hold the job's completion")
	}
	never := strings.Replace(job, "OnFailure", "Never", 1)
	if b := load(t, play(t, never, Options{})).Processes["build"]; b.Restart.Policy != config.Never {
		t.Errorf("restartPolicy Never: %+v", b.Restart)
	}
	always := strings.Replace(job, "OnFailure", "Always", 1)
	if _, err := playErr(always, Options{}); err == nil {
		t.Error("a Job with restartPolicy Always: no error")
	}
}

func TestWorkloadKinds(t *testing.T) {
	tmpl := `  template:
    metadata: {annotations: {podvisor.dev/command.app: "exec my-app"}}
    spec:
      containers: [{name: app, image: app:1}]`
	for kind, spec := range map[string]string{
		"Deployment":  "  replicas: 3\n  selector: {matchLabels: {a: b}}\n" + tmpl,
		"ReplicaSet":  "  replicas: 1\n" + tmpl,
		"StatefulSet": "  serviceName: x\n" + tmpl,
		"DaemonSet":   tmpl,
		"CronJob": `  schedule: '* * * * *'
  jobTemplate:
    spec:
      template:
        metadata: {annotations: {podvisor.dev/command.app: "exec my-app"}}
        spec:
          restartPolicy: Never
          containers: [{name: app, image: app:1}]`,
	} {
		doc := fmt.Sprintf("apiVersion: apps/v1\nkind: %s\nmetadata: {name: w}\nspec:\n%s\n", kind, spec)
		res, err := playErr(doc, Options{})
		if err != nil {
			t.Errorf("%s: %v\n%s", kind, err, doc)
			continue
		}
		cfg := load(t, res)
		if got := cfg.Processes["app"].Command; !slices.Equal(got, []string{"/bin/sh", "-c", `exec my-app "$@"`, "app"}) {
			t.Errorf("%s: command %q", kind, got)
		}
	}
	bad := "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: w}\nspec:\n  schedule: x\n" + tmpl
	if _, err := playErr(bad, Options{}); err == nil || !strings.Contains(err.Error(), `unknown field "schedule"`) {
		t.Errorf("Deployment with schedule: %v", err)
	}
}

func TestMultiDocAndList(t *testing.T) {
	const doc = `
apiVersion: v1
kind: List
items:
  - apiVersion: v1
    kind: ConfigMap
    metadata: {name: cfg}
    data: {MODE: fast, "1bad": x}
  - apiVersion: v1
    kind: Secret
    metadata: {name: sec}
    data: {TOKEN: c2VjcmV0}
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec: {ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
    - name: app
      command: [app, "$(MODE)", "$(TOKEN)", "$(PREFIX_MODE)"]
      envFrom: [{configMapRef: {name: cfg}}, {prefix: PREFIX_, configMapRef: {name: cfg}}]
      env: [{name: TOKEN, valueFrom: {secretKeyRef: {name: sec, key: TOKEN}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: b}
spec:
  containers: [{name: app, command: [b]}]
`
	m, err := Decode("all.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pick(""); err == nil || !strings.Contains(err.Error(), "--name") {
		t.Errorf("two workloads without --name: %v", err)
	}
	w, err := m.Pick("a")
	if err != nil {
		t.Fatal(err)
	}
	res, err := Translate(m, w, Options{VolumeDir: "/v"})
	if err != nil {
		t.Fatal(err)
	}
	cfg := load(t, res)
	if got := cfg.Processes["app"].Command; !slices.Equal(got, []string{"app", "fast", "secret", "fast"}) {
		t.Errorf("command %q", got)
	}
	// TOKEN came from a Secret: podvisor redacts it whatever its name.
	if got := cfg.Processes["app"].SecretEnv; !slices.Equal(got, []string{"TOKEN"}) {
		t.Errorf("secret_env %q, want [TOKEN]", got)
	}
	joined := strings.Join(res.Warnings, "\n")
	for _, want := range []string{`"1bad"`, "Service/web"} {
		if !strings.Contains(joined, want) {
			t.Errorf("warnings lack %s: %s", want, joined)
		}
	}
}

func TestEnv(t *testing.T) {
	const pod = `
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ns1, labels: {tier: web}, annotations: {note: hi}}
spec:
  serviceAccountName: robot
  containers:
    - name: app
      command: [sh, -c, "echo $(A) $$(A) $(B) $(LATER) $HOME"]
      args: ["$(C)"]
      resources: {limits: {cpu: 1500m, memory: 64Mi}}
      env:
        - {name: A, value: one}
        - {name: B, value: "$(A)-two"}
        - {name: C, value: "$(LATER)"}
        - {name: NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NS, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        - {name: TIER, valueFrom: {fieldRef: {fieldPath: "metadata.labels['tier']"}}}
        - {name: NOTE, valueFrom: {fieldRef: {fieldPath: "metadata.annotations['note']"}}}
        - {name: SA, valueFrom: {fieldRef: {fieldPath: spec.serviceAccountName}}}
        - {name: IP, valueFrom: {fieldRef: {fieldPath: status.podIP}}}
        - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
        - {name: CPU, valueFrom: {resourceFieldRef: {resource: limits.cpu}}}
        - {name: MCPU, valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1m}}}
        - {name: MEM, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
        - {name: REQMEM, valueFrom: {resourceFieldRef: {resource: requests.memory}}}
        - {name: LATER, value: late}
        - {name: DOLLAR, value: "cost $5 $$(A)"}
`
	res := play(t, pod, Options{Hostname: "box"})
	cfg := load(t, res)
	app := cfg.Processes["app"]
	env := map[string]string{}
	for _, kv := range app.Env {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	want := map[string]string{"A": "one", "B": "one-two", "C": "$(LATER)", "NAME": "p", "NS": "ns1", "TIER": "web",
		"NOTE": "hi", "SA": "robot", "IP": "127.0.0.1", "NODE": "box", "CPU": "2", "MCPU": "1500", "MEM": "64",
		"REQMEM": "67108864", "LATER": "late", "DOLLAR": "cost $5 $(A)"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s = %q, want %q", k, env[k], v)
		}
	}
	// command: expanded with the final env ($(LATER) is defined by then);
	// $$(A) is an escape; $HOME is the shell's; C's value is not expanded again.
	if got := app.Command; !slices.Equal(got, []string{"sh", "-c", "echo one $(A) one-two late $HOME", "$(LATER)"}) {
		t.Errorf("command %q", got)
	}
	// The written procs.yaml escapes $ by config's one rule: $HOME, which
	// podvisor keeps, is written as it is.
	if data := string(config.Write(res.Procs)); !strings.Contains(data, "late $HOME") || strings.Contains(data, "$$HOME") {
		t.Errorf("$HOME escaped in the written procs.yaml:\n%s", data)
	}

	bad := strings.Replace(pod, "spec.nodeName", "status.phase", 1)
	if _, err := playErr(bad, Options{}); err == nil || !strings.Contains(err.Error(), "status.phase") {
		t.Errorf("unsupported fieldRef: %v", err)
	}
	missing := strings.Replace(pod, "{name: A, value: one}", "{name: A, valueFrom: {configMapKeyRef: {name: nope, key: k}}}", 1)
	if _, err := playErr(missing, Options{}); err == nil || !strings.Contains(err.Error(), "--from-dir") {
		t.Errorf("missing ConfigMap: %v", err)
	}
	optional := strings.Replace(pod, "{name: A, value: one}", "{name: A, valueFrom: {configMapKeyRef: {name: nope, key: k, optional: true}}}", 1)
	if _, err := playErr(optional, Options{}); err != nil {
		t.Errorf("optional missing ConfigMap: %v", err)
	}
}

// TestLiteral: every value config interpolates comes back from the written
// procs.yaml as the translation built it, ${...} and $$ included, and a
// postStart hook, which shares its container's environment, is escaped once.
func TestLiteral(t *testing.T) {
	pod := `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: app
    command: [sh, -c, 'echo ${A} $$$$ $HOME'] # $$ is a $ in Kubernetes' expansion
    workingDir: /srv/${w}
    env: [{name: A, value: 'a${b}$$$$c'}]
    readinessProbe: {exec: {command: [test, '${r}']}}
    lifecycle:
      postStart: {exec: {command: [echo, '${p}']}}
      preStop: {exec: {command: [echo, '${s}']}}
`
	cfg := load(t, play(t, pod, Options{}))
	app, hook := cfg.Processes["app"], cfg.Processes["app"+postStartSuffix]
	if !slices.Equal(app.Command, []string{"sh", "-c", "echo ${A} $$ $HOME"}) || app.WorkingDir != "/srv/${w}" {
		t.Errorf("command %q, working_dir %q", app.Command, app.WorkingDir)
	}
	if !slices.Contains(app.Env, "A=a${b}$$c") || !slices.Contains(hook.Env, "A=a${b}$$c") {
		t.Errorf("env %q, hook env %q", app.Env, hook.Env)
	}
	if !slices.Equal(app.Ready.Command, []string{"test", "${r}"}) || !slices.Equal(app.Stop.Command, []string{"echo", "${s}"}) ||
		!slices.Equal(hook.Command, []string{"echo", "${p}"}) {
		t.Errorf("ready %q, stop %q, hook %q", app.Ready.Command, app.Stop.Command, hook.Command)
	}
}

func TestStrictDecoding(t *testing.T) {
	for name, tc := range map[string]struct{ doc, want string }{
		"container typo": {`{apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {containers: [{name: a, comand: [x]}]}}`,
			`pod.yaml:1:80: Pod.spec.containers[0]: unknown field "comand" (did you mean "command"?)`},
		"probe typo": {"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n    command: [x]\n    readinessProbe: {periodSecond: 1}\n",
			`pod.yaml:8:22: Pod.spec.containers[0].readinessProbe: unknown field "periodSecond" (did you mean "periodSeconds"?)`},
		"wrong type": {"apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n    command: x\n",
			"cannot unmarshal"},
		"no workload": {"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n", "no workload found"},
		"top level":   {"apiVersion: v1\nkind: Pod\nmetdata: {name: a}\nspec: {}\n", `unknown field "metdata" (did you mean "metadata"?)`},
	} {
		_, err := playErr(tc.doc, Options{})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
}

func TestRefusedAndWarned(t *testing.T) {
	base := "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n%s  containers:\n  - name: app\n    command: [x]\n%s"
	refused := map[string][2]string{
		"ftp probe":   {"", "    readinessProbe: {httpGet: {port: 443, scheme: FTP}}\n"},
		"named port":  {"", "    readinessProbe: {httpGet: {port: web}}\n"},
		"nfs":         {"  volumes: [{name: d, nfs: {server: s, path: /x}}]\n", "    volumeMounts: [{name: d, mountPath: /d}]\n"},
		"no volume":   {"", "    volumeMounts: [{name: d, mountPath: /d}]\n"},
		"subPathExpr": {"  volumes: [{name: d, emptyDir: {}}]\n", "    volumeMounts: [{name: d, mountPath: /d, subPathExpr: $(X)}]\n"},
		"stopSignal":  {"", "    lifecycle: {stopSignal: SIGKILL}\n"},
		"fileKeyRef":  {"", "    env: [{name: A, valueFrom: {fileKeyRef: {path: p}}}]\n"},
	}
	for name, parts := range refused {
		if _, err := playErr(fmt.Sprintf(base, parts[0], parts[1]), Options{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	warned := map[string][2]string{
		"nodeSelector":        {"  nodeSelector: {disk: ssd}\n", ""},
		"affinity":            {"  affinity: {}\n", ""},
		"tolerations":         {"  tolerations: []\n", ""},
		"hostNetwork":         {"  hostNetwork: true\n", ""},
		"imagePullPolicy":     {"", "    imagePullPolicy: Always\n"},
		"image":               {"", "    image: nginx\n"},
		"ephemeral-storage":   {"", "    resources: {limits: {cpu: 1, ephemeral-storage: 1Gi}}\n"},
		"hostPort":            {"", "    ports: [{containerPort: 80, hostPort: 80}]\n"},
		"capabilities":        {"", "    securityContext: {capabilities: {add: [NET_ADMIN]}}\n"},
		"httpHeaders":         {"", "    readinessProbe: {httpGet: {port: 80, httpHeaders: [{name: a, value: b}]}}\n"},
		"ephemeralContainers": {"  ephemeralContainers: []\n", ""},
		"runAsUser":           {"", "    securityContext: {runAsUser: 1000}\n"},
	}
	for name, parts := range warned {
		res, err := playErr(fmt.Sprintf(base, parts[0], parts[1]), Options{})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(strings.ToLower(w), strings.ToLower(name)) }) {
			t.Errorf("%s: no warning in %q", name, res.Warnings)
		}
	}
}

func TestImageCommand(t *testing.T) {
	const pod = `
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
    - {name: web, image: "nginx:1.27", args: ["-g", "daemon off;"]}
    - {name: cache, image: "redis:7"}
    - {name: app, image: "app:1", command: [app]}
`
	_, err := playErr(pod, Options{})
	if err == nil || !strings.Contains(err.Error(), "web (image nginx:1.27), cache (image redis:7)") || !strings.Contains(err.Error(), "--image-command") {
		t.Fatalf("err = %v", err)
	}
	res := play(t, pod, Options{ImageCommands: map[string]string{"nginx:1.27": "exec nginx", "redis:7": "exec redis-server"}})
	cfg := load(t, res)
	if got := cfg.Processes["web"].Command; !slices.Equal(got, []string{"/bin/sh", "-c", `exec nginx "$@"`, "web", "-g", "daemon off;"}) {
		t.Errorf("web command %q", got)
	}
}

func TestVolumes(t *testing.T) {
	const pod = `
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  volumes:
    - {name: work, emptyDir: {}}
    - {name: conf, configMap: {name: c, items: [{key: k, path: sub/file.conf, mode: 0600}]}}
    - {name: host, hostPath: {path: /srv/data, type: DirectoryOrCreate}}
    - {name: unused, emptyDir: {}}
  containers:
    - name: app
      command: [sh, -c, "ls /opt/workspace /opt/workspacex"]
      workingDir: /opt/workspace
      volumeMounts:
        - {name: work, mountPath: /opt/workspace}
        - {name: conf, mountPath: /etc/app, readOnly: true}
        - {name: host, mountPath: /data, subPath: part}
    - name: side
      command: [x]
      volumeMounts: [{name: work, mountPath: /opt/workspace}]
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}
`
	res := play(t, pod, Options{})
	var got []string
	for _, m := range res.Mounts {
		got = append(got, fmt.Sprintf("%s->%s ro=%v", m.sourcePath(), m.Target, m.ReadOnly))
	}
	want := []string{"/srv/data/part->/data ro=false", "/vol/conf->/etc/app ro=true", "/vol/work->/opt/workspace ro=false"}
	if !slices.Equal(got, want) {
		t.Errorf("mounts %q, want %q", got, want)
	}
	if len(res.Volumes) != 3 || res.Volumes[0].Name != "conf" || res.Volumes[0].Files["sub/file.conf"].Mode != 0o600 {
		t.Errorf("volumes %+v", res.Volumes)
	}
	// PlaceVolumes: kube play chooses the volume directory from the
	// mounts; hostPath volumes stay where they are.
	var asked []string
	res = play(t, pod, Options{PlaceVolumes: func(mounts []Mount) (string, error) {
		for _, m := range mounts {
			asked = append(asked, m.Target)
		}
		return "/run/x", nil
	}})
	if want := []string{"/data", "/etc/app", "/opt/workspace"}; !slices.Equal(asked, want) {
		t.Errorf("PlaceVolumes asked with %q, want %q", asked, want)
	}
	got = nil
	for _, m := range res.Mounts {
		got = append(got, m.sourcePath())
	}
	if want := []string{"/srv/data/part", "/run/x/conf", "/run/x/work"}; !slices.Equal(got, want) {
		t.Errorf("placed mounts %q, want %q", got, want)
	}
	if res.Volumes[0].Source != "/run/x/conf" || res.Volumes[1].Source != "/srv/data" {
		t.Errorf("placed volumes %+v", res.Volumes)
	}
	// --volume-root: paths are rewritten, whole components only.
	res = play(t, pod, Options{VolumeRoot: "/tmp/root"})
	cfg := load(t, res)
	if got := cfg.Processes["app"].Command[2]; got != "ls /tmp/root/opt/workspace /opt/workspacex" {
		t.Errorf("remapped command %q", got)
	}
	if got := cfg.Processes["app"].WorkingDir; got != "/tmp/root/opt/workspace" {
		t.Errorf("remapped working_dir %q", got)
	}
	clash := strings.Replace(pod, "volumeMounts: [{name: work, mountPath: /opt/workspace}]", "volumeMounts: [{name: conf, mountPath: /opt/workspace}]", 1)
	if _, err := playErr(clash, Options{}); err == nil || !strings.Contains(err.Error(), "one path holds one volume") {
		t.Errorf("two volumes at one path: %v", err)
	}
}

func TestFromDir(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "cfg"), 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "cfg", "MODE"), []byte("slow"), 0o644)
	os.WriteFile(filepath.Join(dir, "cfg", "app.conf"), []byte("x=1\n"), 0o644)
	const pod = `
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  volumes: [{name: conf, configMap: {name: cfg}}]
  containers:
    - name: app
      command: [app, "$(MODE)", "$(ALL_MODE)"]
      env: [{name: MODE, valueFrom: {configMapKeyRef: {name: cfg, key: MODE}}}]
      envFrom: [{prefix: ALL_, configMapRef: {name: cfg}}]
      volumeMounts: [{name: conf, mountPath: /etc/app}]
`
	res := play(t, pod, Options{FromDir: dir})
	cfg := load(t, res)
	if got := cfg.Processes["app"].Command; !slices.Equal(got, []string{"app", "slow", "slow"}) {
		t.Errorf("command %q", got)
	}
	if f := res.Volumes[0].Files["app.conf"]; f.Data != "x=1\n" {
		t.Errorf("volume files %+v", res.Volumes[0].Files)
	}
	// A key naming a path outside the directory is never read.
	bad := strings.Replace(pod, "key: MODE", "key: ../cfg/MODE", 1)
	if _, err := playErr(bad, Options{FromDir: dir}); err == nil {
		t.Error("key ../cfg/MODE was read")
	}
}

// Every field kube's types hold as an uninterpreted node is either warned
// about (by name) or refused: none is dropped silently.
func TestEveryIgnoredFieldIsReported(t *testing.T) {
	nodeFields := func(v any) []string {
		var out []string
		ty := reflect.TypeOf(v)
		for i := 0; i < ty.NumField(); i++ {
			if ty.Field(i).Type == nodeType {
				name, _, _ := strings.Cut(ty.Field(i).Tag.Get("yaml"), ",")
				out = append(out, name)
			}
		}
		return out
	}
	check := func(what, doc, field string) {
		t.Helper()
		res, err := playErr(doc, Options{})
		if err != nil {
			if !strings.Contains(err.Error(), field) {
				t.Errorf("%s %s: refused without naming it: %v", what, field, err)
			}
			return
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, field) }) {
			t.Errorf("%s %s: set but neither warned about nor refused (warnings %q)", what, field, res.Warnings)
		}
	}
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  %s\n  volumes: [{name: v, emptyDir: {}}]\n  containers:\n  - name: app\n    command: [x]\n    volumeMounts: [{name: v, mountPath: /v}]\n    %s\n"
	for _, f := range nodeFields(PodSpec{}) {
		check("spec", fmt.Sprintf(pod, f+": {}", ""), f)
	}
	for _, f := range nodeFields(Container{}) {
		check("container", fmt.Sprintf(pod, "", f+": {}"), f)
	}
	for _, f := range nodeFields(SecurityContext{}) {
		check("securityContext", fmt.Sprintf(pod, "", "securityContext: {"+f+": {}}"), f)
	}
	for _, f := range nodeFields(PodSecurityContext{}) {
		check("pod securityContext", fmt.Sprintf(pod, "securityContext: {"+f+": {}}", ""), f)
	}
	for _, f := range nodeFields(Probe{}) {
		check("probe", fmt.Sprintf(pod, "", "livenessProbe: {exec: {command: [x]}, "+f+": {}}"), f)
	}
	for _, f := range nodeFields(VolumeMount{}) {
		check("volumeMount", strings.Replace(fmt.Sprintf(pod, "", ""), "mountPath: /v}", "mountPath: /v, "+f+": {}}", 1), f)
	}
	for _, f := range nodeFields(Volume{}) {
		check("volume", strings.Replace(fmt.Sprintf(pod, "", ""), "emptyDir: {}}", f+": {}}", 1), "spec.volumes[0]")
	}
	for _, f := range nodeFields(ContainerPort{}) {
		check("port", fmt.Sprintf(pod, "", "ports: [{containerPort: 80, "+f+": {}}]"), f)
	}
	cm := "\n---\n{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {k: v}}\n"
	for _, f := range nodeFields(KeyToPath{}) {
		check("items", strings.Replace(fmt.Sprintf(pod, "", ""), "emptyDir: {}", "configMap: {name: c, items: [{key: k, path: p, "+f+": {}}]}", 1)+cm, f)
	}
	for _, f := range nodeFields(ConfigMapVolume{}) {
		check("configMap", strings.Replace(fmt.Sprintf(pod, "", ""), "emptyDir: {}", "configMap: {name: c, "+f+": {}}", 1)+cm, f)
	}
	for _, f := range nodeFields(EmptyDir{}) {
		check("emptyDir", strings.Replace(fmt.Sprintf(pod, "", ""), "emptyDir: {}", "emptyDir: {"+f+": {}}", 1), f)
	}
}

func TestUser(t *testing.T) {
	const pod = `
apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  securityContext: {runAsUser: 1000, runAsGroup: 3000}
  containers:
    - {name: app, command: [x]}
    - {name: other, command: [y], securityContext: {runAsUser: 2000}}
`
	cfg := load(t, play(t, pod, Options{Root: true}))
	if u := cfg.Processes["app"].User; u == nil || u.UID != 1000 || u.GID != 3000 {
		t.Errorf("app user %+v", u)
	}
	if u := cfg.Processes["other"].User; u == nil || u.UID != 2000 || u.GID != 3000 {
		t.Errorf("other user %+v (container runAsUser, pod runAsGroup)", u)
	}
	res := play(t, pod, Options{Root: false})
	if cfg := load(t, res); cfg.Processes["app"].User != nil {
		t.Error("user set without root")
	}
}

const clusterMeta = `apiVersion: v1
kind: Pod
metadata:
  creationTimestamp: "2026-11-20T10:00:00Z"
  generateName: web-7d4b9c-
  labels: {app: web}
  name: web-7d4b9c-x2x9z
  namespace: shop
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: web-7d4b9c, uid: 0d7c2c9e-2d8a-4e0b-9f0e-2b1f1c4c1a11, controller: true}
  resourceVersion: "123456"
  uid: 5f9d3b1a-1111-4c2d-8e3f-abcdefabcdef
  managedFields:
  - {apiVersion: v1, fieldsType: FieldsV1, fieldsV1: {f:metadata: {}}, manager: kubectl, operation: Update, time: "2026-11-20T10:00:00Z"}
spec:
  containers:
  - name: app
    command: [app]
status:
  phase: Running
  podIP: 10.0.0.5
  conditions: [{type: Ready, status: "True"}]
`

// A pod taken from a cluster (kubectl get pod -o yaml) decodes: the fields
// the API server set are ignored with one notice, and other errors are
// still each reported with their position.
func TestClusterPod(t *testing.T) {
	res := play(t, clusterMeta, Options{})
	var notices []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "set by the API server") {
			notices = append(notices, w)
		}
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "metadata.managedFields") || !strings.Contains(notices[0], "status") {
		t.Errorf("notices %q, want one naming managedFields and status", notices)
	}
	bad := strings.Replace(clusterMeta, "command: [app]", "command: [app]\n    comand: [x]", 1)
	_, err := playErr(bad, Options{})
	if err == nil || err.Error() != `pod.yaml:19:5: Pod.spec.containers[0]: unknown field "comand" (did you mean "command"?)` {
		t.Errorf("err = %v, want only the misspelt field, with its position", err)
	}
}

// --image-command CMD gets the container's args once: "$@" is appended
// only when CMD does not already end with it.
func TestImageCommandArgsOnce(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers: [{name: app, image: img, args: [x]}]\n"
	for cmd, want := range map[string]string{
		`exec app`:            `exec app "$@"`,
		`exec app "$@"`:       `exec app "$@"`,
		`exec app $@`:         `exec app $@`,
		`exec app "${@}"`:     `exec app "${@}"`,
		`exec app "$@"; `:     `exec app "$@"; `,
		`echo "$@x"`:          `echo "$@x" "$@"`,
		`exec app --flag=$@a`: `exec app --flag=$@a "$@"`,
	} {
		res := play(t, pod, Options{ImageCommands: map[string]string{"img": cmd}})
		got := load(t, res).Processes["app"].Command
		if !slices.Equal(got, []string{"/bin/sh", "-c", want, "app", "x"}) {
			t.Errorf("--image-command img=%s: command %q, want %q", cmd, got, want)
		}
	}
}

const projectedPod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: shop
  uid: 5f9d3b1a-1111-4c2d-8e3f-abcdefabcdef
  labels: {app: web, tier: "front end"}
  annotations: {note: "say \"hi\""}
spec:
  serviceAccountName: web-sa
  containers:
  - name: app
    command: [app]
    resources: {limits: {memory: 64Mi}}
    volumeMounts:
    - {name: kube-api-access-x2x9z, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
    - {name: podinfo, mountPath: /etc/podinfo}
  volumes:
  - name: kube-api-access-x2x9z
    projected:
      defaultMode: 420
      sources:
      - serviceAccountToken: {expirationSeconds: 3607, path: token}
      - configMap:
          name: kube-root-ca.crt
          items: [{key: ca.crt, path: ca.crt}]
      - downwardAPI:
          items:
          - path: namespace
            fieldRef: {apiVersion: v1, fieldPath: metadata.namespace}
  - name: podinfo
    downwardAPI:
      defaultMode: 0600
      items:
      - {path: labels, fieldRef: {fieldPath: metadata.labels}}
      - {path: annotations, fieldRef: {fieldPath: metadata.annotations}}
      - {path: name, fieldRef: {fieldPath: metadata.name}}
      - {path: uid, fieldRef: {fieldPath: metadata.uid}}
      - {path: sub/app, fieldRef: {fieldPath: "metadata.labels['app']"}, mode: 0644}
      - {path: mem, resourceFieldRef: {containerName: app, resource: limits.memory, divisor: 1Mi}}
`

// The kube-api-access-* volume every pod from a cluster has, and a
// downwardAPI volume, become local files.
func TestProjectedAndDownwardAPIVolumes(t *testing.T) {
	res := play(t, projectedPod, Options{CACert: "CERT\n"})
	files := map[string]map[string]File{}
	for _, v := range res.Volumes {
		files[v.Name] = v.Files
	}
	api := files["kube-api-access-x2x9z"]
	if api["ca.crt"].Data != "CERT\n" || api["namespace"].Data != "shop" || api["token"].Mode != 0o644 {
		t.Errorf("kube-api-access files %+v", api)
	}
	tok := api["token"].Data
	if !strings.HasPrefix(tok, PlaceholderToken) || strings.Count(tok, ".") != 2 {
		t.Errorf("token %q is not an unsigned JWT", tok)
	}
	if hdr, _ := base64.RawURLEncoding.DecodeString(strings.TrimSuffix(PlaceholderToken, ".")); string(hdr) != `{"alg":"none","typ":"JWT"}` {
		t.Errorf("token header %s", hdr)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if !strings.Contains(string(claims), `"sub":"system:serviceaccount:shop:web-sa"`) {
		t.Errorf("token claims %s", claims)
	}
	info := files["podinfo"]
	want := map[string]File{
		"labels":      {Data: "app=\"web\"\ntier=\"front end\"", Mode: 0o600},
		"annotations": {Data: `note="say \"hi\""`, Mode: 0o600},
		"name":        {Data: "web", Mode: 0o600},
		"uid":         {Data: "5f9d3b1a-1111-4c2d-8e3f-abcdefabcdef", Mode: 0o600},
		"sub/app":     {Data: "web", Mode: 0o644},
		"mem":         {Data: "64", Mode: 0o600},
	}
	if !reflect.DeepEqual(info, want) {
		t.Errorf("podinfo files\n got %+v\nwant %+v", info, want)
	}
	// Without --ca-file, the CA is left out with a warning.
	res = play(t, projectedPod, Options{})
	if _, ok := res.Volumes[0].Files["ca.crt"]; ok || !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "--ca-file") }) {
		t.Errorf("without --ca-file: files %v, warnings %q", res.Volumes[0].Files, res.Warnings)
	}
}

// Paths and fields of downwardAPI and projected volumes are checked as the
// API server checks them.
func TestProjectedRefused(t *testing.T) {
	pod := func(vol string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec:\n  volumes: [{name: v, " + vol + "}]\n" +
			"  containers: [{name: app, command: [x], volumeMounts: [{name: v, mountPath: /v}]}]\n"
	}
	for vol, want := range map[string]string{
		`downwardAPI: {items: [{path: ../x, fieldRef: {fieldPath: metadata.name}}]}`:                 `path "../x" must not start with '..'`,
		`downwardAPI: {items: [{path: /x, fieldRef: {fieldPath: metadata.name}}]}`:                   `path "/x" must be relative`,
		`downwardAPI: {items: [{path: a/../../x, fieldRef: {fieldPath: metadata.name}}]}`:            `must not contain '..'`,
		`downwardAPI: {items: [{path: ip, fieldRef: {fieldPath: status.podIP}}]}`:                    `fieldRef "status.podIP" is not allowed in a volume`,
		`downwardAPI: {items: [{path: m, resourceFieldRef: {resource: limits.memory}}]}`:             `containerName is required`,
		`projected: {sources: [{serviceAccountToken: {path: ..t}}]}`:                                 `path "..t" must not start with '..'`,
		`projected: {sources: [{serviceAccountToken: {path: t, expirationSeconds: 60}}]}`:            `expirationSeconds 60`,
		`projected: {sources: [{serviceAccountToken: {path: t}}, {serviceAccountToken: {path: t}}]}`: `conflicting duplicate paths`,
		`projected: {sources: [{clusterTrustBundle: {path: b}}]}`:                                    `need a cluster`,
		`projected: {sources: [{configMap: {name: missing}}]}`:                                       `ConfigMap "missing" not found`,
	} {
		if _, err := playErr(pod(vol), Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", vol, err, want)
		}
	}
}

// Fields of Kubernetes 1.33-1.35 that the API server accepts: translated as
// far as podvisor's settings express them, refused as the API refuses them.
func TestKube135Fields(t *testing.T) {
	pod := func(spec, container string) string {
		return "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n" + spec +
			"  volumes: [{name: work, emptyDir: {}}]\n  containers:\n  - name: app\n    command: [x]\n" + container
	}
	proc := func(t *testing.T, doc string) (*config.Process, []string) {
		t.Helper()
		res := play(t, doc, Options{})
		load(t, res)
		return res.Procs.Process("app"), res.Warnings
	}
	warned := func(ws []string, s string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(w, s) })
	}

	t.Run("probes of a job", func(t *testing.T) {
		// The kubelet's order of a container's probes (prober/worker.go):
		// startupProbe first, then readiness (never kills, probed while
		// terminating) and liveness.
		q, ws := proc(t, pod("  restartPolicy: Never\n", "    startupProbe: {exec: {command: [s]}, periodSeconds: 2, failureThreshold: 4}\n"+
			"    readinessProbe: {exec: {command: [r]}, periodSeconds: 1}\n    livenessProbe: {exec: {command: [l]}}\n"))
		if q.Type != config.Job || q.Startup == nil || q.Startup.Command[0] != "s" || q.Startup.FailureThreshold != 4 || q.StartTimeout != 9*time.Second {
			t.Errorf("startup %+v, start_timeout %s: want the startupProbe, failureThreshold 4, budget 4x2s+1s", q.Startup, q.StartTimeout)
		}
		if q.Ready == nil || q.Ready.Command[0] != "r" || !q.Ready.WhileStopping || q.Live == nil || q.Live.Command[0] != "l" {
			t.Errorf("ready %+v, live %+v: want the readinessProbe (while_stopping) and the livenessProbe", q.Ready, q.Live)
		}
		if warned(ws, "readinessProbe") {
			t.Errorf("a warning about the readinessProbe: %q", ws)
		}
		q, _ = proc(t, pod("  restartPolicy: OnFailure\n", "    readinessProbe: {exec: {command: [r]}}\n"))
		if q.Startup == nil || q.Startup.Kind != config.ProbeExec || !slices.Equal(q.Startup.Command, []string{"true"}) || q.Ready == nil || q.StartTimeout != 0 {
			t.Errorf("startup %+v ready %+v start_timeout %q: want a startup check that passes at once, and the readinessProbe", q.Startup, q.Ready, q.StartTimeout)
		}
	})
	t.Run("readiness while terminating", func(t *testing.T) {
		q, _ := proc(t, pod("", "    readinessProbe: {exec: {command: [r]}}\n"))
		if q.Ready == nil || !q.Ready.WhileStopping {
			t.Errorf("ready %+v: a regular container's readinessProbe goes on while it terminates", q.Ready)
		}
		// A regular container of an Always pod with both probes: the
		// startupProbe is its startup check, the readinessProbe readiness.
		q, ws := proc(t, pod("", "    startupProbe: {exec: {command: [s]}, failureThreshold: 7}\n    readinessProbe: {exec: {command: [r]}}\n"))
		if q.Type != config.Service || q.Startup == nil || q.Startup.Command[0] != "s" || q.Startup.FailureThreshold != 7 ||
			q.Ready == nil || q.Ready.Command[0] != "r" || !q.Ready.WhileStopping {
			t.Errorf("startup %+v ready %+v: want the startupProbe and the readinessProbe (while_stopping)", q.Startup, q.Ready)
		}
		if warned(ws, "readinessProbe") {
			t.Errorf("a warning about the readinessProbe: %q", ws)
		}
		// --ordered: both gate the next container, tried every 100ms; the
		// startup check keeps its budget (7 periods of 10s) in attempts.
		res := play(t, pod("", "    startupProbe: {exec: {command: [s]}, failureThreshold: 7}\n    readinessProbe: {exec: {command: [r]}}\n"), Options{Ordered: true})
		if o := res.Procs.Process("app"); o.Startup == nil || o.Startup.StartInterval != 100*time.Millisecond || o.Startup.FailureThreshold != 700 ||
			o.Ready == nil || o.Ready.StartInterval != 100*time.Millisecond {
			t.Errorf("--ordered: startup %+v ready %+v", o.Startup, o.Ready)
		}
		for _, side := range []string{"readinessProbe: {exec: {command: [r]}}", "startupProbe: {exec: {command: [r]}}, readinessProbe: {exec: {command: [x]}}"} {
			res := play(t, "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  initContainers:\n  - {name: side, command: [x], restartPolicy: Always, "+side+"}\n"+
				"  containers:\n  - {name: app, command: [x]}\n", Options{})
			if s := res.Procs.Process("side"); s.Ready == nil || s.Ready.Command[0] != "r" || s.Ready.WhileStopping || s.Startup != nil {
				t.Errorf("sidecar with %s: ready %+v startup %+v: its gate, not probed once termination has begun", side, s.Ready, s.Startup)
			}
		}
	})
	t.Run("https probe", func(t *testing.T) {
		q, _ := proc(t, pod("", "    readinessProbe: {httpGet: {port: 8443, path: /ready, scheme: HTTPS}}\n"))
		if q.Ready.Kind != config.ProbeHTTP || q.Ready.Target != "https://127.0.0.1:8443/ready" {
			t.Errorf("ready %+v", q.Ready)
		}
	})
	t.Run("restart rules", func(t *testing.T) {
		// The kubelet's first matching rule decides; podvisor says the same
		// with its policy and a restart rule, so every other code ends the
		// container as the kubelet does: a failure fails the run (issue 35
		// item 16: exit 1 under "Never, 42 restarts" is a Failed pod).
		for _, tc := range []struct {
			pod, container, policy string
			rules                  []config.ExitRule
			warn                   string
		}{
			{"Never", "restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}]",
				"never", []config.ExitRule{{In: []int{42}, Action: config.RuleRestart}}, ""},
			{"Never", "restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: NotIn, values: [0, 3]}}]",
				"never", []config.ExitRule{{NotIn: []int{0, 3}, Action: config.RuleRestart}}, ""},
			{"Never", "restartPolicy: OnFailure\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [0]}}]",
				"on-failure", []config.ExitRule{{In: []int{0}, Action: config.RuleRestart}}, ""},
			{"Always", "restartPolicy: Never", "never", nil, "restartPolicy Never in a pod with restartPolicy Always"},
			{"Never", "restartPolicy: OnFailure", "on-failure", nil, ""},
			{"Always", "restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: NotIn, values: [7]}}]",
				"never", []config.ExitRule{{NotIn: []int{7}, Action: config.RuleRestart}}, ""},
			{"Always", "restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: NotIn, values: [300]}}]",
				"always", nil, ""},
		} {
			res := play(t, pod("  restartPolicy: "+tc.pod+"\n", "    "+tc.container+"\n"), Options{})
			cfg := load(t, res)
			q := cfg.Processes["app"]
			var rules []config.ExitRule
			for _, r := range q.Restart.Rules {
				r.Pos = config.Pos{}
				rules = append(rules, r)
			}
			if q.Restart.Policy.String() != tc.policy || !reflect.DeepEqual(rules, tc.rules) || !slices.Equal(q.SuccessExitCodes, []int{0}) {
				t.Errorf("%s / %s: restart %+v, success codes %v; want %s %+v [0]", tc.pod, tc.container, q.Restart, q.SuccessExitCodes, tc.policy, tc.rules)
			}
			if tc.warn != "" && !warned(res.Warnings, tc.warn) || warned(res.Warnings, "restartPolicyRules") {
				t.Errorf("%s / %s: warnings %q, want %q and none about restartPolicyRules", tc.pod, tc.container, res.Warnings, tc.warn)
			}
		}
	})
	t.Run("restart all containers", func(t *testing.T) {
		// 42 restarts the container, 1-3 every container (restart-all), first match wins.
		src := pod("", "    restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [42]}}, "+
			"{action: RestartAllContainers, exitCodes: {operator: In, values: [1, 2, 3, 42]}}]\n")
		q, _ := proc(t, src)
		want := []config.ExitRule{{In: []int{1, 2, 3}, Action: config.RuleRestartAll}, {In: []int{42}, Action: config.RuleRestart}}
		if !reflect.DeepEqual(q.Restart.Rules, want) {
			t.Errorf("rules %+v, want %+v", q.Restart.Rules, want)
		}
		cfg := load(t, play(t, src, Options{}))
		rules := cfg.Processes["app"].Restart.Rules
		if len(rules) != 2 || rules[0].Action != config.RuleRestartAll || !slices.Equal(rules[0].In, []int{1, 2, 3}) {
			t.Errorf("loaded rules %+v", rules)
		}
		if p := cfg.Processes["app"]; p.Rule(42, 0) != 1 || p.Rule(5, 0) != -1 || p.Restart.Policy != config.Never {
			t.Errorf("42 should restart by rule, 5 fall to the policy (never): %+v", p.Restart)
		}
	})
	t.Run("file key ref", func(t *testing.T) {
		cfg := load(t, play(t, pod("", "    env: [{name: TOKEN, valueFrom: {fileKeyRef: {volumeName: work, path: cfg/app.env, key: TOKEN}}}, "+
			"{name: OPT, valueFrom: {fileKeyRef: {volumeName: work, path: app.env, key: OPT, optional: true}}}]\n"), Options{}))
		want := []string{"/bin/sh", "-c", envFileScript, "app", "/vol/work/cfg/app.env", "TOKEN", "TOKEN", "required",
			"/vol/work/app.env", "OPT", "OPT", "optional", "--", "x"}
		if got := cfg.Processes["app"].Command; !slices.Equal(got, want) {
			t.Errorf("command %q\nwant %q", got, want)
		}
	})
	t.Run("probe grace", func(t *testing.T) {
		q, ws := proc(t, pod("", "    livenessProbe: {exec: {command: [ok]}, terminationGracePeriodSeconds: 5}\n"))
		if q.Live == nil || q.Live.StopTimeout != 5*time.Second || warned(ws, "terminationGracePeriodSeconds") {
			t.Errorf("live %+v, warnings %q: want stop_timeout 5s, no warning", q.Live, ws)
		}
	})
	t.Run("tcpSocket hooks", func(t *testing.T) {
		res := play(t, pod("", "    lifecycle: {postStart: {tcpSocket: {port: 80}}, preStop: {tcpSocket: {port: 80}}}\n"), Options{})
		cfg := load(t, res)
		hook := cfg.Processes["app.post-start"]
		if hook == nil || !strings.Contains(strings.Join(hook.Command, " "), "exit 1") || cfg.Processes["app"].Stop.Command != nil {
			t.Errorf("postStart %+v, preStop %q: want a failing postStart and no preStop", hook, cfg.Processes["app"].Stop.Command)
		}
	})
	refused := map[string]string{
		pod("", "    restartPolicyRules: [{action: Restart, exitCodes: {operator: In, values: [1]}}]\n"):                           "need the container's own restartPolicy",
		pod("", "    restartPolicy: Never\n    restartPolicyRules: [{action: Reboot, exitCodes: {operator: In, values: [1]}}]\n"):  "want Restart or RestartAllContainers",
		pod("", "    restartPolicy: Never\n    restartPolicyRules: [{action: Restart, exitCodes: {operator: Is, values: [1]}}]\n"): "operator \"Is\": want In or NotIn",
		pod("", "    restartPolicy: Never\n    restartPolicyRules: [{action: Restart}]\n"):                                         "exitCodes is required",
		pod("", "    restartPolicy: Sometimes\n"):                                                             `restartPolicy "Sometimes"`,
		pod("", "    readinessProbe: {exec: {command: [ok]}, terminationGracePeriodSeconds: 5}\n"):            "must not be set on a readinessProbe",
		pod("", "    livenessProbe: {exec: {command: [ok]}, terminationGracePeriodSeconds: 0}\n"):             "must be greater than 0",
		pod("  terminationGracePeriodSeconds: 10\n", "    lifecycle: {preStop: {sleep: {seconds: 11}}}\n"):    "sleep.seconds 11: must be non-negative and at most terminationGracePeriodSeconds (10)",
		pod("", "    lifecycle: {stopSignal: SIGINT}\n"):                                                      "stopSignal: needs spec.os.name",
		pod("  os: {name: windows}\n", ""):                                                                    `spec.os.name "windows"`,
		pod("", "    env: [{name: A, valueFrom: {fileKeyRef: {volumeName: nope, path: p, key: A}}}]\n"):       `volumeName "nope" is not a volume`,
		pod("", "    env: [{name: A, valueFrom: {fileKeyRef: {volumeName: work, path: ../p, key: A}}}]\n"):    `path "../p" must not start with '..'`,
		pod("", "    env: [{name: A, valueFrom: {fileKeyRef: {volumeName: work, path: p, key: \"A=B\"}}}]\n"): `key "A=B"`,
		pod("", "    livenessProbe: {grpc: {port: 0}}\n"):                                                     "port 0 out of range",
		pod("", "    livenessProbe: {grpc: {port: 9000, mode: SSL}}\n"):                                       `mode "SSL": want Plaintext or TLS`,
		pod("", "    readinessProbe: {httpGet: {port: 80, scheme: HTTPS, protocol: HTTP2}}\n"):                "HTTP2 needs scheme HTTP",
		pod("", "    readinessProbe: {httpGet: {port: 80, protocol: SPDY}}\n"):                                `protocol "SPDY": want HTTP1 or HTTP2`,
	}
	for doc, want := range refused {
		if _, err := playErr(doc, Options{}); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want %q\n%s", err, want, doc)
		}
	}
	// stopSignal with spec.os.name linux is accepted.
	if q, _ := proc(t, pod("  os: {name: linux}\n", "    lifecycle: {stopSignal: SIGINT}\n")); q.Stop.Signal != syscall.SIGINT {
		t.Errorf("stop %+v", q.Stop)
	}
}

// Translate's errors carry the line and column of the field they are
// about, all of them at once.
func TestTranslateErrorPositions(t *testing.T) {
	_, err := playErr(`apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      volumes:
      - name: info
        downwardAPI:
          items:
          - {path: ../x, fieldRef: {fieldPath: metadata.name}}
      containers:
      - name: app
        command: [x]
        env:
        - name: A
          valueFrom: {fileKeyRef: {volumeName: nope, path: p, key: A}}
        lifecycle:
          stopSignal: SIGINT
          preStop: {sleep: {seconds: 99}}
        readinessProbe: {exec: {command: [x]}, terminationGracePeriodSeconds: 3}
        volumeMounts: [{name: info, mountPath: /info}]
        envFrom: [{prefix: P_}]
`, Options{})
	want := []string{
		`pod.yaml:11:13: spec.volumes[0] (info).downwardAPI.items[0]: path "../x" must not start with '..'`,
		`pod.yaml:17:35: containers[0] (app).env[0] (A).valueFrom.fileKeyRef: volumeName "nope"`,
		`pod.yaml:19:23: containers[0] (app).lifecycle.stopSignal: needs spec.os.name`,
		`pod.yaml:20:38: containers[0] (app).lifecycle.preStop.sleep.seconds 99`,
		`pod.yaml:21:79: containers[0] (app).readinessProbe.terminationGracePeriodSeconds: must not be set`,
		`pod.yaml:23:19: containers[0] (app).envFrom[0]: needs configMapRef or secretRef`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("errors:\n%v\nwant a line starting %q", err, w)
		}
	}
}

// --ordered gates on readiness: the gate is tried at once, then every
// 100ms until it first passes, then by periodSeconds; the kubelet's order
// keeps the period throughout (its readiness gates nothing).
func TestOrderedGateStartInterval(t *testing.T) {
	const pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n" +
		"  - {name: proxy, command: [p], readinessProbe: {exec: {command: [ok]}, periodSeconds: 15}}\n  - {name: app, command: [a]}\n"
	for ordered, want := range map[bool][2]string{true: {"100ms", "15s"}, false: {"15s", "15s"}} {
		cfg := load(t, play(t, pod, Options{Ordered: ordered}))
		r := cfg.Processes["proxy"].Ready
		if got := [2]string{r.StartInterval.String(), r.Interval.String()}; got != want {
			t.Errorf("ordered %v: start_interval, interval = %q, want %q", ordered, got, want)
		}
	}
}
