package kube

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A pod's gRPC readinessProbe against grpc-go's own health server
// (internal/testgrpc): /readyz follows the server's answer for the service
// the probe names, and /status says what a NOT_SERVING service answered.
func TestGRPCProbeAgainstGRPCGo(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "testgrpc")
	if out, err := exec.Command("go", "build", "-o", bin, "../../internal/testgrpc").CombinedOutput(); err != nil {
		t.Fatalf("go build testgrpc: %v\n%s", err, out)
	}
	for _, tc := range []struct {
		service string
		readyz  int
		status  string
	}{{"up", 200, `"ready":true`}, {"down", 503, `NOT_SERVING`}} {
		t.Run(tc.service, func(t *testing.T) {
			grpcPort, httpPort := freePort(t), freePort(t)
			manifest := filepath.Join(t.TempDir(), "grpc.yaml")
			os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: grpc}
spec:
  containers:
    - name: server
      image: example/grpc-server
      command: [%s, %s]
      env: [{name: GRPC_LISTEN, value: "127.0.0.1:%d"}]
      readinessProbe:
        grpc: {port: %d, service: %s}
        periodSeconds: 1
        failureThreshold: 1
`, bin, filepath.Join(t.TempDir(), "addr"), grpcPort, grpcPort, tc.service)), 0o644)
			r := start(t, "kube", "play", "--listen", fmt.Sprintf("127.0.0.1:%d", httpPort), manifest)
			get := func(path string) (int, string) {
				resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d%s", httpPort, path))
				if err != nil {
					return 0, ""
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			deadline := time.Now().Add(30 * time.Second)
			for {
				code, _ := get("/readyz")
				_, status := get("/status")
				if code == tc.readyz && strings.Contains(status, tc.status) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("/readyz %d, /status %s; want %d and %q\n%s", code, status, tc.readyz, tc.status, r.stdout)
				}
				time.Sleep(50 * time.Millisecond)
			}
			r.signal(syscall.SIGTERM)
			r.wait(30 * time.Second)
		})
	}
}
