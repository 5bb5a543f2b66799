package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// A container of an earlier run planted dir -> OUTSIDE in a hostPath
// volume. A later run whose mount point lies beneath dir (a volume nested in
// the hostPath's mountPath, a subPath file there, a mountPath in the
// hostPath's own directory, or the same under --volume-root) must not
// create it outside every volume: it refuses, naming the path, and nothing
// appears in OUTSIDE (the mount point was created through the symlink).
func TestMountPointNotThroughPlantedSymlink(t *testing.T) {
	needRoot(t)
	type tc struct {
		volumeRoot bool
		// mounts of the second volume (the first is the hostPath at
		// MP/host); %[1]s is MP, %[2]s the hostPath's directory.
		mount, volume string
	}
	cases := map[string]tc{
		"nested mountPath":   {mount: `{name: second, mountPath: "%[1]s/host/dir/sub"}`, volume: `{name: second, emptyDir: {}}`},
		"subPath file":       {mount: `{name: second, mountPath: "%[1]s/host/dir/conf.yaml", subPath: conf.yaml}`, volume: `{name: second, configMap: {name: c}}`},
		"under the hostPath": {mount: `{name: second, mountPath: "%[2]s/dir/sub"}`, volume: `{name: second, emptyDir: {}}`},
		"volume-root":        {volumeRoot: true, mount: `{name: second, mountPath: "%[1]s/host/dir/sub"}`, volume: `{name: second, emptyDir: {}}`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			mp := freshBase(t, "target")
			base := t.TempDir()
			host, outside := filepath.Join(base, "host"), filepath.Join(base, "outside")
			for _, d := range []string{host, outside} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// What the earlier run's container left in its hostPath.
			if err := os.Symlink(outside, filepath.Join(host, "dir")); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(base, "pod.yaml")
			manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: planted}
spec:
  restartPolicy: Never
  volumes:
  - {name: host, hostPath: {path: %[2]q, type: Directory}}
  - `+c.volume+`
  containers:
  - name: app
    command: [sh, -c, 'echo "app start $(date +%%s%%N)" >> "$E2E_EVENTS"; until [ -e "$E2E_DIR/go" ]; do sleep 0.05; done']
    volumeMounts: [{name: host, mountPath: "%[1]s/host"}, `+c.mount+`]
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {conf.yaml: "x: 1"}}
`, mp, host)
			if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"kube", "play", "--listen", "off"}
			linkDir := filepath.Join(mp, "host", "dir")
			if c.volumeRoot {
				root := filepath.Join(base, "root")
				args = append(args, "--volume-root", root)
				linkDir = filepath.Join(root, mp, "host", "dir")
			} else if strings.Contains(c.mount, "%[2]s") {
				linkDir = filepath.Join(host, "dir")
			}
			r := startEnv(t, []string{"PODVISOR_CONTROL=off", "PODVISOR_KUBE_STATE=" + filepath.Join(base, "state")}, append(args, file)...)
			// While the container runs (the old code got that far), or
			// once the run has given up: nothing outside.
			testharness.Poll(30*time.Second, 20*time.Millisecond, func() bool {
				select {
				case <-r.done:
					return true
				default:
				}
				_, ran := r.readEvents()["app start"]
				return ran
			})
			if ents, _ := os.ReadDir(outside); len(ents) != 0 {
				t.Errorf("the mount point was created outside every volume, through the planted symlink: %s holds %v\n%s", outside, ents, r.stderr)
			}
			if err := os.WriteFile(filepath.Join(r.dir, "go"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if code := r.wait(30 * time.Second); code == 0 {
				t.Errorf("exit 0, want a refusal\n%s", r.stderr)
			}
			if out := r.stderr.String(); !strings.Contains(out, linkDir+": ") || !strings.Contains(out, "symbolic link") {
				t.Errorf("the refusal does not name %s as a symbolic link:\n%s", linkDir, out)
			}
			if ents, _ := os.ReadDir(host); len(ents) != 1 {
				t.Errorf("the hostPath holds %v, want only the planted link", ents)
			}
			if _, err := os.Lstat(mp); !os.IsNotExist(err) {
				t.Errorf("the run's mount points were left behind: %s: %v", mp, err)
			}
		})
	}
}

// The same mounts without a planted link: the mount points are made inside
// the hostPath (bound, or linked under --volume-root), the container uses
// them, and they are removed at the end, leaving the hostPath as it was.
func TestMountPointInsideHostPath(t *testing.T) {
	needRoot(t)
	for _, volumeRoot := range []bool{false, true} {
		t.Run(fmt.Sprintf("volume-root=%v", volumeRoot), func(t *testing.T) {
			mp := freshBase(t, "inside")
			base := t.TempDir()
			host := filepath.Join(base, "host")
			if err := os.Mkdir(host, 0o755); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(base, "pod.yaml")
			manifest := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: inside}
spec:
  restartPolicy: Never
  volumes:
  - {name: host, hostPath: {path: %[2]q, type: Directory}}
  - {name: scratch, emptyDir: {}}
  - {name: conf, configMap: {name: c}}
  containers:
  - name: app
    command: [sh, -c, 'echo hi > %[1]s/host/dir/sub/x && cat %[1]s/host/dir/sub/x %[1]s/host/dir/conf.yaml && echo w > %[1]s/host/w && rm %[1]s/host/w && if echo y 2>/dev/null > %[1]s/host/dir/conf.yaml; then echo conf writable; else echo conf read-only; fi']
    volumeMounts:
    - {name: host, mountPath: "%[1]s/host"}
    - {name: scratch, mountPath: "%[1]s/host/dir/sub"}
    - {name: conf, mountPath: "%[1]s/host/dir/conf.yaml", subPath: conf.yaml, readOnly: true}
---
{apiVersion: v1, kind: ConfigMap, metadata: {name: c}, data: {conf.yaml: "x: 1\n"}}
`, mp, host)
			if err := os.WriteFile(file, []byte(manifest), 0o644); err != nil {
				t.Fatal(err)
			}
			args := []string{"kube", "play", "--listen", "off"}
			if volumeRoot {
				args = append(args, "--volume-root", filepath.Join(base, "root"))
			}
			r := startEnv(t, []string{"PODVISOR_CONTROL=off", "PODVISOR_KUBE_STATE=" + filepath.Join(base, "state")}, append(args, file)...)
			if code := r.wait(30 * time.Second); code != 0 {
				t.Fatalf("exit %d\n%s\n%s", code, r.stdout, r.stderr)
			}
			wants := []string{"| hi\n", "| x: 1\n"}
			if !volumeRoot { // links cannot make anything read-only
				wants = append(wants, "| conf read-only\n")
			}
			for _, want := range wants {
				if !strings.Contains(r.stdout.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, r.stdout)
				}
			}
			if ents, _ := os.ReadDir(host); len(ents) != 0 {
				t.Errorf("the mount points made in the hostPath were left: %v\n%s", ents, r.stderr)
			}
			if _, err := os.Lstat(mp); !os.IsNotExist(err) {
				t.Errorf("the run's mount points were left behind: %s: %v", mp, err)
			}
		})
	}
}
