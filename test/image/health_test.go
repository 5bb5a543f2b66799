package image

import (
	"strings"
	"testing"
	"time"
)

// TestHealthcheck runs the image's own HEALTHCHECK (kept by --format docker
// builds) through `podman healthcheck run`: healthy once everything is
// ready, unhealthy while a process has lost its readiness, healthy again
// after it is back. No `listen` in the config: the HEALTHCHECK asks the
// default address.
func TestHealthcheck(t *testing.T) {
	needImages(t)
	t.Parallel()
	if hc := strings.TrimSpace(must(t, "image", "inspect", "--format", "{{json .Config.Healthcheck}}", baseImage)); !strings.Contains(hc, `"podvisor","wait","--ready",":9464"`) {
		t.Fatalf("base image HEALTHCHECK %s: want CMD podvisor wait --ready :9464 (was it built with --format docker?)", hc)
	}
	dir := configDir(t, map[string]string{"procs.yaml": `processes:
  svc:
    command: touch /tmp/healthy; exec sleep infinity
    ready:
      exec: test -e /tmp/healthy
      interval: 300ms
      failure_threshold: 1
`})
	c := run(t, "health", "-v", dir+":/etc/podvisor:ro", baseImage)
	check := func(want string) {
		t.Helper()
		var out string
		var code int
		eventually(t, 30*time.Second, func() bool {
			out, code = podman("healthcheck", "run", c.name)
			return strings.TrimSpace(out) == want || (want == "healthy" && code == 0 && strings.TrimSpace(out) == "")
		}, func() string { return "podman healthcheck run: " + strings.TrimSpace(out) + ", want " + want })
		if want == "healthy" && code != 0 || want == "unhealthy" && code != 1 {
			t.Errorf("podman healthcheck run said %q with exit code %d", out, code)
		}
	}
	check("healthy")
	if out, code := c.exec("rm", "/tmp/healthy"); code != 0 {
		t.Fatalf("rm: %d %s", code, out)
	}
	check("unhealthy")
	if out, code := c.exec("touch", "/tmp/healthy"); code != 0 {
		t.Fatalf("touch: %d %s", code, out)
	}
	check("healthy")
}
