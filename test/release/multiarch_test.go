package release

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

const (
	multiArchName   = "localhost/podvisor-it/base:multiarch"
	multiArchCommit = "0123456789abcdef0123456789abcdef01234567"
)

// podman runs scripts/podman.sh (the CI's podman settings) with args.
func podman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(filepath.Join(repoRoot(t), "scripts", "podman.sh"), args...).Output()
	if err != nil {
		t.Fatalf("podman %s: %v\n%s%s", strings.Join(args, " "), err, out, stderrOf(err))
	}
	return string(out)
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// ociIndex is the part of an OCI image index (and of a Docker manifest
// list, which has the same shape) that the test reads.
type ociIndex struct {
	MediaType string `json:"mediaType"`
	Manifests []struct {
		MediaType string `json:"mediaType"`
		Digest    string `json:"digest"`
		Platform  struct {
			Architecture string `json:"architecture"`
			OS           string `json:"os"`
		} `json:"platform"`
	} `json:"manifests"`
}

func (ix ociIndex) arches() []string {
	var a []string
	for _, m := range ix.Manifests {
		a = append(a, m.Platform.OS+"/"+m.Platform.Architecture)
	}
	slices.Sort(a)
	return a
}

// TestMultiArchImage builds Dockerfile.base for amd64 and arm64 into one
// manifest list (scripts/image-multiarch.sh, from locally made Debian bases)
// and checks what a registry would serve: two images of the right
// architectures with podvisor as the entry point, the list written as an OCI
// image index, and the arm64 image run under qemu-user (binfmt_misc, which
// make test-release registers): `podvisor version` names linux/arm64 and the
// stamped commit, and as the container's PID 1 it brings a three-process DAG
// to ready and tears it down in reverse order on `podman stop`.
func TestMultiArchImage(t *testing.T) {
	needReleaseTests(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Fatal("podman is needed (make test-release installs it)")
	}
	root := repoRoot(t)
	build := exec.Command(filepath.Join(root, "scripts", "image-multiarch.sh"), multiArchName, "amd64", "arm64")
	build.Env = append(os.Environ(), "LOCAL_BASES=1", "VERSION=v0.0.0-test", "COMMIT="+multiArchCommit)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("image-multiarch.sh: %v\n%s", err, out)
	}

	var list ociIndex
	if err := json.Unmarshal([]byte(podman(t, "manifest", "inspect", multiArchName)), &list); err != nil {
		t.Fatal(err)
	}
	if got := list.arches(); !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("manifest list platforms %v, want linux/amd64 and linux/arm64", got)
	}

	for _, arch := range []string{"amd64", "arm64"} {
		var img []struct {
			Architecture string
			Os           string
			Healthcheck  *struct{ Test []string }
			Config       struct {
				Entrypoint []string
				Env        []string
				StopSignal string
			}
		}
		if err := json.Unmarshal([]byte(podman(t, "image", "inspect", multiArchName+"-"+arch)), &img); err != nil || len(img) != 1 {
			t.Fatalf("image inspect %s: %v", arch, err)
		}
		c := img[0].Config
		if img[0].Architecture != arch || img[0].Os != "linux" {
			t.Errorf("%s image is %s/%s", arch, img[0].Os, img[0].Architecture)
		}
		if !slices.Equal(c.Entrypoint, []string{"podvisor", "run"}) || c.StopSignal != "SIGTERM" || img[0].Healthcheck == nil ||
			!slices.Contains(c.Env, "PODVISOR_CONFIG=/etc/podvisor/procs.yaml") {
			t.Errorf("%s image config: entrypoint %q, stop signal %q, healthcheck %v, env %q",
				arch, c.Entrypoint, c.StopSignal, img[0].Healthcheck, c.Env)
		}
	}

	// Pushed as an OCI layout: index.json names one OCI image index whose
	// manifests are the two platforms.
	layout := t.TempDir()
	podman(t, "manifest", "push", "--all", "--format", "oci", multiArchName, "oci:"+layout)
	var top ociIndex
	readJSON(t, filepath.Join(layout, "index.json"), &top)
	if len(top.Manifests) != 1 || top.Manifests[0].MediaType != "application/vnd.oci.image.index.v1+json" {
		t.Fatalf("OCI layout index.json: %+v, want one OCI image index", top)
	}
	var index ociIndex
	readJSON(t, filepath.Join(layout, "blobs", "sha256", strings.TrimPrefix(top.Manifests[0].Digest, "sha256:")), &index)
	if got := index.arches(); !slices.Equal(got, []string{"linux/amd64", "linux/arm64"}) {
		t.Errorf("OCI index platforms %v, want linux/amd64 and linux/arm64", got)
	}

	runArm64Image(t, multiArchName+"-arm64")
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// runArm64Image runs the arm64 image through binfmt_misc's qemu-aarch64.
func runArm64Image(t *testing.T, image string) {
	if b, err := os.ReadFile("/proc/sys/fs/binfmt_misc/qemu-aarch64"); err != nil || !strings.HasPrefix(string(b), "enabled") {
		t.Fatalf("qemu-aarch64 is not registered with binfmt_misc (scripts/binfmt.sh aarch64, which make test-release runs): %v", err)
	}
	out := podman(t, "run", "--rm", "--entrypoint", "podvisor", image, "version")
	if !strings.Contains(out, "linux/arm64") || !strings.Contains(out, multiArchCommit) {
		t.Errorf("arm64 image: podvisor version does not name linux/arm64 and the commit:\n%s", out)
	}

	dir := t.TempDir()
	ports, err := testharness.FreePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "procs.yaml"), []byte(dagConfig(dir, ports[0])), 0o644); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("podvisor-multiarch-%d", os.Getpid())
	podman(t, "run", "-d", "--name", name, "-v", dir+":"+dir, "-e", "PODVISOR_CONFIG="+dir+"/procs.yaml", image)
	t.Cleanup(func() { _ = exec.Command(filepath.Join(repoRoot(t), "scripts", "podman.sh"), "rm", "-f", name).Run() })

	// podvisor wait, the image's own arm64 binary, inside the container.
	podman(t, "exec", name, "podvisor", "wait", "--ready", fmt.Sprintf("127.0.0.1:%d", ports[0]), "--timeout", "5m")
	for _, f := range []string{"prepared", "store.up", "app.up"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("ready, but %v", err)
		}
	}
	if pid1 := podman(t, "exec", name, "cat", "/proc/1/comm"); !strings.Contains(pid1, "podvisor") {
		t.Errorf("PID 1 of the arm64 container is %q, want podvisor", strings.TrimSpace(pid1))
	}
	start := time.Now()
	podman(t, "stop", "-t", "120", name)
	code := strings.TrimSpace(podman(t, "inspect", "--format", "{{.State.ExitCode}}", name))
	if code != "0" {
		t.Errorf("arm64 container exit code %s after podman stop (%v), want 0", code, time.Since(start))
	}
	order, _ := os.ReadFile(filepath.Join(dir, "order"))
	if string(order) != "app\nstore\n" {
		t.Errorf("stop order %q, want app then store (reverse dependency order)", order)
	}
}
