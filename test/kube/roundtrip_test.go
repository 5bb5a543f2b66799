package kube

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A chain whose order is total: db (ready once its file exists) -> migrate
// (oneshot) -> app.
const roundTripProcs = `listen: "off"
shutdown_timeout: 10s
processes:
  db:
    command: |
      echo "db start $(date +%s%N)" >> "$E2E_EVENTS"
      trap 'echo "db stop $(date +%s%N)" >> "$E2E_EVENTS"; exit 0' TERM
      sleep 0.5
      echo "db ready $(date +%s%N)" >> "$E2E_EVENTS"
      touch "$E2E_DIR/db-ready"
      while true; do sleep 0.1; done
    ready: {exec: 'test -e "$E2E_DIR/db-ready"', start_interval: 100ms}
  migrate:
    type: oneshot
    depends_on: {db: ready}
    command: |
      echo "migrate start $(date +%s%N)" >> "$E2E_EVENTS"
      echo "migrate stop $(date +%s%N)" >> "$E2E_EVENTS"
  app:
    depends_on: {db: ready, migrate: completed}
    command: |
      echo "app start $(date +%s%N)" >> "$E2E_EVENTS"
      trap 'sleep 0.5; echo "app stop $(date +%s%N)" >> "$E2E_EVENTS"; exit 0' TERM
      while true; do sleep 0.1; done
`

var roundTripOrder = []string{"db start", "db ready", "migrate start", "migrate stop", "app start", "app stop", "db stop"}

func checkOrder(t *testing.T, what string, evs map[string]int64) {
	t.Helper()
	for i := 1; i < len(roundTripOrder); i++ {
		before(t, evs, roundTripOrder[i-1], roundTripOrder[i])
	}
	if t.Failed() {
		t.Logf("%s: events %v", what, evs)
	}
}

func runToEnd(t *testing.T, r *run) map[string]int64 {
	t.Helper()
	r.waitEvents(30*time.Second, "app start")
	r.signal(syscall.SIGTERM)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
	}
	return r.readEvents()
}

// kube generate, then kube play of the result, starts and stops the
// processes in the order podvisor run does.
func TestGenerateRoundTrip(t *testing.T) {
	dir := t.TempDir()
	procs := filepath.Join(dir, "procs.yaml")
	if err := os.WriteFile(procs, []byte(roundTripProcs), 0o644); err != nil {
		t.Fatal(err)
	}
	checkOrder(t, "run", runToEnd(t, start(t, "run", "-c", procs, "--listen", "off")))

	for _, shape := range []string{"fat", "sidecars"} {
		t.Run(shape, func(t *testing.T) {
			if shape == "fat" {
				needRoot(t) // the ConfigMap is bound at /etc/podvisor
				if _, err := os.Stat("/etc/podvisor"); err == nil {
					t.Skip("/etc/podvisor exists on this machine")
				}
			}
			gen := start(t, "kube", "generate", "-c", procs, "--shape", shape, "--name", "chain", "--image", "chain:1")
			if code := gen.wait(30 * time.Second); code != 0 {
				t.Fatalf("generate: exit %d\n%s", code, gen.stderr)
			}
			out := gen.stdout.String()
			if shape == "fat" {
				// kube play honours runAsUser as root; the test's directories
				// are private to root, so the fat pod runs as root here.
				if !strings.Contains(out, "runAsUser: 65532\n") {
					t.Fatalf("fat pod without runAsUser 65532:\n%s", out)
				}
				out = strings.Replace(out, "runAsUser: 65532\n", "runAsUser: 0\n", 1)
			}
			manifest := filepath.Join(t.TempDir(), "chain.yaml")
			if err := os.WriteFile(manifest, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, m := range modes {
				t.Run(m.name, func(t *testing.T) {
					args := append([]string{"kube", "play", "--listen", "off"}, m.args...)
					// The fat pod's entrypoint is "podvisor": found on PATH (TestMain).
					r := start(t, append(args, manifest)...)
					checkOrder(t, shape+"/"+m.name, runToEnd(t, r))
				})
			}
		})
	}
}
