// Package image builds Dockerfile.base and the fat-container example with a
// real container engine (podman) and runs them as users do: podvisor as PID
// 1, `podman stop`, HEALTHCHECK, a random non-root uid on a read-only root
// filesystem, `podman kube play`. Everything is observed from outside the
// container: `podman logs`, `podman inspect`, `podman exec`, published ports.
//
// The tests run only under `make test-image` (PODVISOR_IMAGE_TESTS=1), which
// installs podman and its helpers first; a plain `go test ./...` skips them.
// Under PODVISOR_REQUIRE_TOOLS=1 (CI) a missing engine fails them.
// PODVISOR_TEST_SLOWDOWN=N stretches every deadline N times.
//
// podman is always run through scripts/podman.sh, the one place that knows
// what CI machines need (runc, cgroupfs, explicit ulimits).
package image

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

var (
	repoRoot string
	podmanSh string // scripts/podman.sh
	// The images TestMain builds; empty when the tests are skipped.
	baseImage string
	fatImage  string
	// Why the images are not there (skip or fail), when they are not.
	setupErr string
)

const (
	baseTag = "localhost/podvisor-it/base:test"
	fatTag  = "localhost/podvisor-it/fat:test"
	version = "v0.0.0-image-test"
	commit  = "fedcba9876543210fedcba9876543210fedcba98"
)

func TestMain(m *testing.M) {
	root, err := testharness.ModuleRoot()
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(2)
	}
	repoRoot = root
	podmanSh = filepath.Join(root, "scripts", "podman.sh")
	switch {
	case os.Getenv("PODVISOR_IMAGE_TESTS") != "1":
		setupErr = "image tests run under `make test-image` (PODVISOR_IMAGE_TESTS=1)"
	default:
		setupErr = buildImages()
	}
	os.Exit(m.Run())
}

// buildImages makes (or finds cached) the Debian and Go base images, then
// builds Dockerfile.base and the fat example FROM it. It returns what went
// wrong, or "".
func buildImages() string {
	for _, p := range []string{"podman", "runc", "mmdebstrap"} {
		if _, err := exec.LookPath(p); err != nil {
			return p + " not found: `make test-image` installs it"
		}
	}
	start := time.Now()
	bases, err := exec.Command(filepath.Join(repoRoot, "scripts", "image-bases.sh")).Output()
	if err != nil {
		return fmt.Sprintf("scripts/image-bases.sh: %v\n%s", err, stderrOf(err))
	}
	var args []string
	for _, line := range strings.Fields(string(bases)) {
		args = append(args, "--build-arg", line)
	}
	args = append(args, "--build-arg", "VERSION="+version, "--build-arg", "COMMIT="+commit,
		"--build-arg", "BUILDPLATFORM=linux/"+runtime.GOARCH)
	out, code, oldBase := buildImage("Dockerfile.base", baseTag, args...)
	if code != 0 {
		return fmt.Sprintf("podman build -f Dockerfile.base: exit %d\n%s", code, out)
	}
	out, code, oldFat := buildImage("examples/fat-container/Dockerfile", fatTag, "--build-arg", "BASE_IMAGE="+baseTag)
	if code != 0 {
		return fmt.Sprintf("podman build -f examples/fat-container/Dockerfile: exit %d\n%s", code, out)
	}
	// The images these tags named before, so that repeated runs do not pile
	// up untagged images; the old fat image first, as it is built on the
	// old base. A removal fails harmlessly while a container uses it.
	for _, id := range []string{oldFat, oldBase} {
		if id != "" {
			podman("rmi", id)
		}
	}
	baseImage, fatImage = baseTag, fatTag
	fmt.Fprintf(os.Stderr, "image: base and fat images ready in %v\n", time.Since(start).Round(100*time.Millisecond))
	return ""
}

// buildImage builds file (relative to the repository root, which is the
// context) as tag. It returns podman's output and exit code, and the id of
// the image the tag named before when the build replaced it. --format docker
// keeps HEALTHCHECK (the OCI format has no field for it).
func buildImage(file, tag string, args ...string) (out string, code int, replaced string) {
	old, _ := podman("image", "inspect", "--format", "{{.Id}}", tag)
	out, code = podmanWithin(buildTimeout, append(append([]string{"build", "--format", "docker", "-f", file, "-t", tag}, args...), repoRoot)...)
	now, _ := podman("image", "inspect", "--format", "{{.Id}}", tag)
	if old, now = strings.TrimSpace(old), strings.TrimSpace(now); code == 0 && isID(old) && old != now {
		replaced = old
	}
	return out, code, replaced
}

// isID reports whether s is an image id (64 hex digits).
func isID(s string) bool {
	return len(s) == 64 && strings.Trim(s, "0123456789abcdef") == ""
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// needImages skips the test, or fails it under PODVISOR_REQUIRE_TOOLS=1,
// when the images could not be built.
func needImages(t *testing.T) {
	t.Helper()
	if setupErr == "" {
		return
	}
	if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" && os.Getenv("PODVISOR_IMAGE_TESTS") == "1" {
		t.Fatalf("%s (PODVISOR_REQUIRE_TOOLS=1)", setupErr)
	}
	t.Skip(setupErr)
}

// scaled stretches d by PODVISOR_TEST_SLOWDOWN (1 when it is unset or not a
// number >= 1).
func scaled(d time.Duration) time.Duration {
	f, _ := testharness.Slowdown()
	return testharness.Scale(d, f)
}

// eventually polls cond until it holds, failing the test after timeout.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, msg func() string) {
	t.Helper()
	if !testharness.Poll(scaled(timeout), 50*time.Millisecond, cond) {
		t.Fatalf("after %v: %s", scaled(timeout), msg())
	}
}

// podman runs scripts/podman.sh with args and returns its stdout and stderr
// together, and its exit code (-1 when it could not run, or still ran after
// 3 minutes).
func podman(args ...string) (string, int) {
	return podmanWithin(3*time.Minute, args...)
}

// buildTimeout bounds one podman build: only a guard against a hang. A cold
// build compiles podvisor and its modules inside the container, which on a
// busy machine (CI with stress-ng beside it) took longer than 3 minutes.
const buildTimeout = 15 * time.Minute

// podmanWithin is podman with its own bound (scaled like every deadline).
func podmanWithin(timeout time.Duration, args ...string) (string, int) {
	ctx, cancel := context.WithTimeout(context.Background(), scaled(timeout))
	defer cancel()
	cmd := exec.CommandContext(ctx, podmanSh, args...)
	cmd.Dir = repoRoot
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return out.String(), code
}

// must runs podman and fails the test unless it exits 0.
func must(t *testing.T, args ...string) string {
	t.Helper()
	out, code := podman(args...)
	if code != 0 {
		t.Fatalf("podman %s: exit %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// uniqueName returns prefix plus random hex, for containers and volumes that
// other test runs on the machine must not collide with.
func uniqueName(prefix string) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "pvit-" + prefix + "-" + hex.EncodeToString(b[:])
}

// container is one container a test started; it is removed with the test.
type container struct {
	t    *testing.T
	name string
}

// run starts a detached container with the given podman run options, image
// and arguments, and removes it when the test ends.
func run(t *testing.T, prefix string, args ...string) *container {
	t.Helper()
	c := &container{t: t, name: uniqueName(prefix)}
	t.Cleanup(func() {
		if t.Failed() {
			logs, _ := podman("logs", c.name)
			t.Logf("podman logs %s:\n%s", c.name, tail(logs, 60))
		}
		podman("rm", "-f", "-t", "0", c.name)
	})
	must(t, append([]string{"run", "-d", "--name", c.name}, args...)...)
	return c
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (c *container) logs() string {
	out, _ := podman("logs", c.name)
	return out
}

func (c *container) exec(args ...string) (string, int) {
	return podman(append([]string{"exec", c.name}, args...)...)
}

// inspect returns a Go-template field of `podman inspect`.
func (c *container) inspect(format string) string {
	c.t.Helper()
	return strings.TrimSpace(must(c.t, "inspect", "--format", format, c.name))
}

func (c *container) running() bool {
	out, _ := podman("inspect", "--format", "{{.State.Running}}", c.name)
	return strings.TrimSpace(out) == "true"
}

// waitExit waits until the container has exited and returns its exit code.
func (c *container) waitExit(timeout time.Duration) int {
	c.t.Helper()
	eventually(c.t, timeout, func() bool { return !c.running() }, func() string {
		return c.name + " still running; logs:\n" + tail(c.logs(), 30)
	})
	code, err := strconv.Atoi(c.inspect("{{.State.ExitCode}}"))
	if err != nil {
		c.t.Fatal(err)
	}
	return code
}

// waitLog waits for a line of `podman logs` containing s.
func (c *container) waitLog(timeout time.Duration, s string) {
	c.t.Helper()
	eventually(c.t, timeout, func() bool { return strings.Contains(c.logs(), s) }, func() string {
		return fmt.Sprintf("no %q in the logs of %s:\n%s", s, c.name, tail(c.logs(), 30))
	})
}

// url returns http://127.0.0.1:PORT for the container port published with
// -p 127.0.0.1::PORT.
func (c *container) url(port int) string {
	c.t.Helper()
	out := strings.TrimSpace(must(c.t, "port", c.name, fmt.Sprintf("%d/tcp", port)))
	return "http://" + strings.Split(out, "\n")[0]
}

// get returns the status code and body of GET url, or 0 on a network error.
func get(url string) (int, string) {
	code, body, err := testharness.Get(url, 3*time.Second)
	if code == 0 && err != nil {
		return 0, err.Error()
	}
	return code, body
}

// waitReady waits for /readyz 200 on the published podvisor port.
func (c *container) waitReady(timeout time.Duration) {
	c.t.Helper()
	url := c.url(9464) + "/readyz"
	var last string
	eventually(c.t, timeout, func() bool {
		code, body := get(url)
		last = fmt.Sprintf("%d %s", code, body)
		return code == 200
	}, func() string { return "GET " + url + ": " + last + "\nlogs:\n" + tail(c.logs(), 30) })
}

// configDir writes files into a new directory that any uid can read, for
// mounting at /etc/podvisor.
func configDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// logIndex returns where s first occurs in logs, failing the test if never.
func logIndex(t *testing.T, logs, s string) int {
	t.Helper()
	i := strings.Index(logs, s)
	if i < 0 {
		t.Fatalf("no %q in the logs:\n%s", s, tail(logs, 40))
	}
	return i
}
