package kube

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// The readinessProbe (httpGet on a named port) drives podvisor's /readyz.
func TestReadinessProbeFeedsReadyz(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("python3 is missing")
		}
		t.Skip("no python3")
	}
	webPort, httpPort := freePort(t), freePort(t)
	served := t.TempDir()
	manifest := filepath.Join(t.TempDir(), "web.yaml")
	os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
    - name: web
      image: python:3.12
      command: [python3, -m, http.server, "%d", --bind, 127.0.0.1, --directory, %s]
      ports: [{name: web, containerPort: %d}]
      readinessProbe:
        httpGet: {path: /ok.txt, port: web}
        periodSeconds: 1
        failureThreshold: 1
`, webPort, served, webPort)), 0o644)
	r := start(t, "kube", "play", "--listen", fmt.Sprintf("127.0.0.1:%d", httpPort), manifest)
	readyz := func() int {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/readyz", httpPort))
		if err != nil {
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	waitFor := func(want int) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for readyz() != want {
			if time.Now().After(deadline) {
				t.Fatalf("/readyz never answered %d\n%s", want, r.stdout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	// The server answers 404 for /ok.txt: not ready, for several periods.
	waitFor(503)
	time.Sleep(2500 * time.Millisecond)
	if code := readyz(); code != 503 {
		t.Fatalf("/readyz %d while the probe's path is 404", code)
	}
	os.WriteFile(filepath.Join(served, "ok.txt"), []byte("ok"), 0o644)
	waitFor(200)
	r.signal(syscall.SIGTERM)
	if code := r.wait(30 * time.Second); code != 0 {
		t.Errorf("exit %d\n%s", code, r.stdout)
	}
	if !strings.Contains(r.stdout.String(), "web") {
		t.Errorf("no output from web:\n%s", r.stdout)
	}
}
