package kube

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Fields of Kubernetes 1.35 at work: an init container writes an env file
// into an emptyDir, the app reads a key of it through valueFrom.fileKeyRef
// when it starts, and its restartPolicyRules restart it after exit code 42
// only, though its restartPolicy is Never.
func TestFileKeyRefAndRestartRules(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: rules}
spec:
  restartPolicy: Never
  volumes: [{name: work, emptyDir: {}}]
  initContainers:
  - name: setup
    command: [sh, -c, 'printf "# generated\nTOKEN=s3cr=t\nOTHER=x\n" > /work/app.env']
    volumeMounts: [{name: work, mountPath: /work}]
  containers:
  - name: app
    command: [sh, -c]
    args:
    - |
      echo "app try-$(ls /work | grep -c try) $(date +%s%N)" >> "$E2E_EVENTS"
      echo "app token=$TOKEN $(date +%s%N)" >> "$E2E_EVENTS"
      if [ ! -e /work/try ]; then touch /work/try; exit 42; fi
      exit 0
    env:
    - name: TOKEN
      valueFrom: {fileKeyRef: {volumeName: work, path: app.env, key: TOKEN}}
    - name: MISSING
      valueFrom: {fileKeyRef: {volumeName: work, path: none.env, key: X, optional: true}}
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [42]}
    volumeMounts: [{name: work, mountPath: /work}]
`), 0o644); err != nil {
		t.Fatal(err)
	}
	// --ordered: podvisor's back-off (500ms), not the kubelet's 10s.
	r := start(t, "kube", "play", "--listen", "off", "--ordered", "--volume-root", filepath.Join(t.TempDir(), "root"), manifest)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Fatalf("exit %d, want 0 (restarted after 42, then done)\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
	}
	evs := r.readEvents()
	before(t, evs, "app try-0", "app try-1")
	if _, ok := evs["app token=s3cr=t"]; !ok {
		t.Errorf("the app did not get TOKEN from the env file: %v", evs)
	}
	if strings.Contains(r.stderr.String(), "restartPolicyRules") {
		t.Errorf("a warning about restartPolicyRules, which podvisor now says exactly:\n%s", r.stderr)
	}
}

// The kubelet restarts such a container after 42 only: any other failure
// ends it, and the pod is Failed. kube play exits with that code, as it
// does for a container without rules (issue 35 item 16: it exited 0, the
// codes counted as success).
func TestRestartRulesOtherFailureFailsThePod(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: rules}
spec:
  restartPolicy: Never
  containers:
  - name: app
    command: [sh, -c, 'echo "app ran $(date +%s%N)" >> "$E2E_EVENTS"; exit 1']
    restartPolicy: Never
    restartPolicyRules:
    - action: Restart
      exitCodes: {operator: In, values: [42]}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, "kube", "play", "--listen", "off", "--ordered", manifest)
	if code := r.wait(30 * time.Second); code != 1 {
		t.Fatalf("exit %d, want 1 (the container failed with 1: a Failed pod)\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
	}
	if _, ok := r.readEvents()["app ran"]; !ok {
		t.Errorf("the app never ran")
	}
}
