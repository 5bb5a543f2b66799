package kube

// The exit code of kube play is the phase the pod ends in (issue 38 item
// 7): 0 for Succeeded, a failed container's code for Failed, as
// docs/kubernetes.md "Pod phase and conditions" says. The kubelet's
// getPhase decides the phase: a regular init container that fails under
// restartPolicy Never fails the pod; under OnFailure a container that
// failed runs again and the pod can still succeed.

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestPodPhaseExitCode(t *testing.T) {
	loop := `trap "exit 0" TERM; while :; do sleep 0.1; done`
	cases := []struct {
		name, policy, init, containers string
		want                           int
	}{
		{"succeeded, sidecar stopped", "Never", `
  - name: proxy
    restartPolicy: Always
    command: [sh, -c, '` + loop + `']`, `
  - name: app
    command: [sh, -c, 'exit 0']`, 0},
		{"failed", "Never", "", `
  - name: app
    command: [sh, -c, 'exit 3']`, 3},
		{"one of two failed", "Never", "", `
  - name: ok
    command: [sh, -c, 'exit 0']
  - name: bad
    command: [sh, -c, 'sleep 0.2; exit 4']`, 4},
		{"init container failed", "Never", `
  - name: migrate
    command: [sh, -c, 'exit 5']`, `
  - name: app
    command: [sh, -c, '` + loop + `']`, 5},
		{"failed once under OnFailure, then succeeded", "OnFailure", "", `
  - name: app
    command: [sh, -c, 'if [ -e "$E2E_DIR/ran" ]; then exit 0; fi; touch "$E2E_DIR/ran"; exit 6']`, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc := fmt.Sprintf("apiVersion: v1\nkind: Pod\nmetadata: {name: phase}\nspec:\n  restartPolicy: %s\n  terminationGracePeriodSeconds: 5\n", tc.policy)
			if tc.init != "" {
				doc += "  initContainers:" + tc.init + "\n"
			}
			doc += "  containers:" + tc.containers + "\n"
			manifest := filepath.Join(t.TempDir(), "pod.yaml")
			if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startEnv(t, podsEnv(t), "kube", "play", manifest)
			if code := r.wait(time.Minute); code != tc.want {
				t.Errorf("exit %d, want %d\n%s\nstdout:\n%s\nstderr:\n%s", code, tc.want, doc, r.stdout, r.stderr)
			}
		})
	}
}
