package kube

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// proxyv2 stands for the istio/proxyv2 image's entrypoint: it dispatches
// on its first argument (istio-iptables for istio-init, proxy for
// istio-proxy) and checks the files and environment the pod gives it.
const proxyv2 = `#!/bin/sh
case "$1" in
istio-iptables)
  echo "istio-init start $(date +%s%N)" >> "$E2E_EVENTS"
  test -s /var/run/secrets/kubernetes.io/serviceaccount/token || { echo "istio-init: no token" >&2; exit 3; }
  exit 0 ;;
proxy)
  echo "istio-proxy start $(date +%s%N)" >> "$E2E_EVENTS"
  grep -q '^app="reviews"$' /etc/istio/pod/labels || { echo "istio-proxy: no labels" >&2; exit 3; }
  test -s /var/run/secrets/tokens/istio-token || { echo "istio-proxy: no istio-token" >&2; exit 4; }
  test -s /var/run/secrets/istio/root-cert.pem || { echo "istio-proxy: no root cert" >&2; exit 5; }
  test "$POD_NAMESPACE $2 $4" = "bookinfo sidecar bookinfo.svc.cluster.local" || { echo "istio-proxy: $POD_NAMESPACE $*" >&2; exit 6; }
  trap 'echo "istio-proxy stop $(date +%s%N)" >> "$E2E_EVENTS"; exit 0' TERM
  sleep 0.3
  touch "$E2E_DIR/proxy-ready"
  echo "istio-proxy ready $(date +%s%N)" >> "$E2E_EVENTS"
  while true; do sleep 0.1; done ;;
esac
echo "proxyv2: unknown command $1" >&2
exit 2
`

// pilotAgent stands for the pilot-agent binary of the image, which the
// postStart hook runs: "wait" returns once the proxy is ready.
const pilotAgent = `#!/bin/sh
[ "$1" = wait ] || exit 2
until [ -e "$E2E_DIR/proxy-ready" ]; do sleep 0.1; done
echo "pilot-agent waited $(date +%s%N)" >> "$E2E_EVENTS"
`

// An Istio-injected pod, as a cluster returns it, plays once its images'
// commands are given: istio-init runs first, the app starts only after
// istio-proxy's postStart `pilot-agent wait` has returned, and the
// downwardAPI and projected volumes (kube-api-access-*, istio-token,
// istio-podinfo) hold the pod's data.
func TestIstioInjectedPod(t *testing.T) {
	needRoot(t) // the volumes are bound at their mount paths
	for _, p := range []string{"/etc/istio", "/var/lib/istio", "/opt/ibm"} {
		if _, err := os.Stat(p); err == nil {
			t.Skipf("%s exists on this machine", p)
		}
	}
	dir := t.TempDir()
	bin, from := filepath.Join(dir, "bin"), filepath.Join(dir, "from")
	for name, data := range map[string]string{
		filepath.Join(bin, "proxyv2"):                              proxyv2,
		filepath.Join(bin, "pilot-agent"):                          pilotAgent,
		filepath.Join(from, "istio-ca-root-cert", "root-cert.pem"): "ISTIO ROOT\n",
		filepath.Join(dir, "ca.crt"):                               "CLUSTER CA\n",
	} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	r := startEnv(t, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")},
		"kube", "play", "--listen", "off", "--from-dir", from, "--ca-file", filepath.Join(dir, "ca.crt"),
		"--image-command", "docker.io/istio/proxyv2:1.24.0=exec proxyv2", testdata("istio-injected.yaml"))
	evs := r.waitEvents(30*time.Second, "istio-init start", "istio-proxy ready", "pilot-agent waited", "reviews copied")
	before(t, evs, "istio-init start", "istio-proxy start")
	before(t, evs, "pilot-agent waited", "reviews start")
	for file, want := range map[string]string{"namespace": "bookinfo", "ca.crt": "CLUSTER CA\n"} {
		if b, err := os.ReadFile(filepath.Join(r.dir, file)); err != nil || string(b) != want {
			t.Errorf("%s as the app read it: %q %v, want %q", file, b, err, want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(r.dir, "labels")); !strings.Contains(string(b), "security.istio.io/tlsMode=\"istio\"\n") {
		t.Errorf("labels as the app read them:\n%s", b)
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
	}
	stderr := r.stderr.String()
	if n := strings.Count(stderr, "set by the API server"); n != 1 {
		t.Errorf("%d notices about the server-set fields, want 1:\n%s", n, stderr)
	}
	for _, p := range []string{"/etc/istio", "/var/lib/istio", "/opt/ibm"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("mount point %s left on the host", p)
		}
	}
}

// With --ordered, an Istio-style pod (a proxy whose readinessProbe has a
// 15s period, and a postStart that waits for it) starts its app no later
// than in the kubelet's order: the readiness gate is tried every 100ms
// until it first passes, not every 15s.
func TestOrderedStartsNoLater(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: proxied}
spec:
  containers:
  - name: proxy
    command: [sh, -c, 'sleep 0.5; touch "$E2E_DIR/ready"; echo "proxy ready $(date +%s%N)" >> "$E2E_EVENTS"; exec sleep 600']
    readinessProbe: {exec: {command: [sh, -c, 'test -e "$E2E_DIR/ready"']}, periodSeconds: 15}
    lifecycle:
      postStart: {exec: {command: [sh, -c, 'until [ -e "$E2E_DIR/ready" ]; do sleep 0.1; done']}}
  - name: app
    command: [sh, -c, 'echo "app start $(date +%s%N)" >> "$E2E_EVENTS"; exec sleep 600']
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			r := start(t, append(append([]string{"kube", "play", "--listen", "off"}, m.args...), manifest)...)
			evs := r.waitEvents(30*time.Second, "proxy ready", "app start")
			if lag := time.Duration(evs["app start"] - evs["proxy ready"]); lag > 3*time.Second {
				t.Errorf("the app started %s after the proxy was ready, want well under the probe's 15s period", lag)
			}
			r.signal(syscall.SIGTERM)
			r.wait(30 * time.Second)
		})
	}
}
