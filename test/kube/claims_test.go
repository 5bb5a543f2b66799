package kube

// Volumes as the API server leaves them (issue 38 item 1), played as root
// in the mount namespace: a StatefulSet's claim outlives its pod until
// --volumes; an injected pod's volumes without a source are emptyDirs; a
// pre-1.24 token Secret at the service account path is a placeholder.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// statefulSet counts its runs in its claim: each run appends a line to
// /data/runs and writes the count to $E2E_DIR/runs.
const statefulSet = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  selector: {matchLabels: {app: db}}
  serviceName: db
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 5
      hostname: not-this-one
      containers:
      - name: db
        command: [sh, -c, 'trap "exit 0" TERM; echo "$POD $POD_LABEL $INDEX $(cat /proc/sys/kernel/hostname)" > "$E2E_DIR/identity"; echo run >> /data/runs; wc -l < /data/runs > "$E2E_DIR/runs.tmp"; mv "$E2E_DIR/runs.tmp" "$E2E_DIR/runs"; while :; do sleep 0.1; done']
        env:
        - {name: POD, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: POD_LABEL, valueFrom: {fieldRef: {fieldPath: "metadata.labels['statefulset.kubernetes.io/pod-name']"}}}
        - {name: INDEX, valueFrom: {fieldRef: {fieldPath: "metadata.labels['apps.kubernetes.io/pod-index']"}}}
        volumeMounts: [{name: data, mountPath: /data}]
`

func TestClaimOutlivesThePod(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	file := filepath.Join(t.TempDir(), "db.yaml")
	if err := os.WriteFile(file, []byte(statefulSet), 0o644); err != nil {
		t.Fatal(err)
	}
	var state string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PODVISOR_KUBE_STATE="); ok {
			state = v
		}
	}
	claim := filepath.Join(state, "claims", "default", "data-db-0")
	for want := 1; want <= 2; want++ {
		r := startEnv(t, env, "kube", "play", file)
		seen := filepath.Join(r.dir, "runs")
		var got string
		ok := waitFor(func() bool {
			b, _ := os.ReadFile(seen)
			got = strings.TrimSpace(string(b))
			return got != ""
		})
		if !ok || got != string(rune('0'+want)) {
			t.Fatalf("run %d: the claim holds %q runs, want %d\n%s", want, got, want, r.stderr)
		}
		// The StatefulSet controller's pod: named SET-ORDINAL, labelled so,
		// and that is its hostname, whatever the template's.
		if b, _ := os.ReadFile(filepath.Join(r.dir, "identity")); strings.TrimSpace(string(b)) != "db-0 db-0 0 db-0" {
			t.Errorf("the pod's name, pod-name label, pod-index label and hostname: %q, want all db-0 (index 0)", b)
		}
		if _, e, code := podvisorCmd(t, env, "kube", "down", "db-0"); code != 0 {
			t.Fatalf("kube down db-0: exit %d: %s", code, e)
		}
		r.wait(time.Minute)
		if _, err := os.Stat(filepath.Join(claim, "runs")); err != nil {
			t.Fatalf("after run %d the claim's data is gone: %v", want, err)
		}
	}
	if _, e, code := podvisorCmd(t, env, "kube", "play", "--down", "--volumes", file); code != 0 {
		t.Fatalf("kube play --down --volumes: exit %d: %s", code, e)
	}
	if _, err := os.Stat(claim); !os.IsNotExist(err) {
		t.Errorf("after --volumes the claim %s is still there (%v)", claim, err)
	}
}

// injected is shaped as an injector leaves a pod: volumes without a
// source (emptyDirs once the API server has defaulted them), one with
// medium Memory, a legacy token Secret at the service account path.
const injected = `apiVersion: v1
kind: Pod
metadata: {name: injected, namespace: shop}
spec:
  terminationGracePeriodSeconds: 5
  initContainers:
  - name: mesh-proxy
    restartPolicy: Always
    command: [sh, -c, 'trap "exit 0" TERM; echo up > /var/run/mesh/socket/ready; while :; do sleep 0.1; done']
    volumeMounts:
    - {name: mesh-socket, mountPath: /var/run/mesh/socket}
    - {name: mesh-data, mountPath: /var/lib/mesh/data}
    - {name: mesh-envoy, mountPath: /etc/mesh/proxy}
  containers:
  - name: app
    command: [sh, -c, 'trap "exit 0" TERM; cat /var/run/mesh/socket/ready /var/run/secrets/kubernetes.io/serviceaccount/namespace > "$E2E_DIR/seen"; while :; do sleep 0.1; done']
    volumeMounts:
    - {name: mesh-socket, mountPath: /var/run/mesh/socket}
    - {name: default-token-q8x2m, mountPath: /var/run/secrets/kubernetes.io/serviceaccount, readOnly: true}
  volumes:
  - name: mesh-socket
  - name: mesh-data
  - name: mesh-envoy
    emptyDir: {medium: Memory}
  - name: default-token-q8x2m
    secret: {secretName: default-token-q8x2m}
`

func TestInjectedVolumes(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	file := filepath.Join(t.TempDir(), "injected.yaml")
	if err := os.WriteFile(file, []byte(injected), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startEnv(t, env, "kube", "play", file)
	var got string
	if !waitFor(func() bool {
		b, _ := os.ReadFile(filepath.Join(r.dir, "seen"))
		got = string(b)
		return strings.Contains(got, "shop")
	}) {
		t.Fatalf("the app never read its volumes (seen %q)\nstderr:\n%s", got, r.stderr)
	}
	if got != "up\nshop" {
		t.Errorf("the app read %q, want the sidecar's file and the namespace", got)
	}
	if _, e, code := podvisorCmd(t, env, "kube", "down", "injected"); code != 0 {
		t.Fatalf("kube down: exit %d: %s", code, e)
	}
	r.wait(time.Minute)
}

// An unsupported type is refused naming it, once.
func TestUnsupportedVolumeNamed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "nfs.yaml")
	doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: n}\nspec:\n  containers: [{name: a, command: [x], volumeMounts: [{name: d, mountPath: /d}]}]\n" +
		"  volumes: [{name: d, nfs: {server: s, path: /x}}]\n"
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := podvisorCmd(t, nil, "kube", "play", "--dry-run", file)
	if code != 2 || !strings.Contains(e, "nfs volumes cannot run locally") || strings.Contains(e, "no volume named") {
		t.Errorf("exit %d, stderr:\n%s\nwant 2, the nfs type named and no \"no volume named\"", code, e)
	}
}

// waitFor polls cond for up to a minute.
func waitFor(cond func() bool) bool { return testharness.Poll(time.Minute, 20*time.Millisecond, cond) }

// A persistentVolumeClaim volume with readOnly: true is mounted read-only
// in every container, as the kubelet mounts it: a write gets EROFS, though
// the volumeMount itself is not readOnly. The claim's own directory stays
// writable, so a second pod without readOnly writes there.
func TestClaimReadOnly(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	manifest := func(ro string) string {
		return `apiVersion: v1
kind: Pod
metadata: {name: ro-` + ro + `}
spec:
  restartPolicy: Never
  containers:
  - name: c
    command: [sh, -c, 'if echo x 2> "$E2E_DIR/err" > /data/f; then echo wrote > "$E2E_DIR/result"; else echo refused > "$E2E_DIR/result"; fi']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes:
  - name: data
    persistentVolumeClaim: {claimName: shared, readOnly: ` + ro + `}
`
	}
	for _, tc := range []struct{ ro, want string }{{"true", "refused"}, {"false", "wrote"}} {
		t.Run("readOnly="+tc.ro, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), "pod.yaml")
			if err := os.WriteFile(file, []byte(manifest(tc.ro)), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startEnv(t, env, "kube", "play", file)
			if code := r.wait(time.Minute); code != 0 {
				t.Fatalf("exit %d\n%s", code, r.stderr)
			}
			b, _ := os.ReadFile(filepath.Join(r.dir, "result"))
			if got := strings.TrimSpace(string(b)); got != tc.want {
				e, _ := os.ReadFile(filepath.Join(r.dir, "err"))
				t.Errorf("write into the claim: %q, want %q (%s)", got, tc.want, e)
			}
			if tc.ro == "true" {
				if e, _ := os.ReadFile(filepath.Join(r.dir, "err")); !strings.Contains(string(e), "Read-only file system") {
					t.Errorf("the refused write said %q, want EROFS (Read-only file system)", e)
				}
			}
		})
	}
}
