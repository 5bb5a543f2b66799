package image

import (
	"strings"
	"testing"
)

// TestBaseImageConfig reads back what the built base image declares: the
// stamped binary, podvisor run as the exec-form entrypoint, the config
// path, the stop signal and the health check.
func TestBaseImageConfig(t *testing.T) {
	needImages(t)
	t.Parallel()
	// podman's own complaints (healthcheck timers need systemd) share the
	// output: look for the line.
	if out := must(t, "run", "--rm", "--entrypoint", "podvisor", baseImage, "version"); !strings.Contains("\n"+out, "\npodvisor "+version+"\n") ||
		!strings.Contains(out, "commit: "+commit) {
		t.Errorf("podvisor version in the image: %q, want %q and commit %s", out, "podvisor "+version, commit)
	}
	for format, want := range map[string]string{
		"{{json .Config.Entrypoint}}":  `["podvisor","run"]`,
		"{{.Config.StopSignal}}":       "SIGTERM",
		"{{json .Config.Env}}":         `"PODVISOR_CONFIG=/etc/podvisor/procs.yaml"`,
		"{{json .Config.Healthcheck}}": `"podvisor","wait","--ready",":9464"`,
		"{{.User}}":                    "",
	} {
		got := strings.TrimSpace(must(t, "image", "inspect", "--format", format, baseImage))
		if !strings.Contains(got, want) || (want == "" && got != "") {
			t.Errorf("image %s: %s, want %q", format, got, want)
		}
	}
}
