package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// The uids of TestVolumesFencedFromOtherUsers: the container's, and another
// local user's that must not reach the pod's volumes.
const (
	podUID      = 23456
	strangerUID = 12345
)

// asStranger runs sh -c script as strangerUID (no supplementary groups)
// and returns its output and whether it exited 0.
func asStranger(t *testing.T, script string) (string, bool) {
	t.Helper()
	cmd := exec.Command("/bin/sh", "-c", script)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: strangerUID, Gid: strangerUID, Groups: []uint32{}}}
	out, err := runFor(cmd, 30*time.Second)
	if err != nil && cmd.ProcessState == nil {
		t.Fatalf("run as uid %d: %v", strangerUID, err)
	}
	return string(out), err == nil
}

// A pod with a Secret volume, an emptyDir and a runAsUser container, as
// root, in a mount namespace and with --volume-root: the container reads
// the Secret and writes the emptyDir; another local user, who can reach the
// run's temporary directory, can neither read the Secret's file nor create
// a file in the emptyDir (the Secret's file was 0644 and the emptyDir 0777
// under a 0711 run directory).
func TestVolumesFencedFromOtherUsers(t *testing.T) {
	needRoot(t)
	for _, mode := range []string{"namespace", "volume-root"} {
		t.Run(mode, func(t *testing.T) {
			tmp, err := testharness.SharedTempDir(t, "podvisor-access-", 0o755)
			if err != nil {
				t.Fatal(err)
			}
			mp := freshBase(t, "access")
			args := []string{"kube", "play", "--listen", "off"}
			where := func(p string) string { return p } // a mount path as the test reaches it
			if mode == "volume-root" {
				root := filepath.Join(tmp, "root")
				args = append(args, "--volume-root", root)
				where = func(p string) string { return filepath.Join(root, p) }
			}
			file := filepath.Join(tmp, "pod.yaml")
			manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: fenced}
spec:
  securityContext: {runAsUser: %[1]d, runAsGroup: %[1]d}
  volumes:
  - {name: creds, secret: {secretName: s}}
  - {name: scratch, emptyDir: {}}
  containers:
  - name: app
    workingDir: /
    command: [sh, -c, 'cat %[2]s/creds/key > %[2]s/scratch/marker && echo "uid $(id -u)"; exec sleep 600']
    volumeMounts: [{name: creds, mountPath: %[2]s/creds}, {name: scratch, mountPath: %[2]s/scratch}]
---
{apiVersion: v1, kind: Secret, metadata: {name: s}, stringData: {key: hunter2}}
`, podUID, mp)
			if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			r := startEnv(t, []string{"TMPDIR=" + tmp, "PODVISOR_CONTROL=off", "PODVISOR_KUBE_STATE=" + filepath.Join(t.TempDir(), "state")},
				append(args, file)...)
			// The container's marker, seen through the volume as root.
			marker := ""
			testharness.Poll(30*time.Second, 20*time.Millisecond, func() bool {
				if mode == "volume-root" {
					marker = where(mp + "/scratch/marker")
				} else {
					ms, _ := filepath.Glob(filepath.Join(tmp, "podvisor-kube-*", "volumes", "scratch", "marker"))
					if len(ms) == 1 {
						marker = ms[0]
					}
				}
				b, err := os.ReadFile(marker)
				return err == nil && string(b) == "hunter2" && strings.Contains(r.stdout.String(), "| uid ")
			})
			if b, err := os.ReadFile(marker); err != nil || string(b) != "hunter2" {
				t.Fatalf("the container (uid %d) did not copy the Secret into the emptyDir: %q %v\nstdout:\n%s\nstderr:\n%s", podUID, b, err, r.stdout, r.stderr)
			}
			if !strings.Contains(r.stdout.String(), fmt.Sprintf("| uid %d", podUID)) {
				t.Errorf("the container did not run as uid %d:\n%s", podUID, r.stdout)
			}
			scratch := filepath.Dir(marker)
			secret := filepath.Join(filepath.Dir(scratch), "creds", "key")
			if mode == "volume-root" {
				secret = where(mp + "/creds/key")
			}
			if _, err := os.Stat(secret); err != nil {
				t.Fatalf("the Secret's file as root: %v", err)
			}
			// The stranger reaches the run's temporary directory: what stops
			// it is the volumes' fence.
			if out, ok := asStranger(t, "cd "+tmp); !ok {
				t.Fatalf("uid %d cannot even reach %s, so this test shows nothing: %s", strangerUID, tmp, out)
			}
			if out, ok := asStranger(t, "cat "+secret); ok || strings.Contains(out, "hunter2") {
				t.Errorf("uid %d read the Secret's file %s: %q", strangerUID, secret, out)
			}
			intruder := filepath.Join(scratch, "intruder")
			if out, ok := asStranger(t, "echo x > "+intruder); ok {
				t.Errorf("uid %d created %s in the emptyDir: %q", strangerUID, intruder, out)
			}
			if _, err := os.Lstat(intruder); err == nil {
				t.Errorf("%s exists", intruder)
			}
			r.signal(syscall.SIGTERM)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Errorf("exit %d\n%s", code, r.stderr)
			}
		})
	}
}

// Under --volume-root as root, containers whose users share no group are
// refused before anything runs: no mode of the volumes' directory could let
// both in and keep the other users of the machine out.
func TestVolumeRootUsersWithoutCommonGroup(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	file := filepath.Join(base, "pod.yaml")
	manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  restartPolicy: Never
  volumes: [{name: scratch, emptyDir: {}}]
  containers:
  - {name: a, command: [sh, -c, "echo ran"], securityContext: {runAsUser: %[1]d, runAsGroup: %[1]d}, volumeMounts: [{name: scratch, mountPath: /scratch}]}
  - {name: b, command: [sh, -c, "echo ran"], securityContext: {runAsUser: %[2]d, runAsGroup: %[2]d}, volumeMounts: [{name: scratch, mountPath: /scratch}]}
`, podUID, podUID+1)
	if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(podvisorBin, "kube", "play", "--listen", "off", "--volume-root", filepath.Join(base, "root"), file)
	cmd.Env = append(os.Environ(), "PODVISOR_CONTROL=off")
	out, err := runFor(cmd, 30*time.Second)
	if code := cmd.ProcessState.ExitCode(); code != 2 {
		t.Errorf("exit %d (%v), want 2\n%s", code, err, out)
	}
	for _, want := range []string{"pod.yaml", fmt.Sprintf("a (uid %d, gid %d), b (uid %d", podUID, podUID, podUID+1), "runAsGroup"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("the refusal lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), "| ran") {
		t.Errorf("a container ran:\n%s", out)
	}
}
