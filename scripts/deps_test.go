// Package scripts holds the tests of the shell scripts in this directory.
package scripts

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// stubs writes apt-get, dpkg-query and sudo stand-ins into a directory put
// first on PATH. dpkg-query reports every package missing; apt-get logs
// each call's arguments to calls.log and, for update, answers "Could not
// get lock" while the file lock-failures holds a number above 0 (counting
// it down), as apt does while unattended-upgrades runs.
func stubs(t *testing.T, lockFailures string) (dir string, env []string) {
	t.Helper()
	dir = t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/bash\n"+body), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write("dpkg-query", "exit 1\n")
	write("sudo", `exec "$@"`+"\n")
	write("apt-get", `d=$(dirname "$0")
echo "$*" >> "$d/calls.log"
if [[ " $* " == *" update "* ]]; then
    n=$(cat "$d/lock-failures")
    if [[ $n == always ]] || (( n > 0 )); then
        [[ $n == always ]] || echo $((n - 1)) > "$d/lock-failures"
        echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
        echo "E: Unable to lock directory /var/lib/apt/lists/" >&2
        exit 100
    fi
fi
exit 0
`)
	if err := os.WriteFile(filepath.Join(dir, "lock-failures"), []byte(lockFailures), 0o644); err != nil {
		t.Fatal(err)
	}
	env = append(os.Environ(), "PATH="+dir+":"+os.Getenv("PATH"), "PODVISOR_APT_LOCK_POLL=0")
	return dir, env
}

func runDeps(t *testing.T, env []string, extra ...string) (string, error) {
	t.Helper()
	cmd := exec.Command("bash", "deps.sh", "prometheus", "zsh")
	cmd.Env = append(env, extra...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func calls(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "calls.log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// TestDepsWaitsForTheAptLock: deps.sh makes apt-get wait for another apt's
// lock (DPkg::Lock::Timeout, for update and install alike) instead of
// failing at once, retries an update that still finds the lists locked,
// and gives up at its deadline.
func TestDepsWaitsForTheAptLock(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	t.Run("option passed", func(t *testing.T) {
		dir, env := stubs(t, "0")
		if out, err := runDeps(t, env); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		got := calls(t, dir)
		want := []string{
			"-o DPkg::Lock::Timeout=600 update -qq",
			"-o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends prometheus zsh",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("apt-get calls:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	})
	t.Run("timeout configurable", func(t *testing.T) {
		dir, env := stubs(t, "0")
		if out, err := runDeps(t, env, "PODVISOR_APT_LOCK_TIMEOUT=42"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for _, c := range calls(t, dir) {
			if !strings.HasPrefix(c, "-o DPkg::Lock::Timeout=42 ") {
				t.Errorf("apt-get %s: want -o DPkg::Lock::Timeout=42", c)
			}
		}
	})
	t.Run("lists lock retried", func(t *testing.T) {
		dir, env := stubs(t, "2")
		out, err := runDeps(t, env)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if c := calls(t, dir); len(c) != 4 || !strings.Contains(c[3], " install ") {
			t.Errorf("apt-get calls, want 3 updates then install:\n%s", strings.Join(c, "\n"))
		}
		if strings.Count(out, "waiting up to 600s for another apt") != 1 {
			t.Errorf("want one waiting line:\n%s", out)
		}
	})
	t.Run("deadline", func(t *testing.T) {
		dir, env := stubs(t, "always")
		out, err := runDeps(t, env, "PODVISOR_APT_LOCK_TIMEOUT=0")
		if err == nil {
			t.Fatalf("succeeded with the lock held for good:\n%s", out)
		}
		if !strings.Contains(out, "Could not get lock") || !strings.Contains(out, "another apt still holds the lock after 0s") {
			t.Errorf("output does not say why:\n%s", out)
		}
		for _, c := range calls(t, dir) {
			if strings.Contains(c, " install ") {
				t.Errorf("installed after update failed: %s", c)
			}
		}
	})
}
