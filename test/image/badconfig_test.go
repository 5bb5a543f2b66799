package image

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

const badConfig = `processes:
  web:
    command: ["sleep", "infinity"]
    depends_on: [nosuch]
`

// badLocation is the file:line:col of the error in badConfig.
var badLocation = regexp.MustCompile(`/etc/podvisor/procs\.yaml:4:\d+ `)

// TestBadConfig: a procs.yaml that is invalid, missing or unreadable stops
// the container at once with exit code 2 and the reason in `podman logs`.
func TestBadConfig(t *testing.T) {
	needImages(t)
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T) []string // podman run options
		want  *regexp.Regexp
	}{
		{"invalid", func(t *testing.T) []string {
			return []string{"-v", configDir(t, map[string]string{"procs.yaml": badConfig}) + ":/etc/podvisor:ro"}
		}, badLocation},
		{"missing", func(t *testing.T) []string { return nil }, regexp.MustCompile(`/etc/podvisor/procs\.yaml.*no such file`)},
		{"unreadable", func(t *testing.T) []string {
			dir := configDir(t, map[string]string{"procs.yaml": "processes: {}\n"})
			if err := os.Chmod(filepath.Join(dir, "procs.yaml"), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{"--user", "1000650000:0", "-v", dir + ":/etc/podvisor:ro"}
		}, regexp.MustCompile(`/etc/podvisor/procs\.yaml.*permission denied`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := run(t, "bad-"+tc.name, append(tc.setup(t), baseImage)...)
			start := time.Now()
			if code := c.waitExit(20 * time.Second); code != 2 {
				t.Errorf("exit code %d, want 2 (configuration error)", code)
			}
			t.Logf("exited after %v", time.Since(start).Round(10*time.Millisecond))
			if logs := c.logs(); !tc.want.MatchString(logs) {
				t.Errorf("podman logs: want %v, got\n%s", tc.want, logs)
			}
		})
	}
}

// TestBadConfigFailsBuild: the `RUN ["podvisor", "check"]` that
// docs/base-image.md recommends fails the build of an image with an
// invalid procs.yaml, and says where the error is.
func TestBadConfigFailsBuild(t *testing.T) {
	needImages(t)
	t.Parallel()
	ctx := configDir(t, map[string]string{
		"procs.yaml": badConfig,
		"Dockerfile": "FROM " + baseImage + "\nCOPY procs.yaml /etc/podvisor/\nRUN [\"podvisor\", \"check\"]\n",
	})
	tag := "localhost/podvisor-it/" + uniqueName("badbuild") + ":test"
	out, code := podmanWithin(buildTimeout, "build", "--format", "docker", "-t", tag, ctx)
	if code == 0 {
		podman("rmi", tag)
		t.Fatalf("podman build of a bad procs.yaml succeeded:\n%s", out)
	}
	if !badLocation.MatchString(out) || !strings.Contains(out, "nosuch") {
		t.Errorf("podman build output: want %v and the unknown name, got\n%s", badLocation, tail(out, 20))
	}
}
