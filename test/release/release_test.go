// Package release tests what `make release` ships (docs/install.md): that a
// build is reproducible, and that the binaries of other architectures work,
// run under qemu-user. They build with scripts/release.sh and run only with
// PODVISOR_RELEASE_TESTS=1 (`make test-release`), as they take minutes.
package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// repoRoot is the checkout this package lives in.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func needReleaseTests(t *testing.T) {
	t.Helper()
	if os.Getenv("PODVISOR_RELEASE_TESTS") == "" {
		t.Skip("set PODVISOR_RELEASE_TESTS=1 (make test-release)")
	}
}

// release runs scripts/release.sh from the tree src into dist for the given
// architectures, with a fixed version and commit (src may be a copy
// without .git). The tools come from the checkout's .tools.
func release(t *testing.T, src, dist string, arches ...string) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{filepath.Join(src, "scripts/release.sh")}, arches...)...)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "DIST="+dist, "TOOLS="+filepath.Join(repoRoot(t), ".tools"),
		"VERSION=v0.0.0-test", "COMMIT=0123456789abcdef0123456789abcdef01234567")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("release.sh %v: %v\n%s", arches, err, out)
	}
}

// copyTree copies the files git knows of (tracked, and untracked but not
// ignored) from the checkout into dir.
func copyTree(t *testing.T, dir string) {
	t.Helper()
	root := repoRoot(t)
	out, err := exec.Command("git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue // deleted in the work tree
		}
		if err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, b, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReproducible: the same source built in two directories of different
// names and lengths gives byte-identical binaries, SBOMs and SHA256SUMS (a
// path, time or build id in the binary would differ).
func TestReproducible(t *testing.T) {
	needReleaseTests(t)
	var sums [2][]byte
	var bins [2][]byte
	for i, name := range []string{"a", "second-tree"} {
		src := filepath.Join(t.TempDir(), name)
		copyTree(t, src)
		dist := filepath.Join(src, "dist")
		release(t, src, dist, "amd64")
		var err error
		if sums[i], err = os.ReadFile(filepath.Join(dist, "SHA256SUMS")); err != nil {
			t.Fatal(err)
		}
		if bins[i], err = os.ReadFile(filepath.Join(dist, "podvisor-linux-amd64")); err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(bins[i], []byte(src)) {
			t.Errorf("the binary holds its source path %s (no -trimpath?)", src)
		}
	}
	if !bytes.Equal(bins[0], bins[1]) {
		t.Errorf("two builds of the same source differ (%d and %d bytes)", len(bins[0]), len(bins[1]))
	}
	if !bytes.Equal(sums[0], sums[1]) {
		t.Errorf("SHA256SUMS differ:\n%s\n%s", sums[0], sums[1])
	}
	if !bytes.Contains(sums[0], []byte("  podvisor-linux-amd64.cdx.json\n")) {
		t.Errorf("SHA256SUMS does not cover the SBOM:\n%s", sums[0])
	}
}
