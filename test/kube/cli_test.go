package kube

import (
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The manifests in examples/kubernetes play (dry run): the entrypoint pod
// runs podvisor on the procs.yaml of its ConfigMap, the postStart pattern
// needs a local command for the nginx image.
func TestExamples(t *testing.T) {
	ex := func(name string) string {
		p, _ := filepath.Abs(filepath.Join("..", "..", "examples", "kubernetes", name))
		return p
	}
	r := start(t, "kube", "play", "--dry-run", ex("pod-entrypoint.yaml"))
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("pod-entrypoint: exit %d\n%s", code, r.stderr)
	}
	out := r.stdout.String()
	for _, want := range []string{`command: [podvisor, run, "-c", /etc/podvisor/procs.yaml]`, "shutdown_timeout: 30s", "volume procs: bound at /etc/podvisor"} {
		if !strings.Contains(out, want) {
			t.Errorf("pod-entrypoint dry run lacks %q:\n%s", want, out)
		}
	}

	r = start(t, "kube", "play", "--dry-run", ex("pod-poststart-wait.yaml"))
	if code := r.wait(30 * time.Second); code != 2 || !strings.Contains(r.stderr.String(), "proxy (image nginx:1.27)") ||
		!strings.Contains(r.stderr.String(), "--image-command") {
		t.Errorf("pod-poststart-wait without --image-command: exit %d\n%s", code, r.stderr)
	}
	r = start(t, "kube", "play", "--dry-run", "--image-command", "nginx:1.27=exec nginx -g 'daemon off;'", ex("pod-poststart-wait.yaml"))
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("pod-poststart-wait: exit %d\n%s", code, r.stderr)
	}
	out = r.stdout.String()
	for _, re := range []string{
		`(?m)^  install-podvisor:\n    command: \[cp, `,
		`(?m)^  proxy\.post-start:\n    command: \[/podvisor/podvisor, wait, "--http"`,
		`(?m)^  app:\n(.*\n)*?    depends_on:\n      install-podvisor: completed\n      proxy\.post-start: completed\n`,
		`(?m)^      command: \[/podvisor/podvisor, wait, "--gone", "--http", "http://127.0.0.1:9000/healthz", "--timeout", "25s"\]`,
	} {
		if !regexp.MustCompile(re).MatchString(out) {
			t.Errorf("pod-poststart-wait dry run does not match %s:\n%s", re, out)
		}
	}
	// The dry run is a procs.yaml podvisor accepts as is.
	p := filepath.Join(t.TempDir(), "procs.yaml")
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	if outb, err := exec.Command(podvisorBin, "check", "-c", p).CombinedOutput(); err != nil {
		t.Errorf("podvisor check of the dry run: %v\n%s", err, outb)
	}
}

// Bad manifests: every problem at once, with its position; exit 2; nothing runs.
func TestBadManifest(t *testing.T) {
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	os.WriteFile(bad, []byte(`apiVersion: v1
kind: Pod
metadata: {name: a}
spec:
  containers:
    - name: app
      command: [sh, -c, "touch $E2E_DIR/ran"]
      imagePullPolicy: Always
      readinessProbe:
        httpGet: {port: 80}
        periodSecond: 1
      livenesProbe: {}
`), 0o644)
	r := start(t, "kube", "play", bad)
	if code := r.wait(30 * time.Second); code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{
		bad + `:11:9: Pod.spec.containers[0].readinessProbe: unknown field "periodSecond" (did you mean "periodSeconds"?)`,
		bad + `:12:7: Pod.spec.containers[0]: unknown field "livenesProbe" (did you mean "livenessProbe"?)`,
	} {
		if !strings.Contains(r.stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(r.dir, "ran")); err == nil {
		t.Error("a container ran despite the errors")
	}
}

// Stdin, --name among several workloads, warnings on stderr.
func TestStdinAndName(t *testing.T) {
	doc := `apiVersion: v1
kind: Pod
metadata: {name: one}
spec:
  nodeSelector: {disk: ssd}
  containers: [{name: a, command: [sh, -c, "echo one"]}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: two}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: b, command: [sh, -c, "exit 0"]}]
`
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(podvisorBin, append([]string{"kube", "play"}, args...)...)
		cmd.Env = append(os.Environ(), "PODVISOR_CONTROL=off") // suites run side by side
		cmd.Stdin = strings.NewReader(doc)
		var out, errb strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &errb
		_ = cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	if _, stderr, code := run("--dry-run", "-"); code != 2 || !strings.Contains(stderr, "Pod/one, Job/two") {
		t.Errorf("two workloads without --name: exit %d: %s", code, stderr)
	}
	out, stderr, code := run("--dry-run", "--name", "one", "-")
	if code != 0 || !strings.Contains(stderr, "warning: spec.nodeSelector: ignored (scheduling has no meaning on one machine)") || !strings.Contains(out, "a:") {
		t.Errorf("--name one: exit %d\n%s\n%s", code, out, stderr)
	}
	// The Job runs to completion: exit 0.
	if _, stderr, code := run("--listen", "off", "-", "--name", "two"); code != 0 {
		t.Errorf("job two: exit %d\n%s", code, stderr)
	}
}

func TestWaitGone(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "main-running")
	os.WriteFile(file, nil, 0o644)

	// --file: waits while the file exists, returns 0 once it is removed.
	r := start(t, "wait", "--gone", "--file", file, "--timeout", "60s")
	time.Sleep(300 * time.Millisecond) // let it see the file at least once
	select {
	case <-r.done:
		t.Fatalf("wait --gone returned while the file exists: %d %s", r.code, r.stderr)
	default:
	}
	os.Remove(file)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Errorf("--file: exit %d %s", code, r.stderr)
	}

	// Timeout: 1, saying what it last saw.
	os.WriteFile(file, nil, 0o644)
	r = start(t, "wait", "--gone", "--file", file, "--timeout", "300ms")
	if code := r.wait(30 * time.Second); code != 1 || !strings.Contains(r.stderr.String(), "still exists") {
		t.Errorf("timeout: exit %d %s", code, r.stderr)
	}

	// --tcp and --http: gone once the listener is closed (a 503 still answers).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) })}
	go srv.Serve(ln)
	addr := ln.Addr().String()
	rt := start(t, "wait", "--gone", "--tcp", addr, "--timeout", "60s")
	rh := start(t, "wait", "--gone", "--http", "http://"+addr+"/", "--timeout", "60s")
	time.Sleep(300 * time.Millisecond)
	for _, r := range []*run{rt, rh} {
		select {
		case <-r.done:
			t.Fatalf("wait --gone returned while the server answers: %d %s", r.code, r.stderr)
		default:
		}
	}
	srv.Close()
	for _, r := range []*run{rt, rh} {
		if code := r.wait(30 * time.Second); code != 0 {
			t.Errorf("exit %d %s", code, r.stderr)
		}
	}

	// --pid: gone once the process has exited.
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	rp := start(t, "wait", "--gone", "--pid", strconv.Itoa(sleeper.Process.Pid), "--timeout", "60s")
	time.Sleep(300 * time.Millisecond)
	select {
	case <-rp.done:
		t.Fatalf("wait --gone --pid returned while the process runs: %d %s", rp.code, rp.stderr)
	default:
	}
	sleeper.Process.Kill()
	if code := rp.wait(30 * time.Second); code != 0 { // a zombie counts as gone
		t.Errorf("--pid: exit %d %s", code, rp.stderr)
	}
	sleeper.Wait()

	for _, bad := range [][]string{{"--gone"}, {"--gone", "--ready", ":9464"}, {"--pid", "1"}, {"--gone", "--file", "a", "--tcp", "b:1"}} {
		r := start(t, append([]string{"wait"}, bad...)...)
		if code := r.wait(30 * time.Second); code != 2 {
			t.Errorf("wait %q: exit %d, want 2", bad, code)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	procs := filepath.Join(t.TempDir(), "procs.yaml")
	os.WriteFile(procs, []byte("processes:\n  a: {command: [sleep, '1']}\n"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"kube"}, "usage:"},
		{[]string{"kube", "apply"}, `unknown command "apply"`},
		{[]string{"kube", "play"}, "want one manifest FILE"},
		{[]string{"kube", "play", "a.yaml", "b.yaml"}, "want one manifest FILE"},
		{[]string{"kube", "play", "/nonexistent.yaml"}, "/nonexistent.yaml"},
		{[]string{"kube", "play", "--image-command", "nginx", testdata("poststart-sidecar.yaml")}, "want IMAGE=CMD"},
		{[]string{"kube", "generate", "-c", procs, "--kind", "StatefulSet"}, "want Pod, Deployment or Job"},
		{[]string{"kube", "generate", "-c", procs, "--shape", "thin"}, "want fat or sidecars"},
		{[]string{"kube", "generate", "-c", "/nonexistent/procs.yaml"}, "/nonexistent/procs.yaml"},
		{[]string{"kube", "generate", "-c", procs, "extra"}, "unexpected argument"},
	} {
		r := start(t, tc.args...)
		if code := r.wait(30 * time.Second); code != 2 || !strings.Contains(r.stderr.String(), tc.want) {
			t.Errorf("podvisor %q: exit %d, want 2 and %q in:\n%s", tc.args, code, tc.want, r.stderr)
		}
	}
}
