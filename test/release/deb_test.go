package release

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debConfig: a oneshot writes a file, a service that needs it completed
// prints the file and exits 42, which a restart rule turns into the end of
// the run with that code.
const debConfig = `version: 1
processes:
  greet:
    type: oneshot
    command: "echo hello from the package > /tmp/greeting"
  show:
    command: "cat /tmp/greeting; exit 42"
    depends_on: {greet: completed}
    restart:
      rules: [{exit_codes: {in: [42]}, action: shutdown}]
`

// TestDebInstalls builds the amd64 .deb (scripts/deb.sh) and installs it
// with apt-get in a clean Debian root (mmdebstrap), where podvisor version
// and a run of a small config work, and the completions and the man page
// are where Debian's shells and man look.
func TestDebInstalls(t *testing.T) {
	needReleaseTests(t)
	if _, err := exec.LookPath("mmdebstrap"); err != nil {
		t.Fatal("mmdebstrap is needed (make test-release installs it)")
	}
	dist := t.TempDir()
	release(t, repoRoot(t), dist, "amd64")
	deb := exec.Command("bash", filepath.Join(repoRoot(t), "scripts/deb.sh"), "amd64")
	deb.Env = append(os.Environ(), "DIST="+dist, "TOOLS="+filepath.Join(repoRoot(t), ".tools"), "VERSION=v0.0.0-test")
	if out, err := deb.CombinedOutput(); err != nil {
		t.Fatalf("deb.sh: %v\n%s", err, out)
	}
	debs, _ := filepath.Glob(filepath.Join(dist, "podvisor_*_amd64.deb"))
	if len(debs) != 1 {
		t.Fatalf("deb.sh made %v, want one podvisor_*_amd64.deb", debs)
	}
	sums, _ := os.ReadFile(filepath.Join(dist, "SHA256SUMS"))
	if !strings.Contains(string(sums), filepath.Base(debs[0])) {
		t.Errorf("SHA256SUMS does not cover %s:\n%s", filepath.Base(debs[0]), sums)
	}
	cfg := filepath.Join(t.TempDir(), "procs.yaml")
	if err := os.WriteFile(cfg, []byte(debConfig), 0o644); err != nil {
		t.Fatal(err)
	}

	mirror := os.Getenv("DEBIAN_MIRROR")
	if mirror == "" {
		mirror = "http://deb.debian.org/debian"
	}
	hooks := []string{
		`copy-in ` + debs[0] + ` ` + cfg + ` /tmp`,
		`chroot "$1" apt-get install -y -q /tmp/` + filepath.Base(debs[0]),
		`chroot "$1" podvisor version`,
		`chroot "$1" podvisor check -c /tmp/procs.yaml`,
		`chroot "$1" podvisor run -c /tmp/procs.yaml --listen off --control off || echo "run exited $?"`,
		`chroot "$1" ls /usr/bin/podvisor /usr/share/bash-completion/completions/podvisor /usr/share/zsh/vendor-completions/_podvisor /usr/share/fish/vendor_completions.d/podvisor.fish /usr/share/man/man1/podvisor.1.gz`,
	}
	args := []string{"--quiet", "--variant=apt"}
	for _, h := range hooks {
		args = append(args, "--customize-hook="+h)
	}
	args = append(args, "bookworm", filepath.Join(t.TempDir(), "root"), mirror)
	out, err := exec.Command("mmdebstrap", args...).CombinedOutput()
	t.Logf("mmdebstrap %s\n%s", strings.Join(args, " "), out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"podvisor v0.0.0-test", "linux/amd64", // version
		"ok: 2 processes", // check
		"hello from the package", "run exited 42",
		"/usr/share/man/man1/podvisor.1.gz",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the output in the installed root lacks %q", want)
		}
	}
}
