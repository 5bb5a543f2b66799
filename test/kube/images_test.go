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

// Pods from their images (issue 38 items 3 and 4): a root file system made
// here from busybox-static, run with --image-root and, imported into
// podman, with --images podman.

// imageEntry is a program that exists only inside the image, as
// linkerd-await or Tekton's entrypoint do: it reports what it sees.
const imageEntry = `#!/bin/sh
out=/shared/$NAME.txt
host=hidden
[ -e "$HOST_MARKER" ] && host=visible
echo "args=$* pwd=$(pwd) uid=$(id -u) a=$A b=$B home=$HOME host=$host" > $out.tmp
mv $out.tmp $out
exec sleep 100000
`

// busyboxRoot makes a small root file system in dir: busybox and its
// applets, a user app (uid 1234), the entrypoint, and a symlink /evil to
// /etc (on this machine a path outside the root).
func busyboxRoot(t testing.TB, dir string) {
	t.Helper()
	bb, err := exec.LookPath("busybox")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("busybox is missing (apt-get install busybox-static)")
		}
		t.Skip("needs busybox-static (apt-get install busybox-static)")
	}
	for _, d := range []string{"bin", "etc", "srv", "home/app", "usr/local/bin", "proc", "dev", "sys"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	must(t, os.MkdirAll(filepath.Join(dir, "tmp"), 0o1777))
	must(t, os.Chmod(filepath.Join(dir, "tmp"), 0o1777))
	b, err := os.ReadFile(bb)
	must(t, err)
	must(t, os.WriteFile(filepath.Join(dir, "bin/busybox"), b, 0o755))
	for _, a := range []string{"sh", "cat", "echo", "sleep", "id", "test", "mv", "ls", "pwd", "mkdir", "touch", "readlink"} {
		must(t, os.Symlink("busybox", filepath.Join(dir, "bin", a)))
	}
	must(t, os.WriteFile(filepath.Join(dir, "etc/passwd"), []byte("root:x:0:0:root:/root:/bin/sh\napp:x:1234:1234:app:/home/app:/bin/sh\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "etc/group"), []byte("root:x:0:\napp:x:1234:\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(dir, "usr/local/bin/entry"), []byte(imageEntry), 0o755))
	must(t, os.Symlink("/etc", filepath.Join(dir, "evil")))
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// imageConfig is the image's configuration, as an OCI image config.
const imageConfig = `{"config": {"Env": ["A=image", "B=image", "PATH=/usr/local/bin:/bin"], "WorkingDir": "/srv", "User": "app",
 "Entrypoint": ["/usr/local/bin/entry"], "Cmd": ["default-arg"]}}`

// imagePod: three containers from the image. main relies on the image's
// Entrypoint and Cmd, side replaces the Cmd with args, ro overrides the
// command and reads the image volume; a preStop hook and an exec probe
// run inside the image; an emptyDir is mounted beneath the image's
// symlink /evil (to /etc).
func imagePod(ref, shared, marker, evil string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: images-%[5]d}
spec:
  terminationGracePeriodSeconds: 10
  volumes:
  - {name: shared, hostPath: {path: %[2]s, type: Directory}}
  - {name: scratch, emptyDir: {}}
  - {name: img, image: {reference: %[1]s, pullPolicy: Never}}
  containers:
  - name: main
    image: %[1]s
    env: [{name: NAME, value: main}, {name: B, value: container}, {name: HOST_MARKER, value: %[3]s}]
    volumeMounts: [{name: shared, mountPath: /shared}]
    readinessProbe:
      exec: {command: [cat, /shared/main.txt]}
      periodSeconds: 1
    lifecycle:
      preStop:
        exec: {command: [/bin/sh, -c, 'test -x /usr/local/bin/entry && echo in-image > /shared/prestop.txt']}
  - name: side
    image: %[1]s
    args: [side-arg]
    env: [{name: NAME, value: side}, {name: HOST_MARKER, value: %[3]s}]
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: ro
    image: %[1]s
    command: [/bin/sh, -c]
    args:
    - |
      echo x > /img/new 2>/dev/null; echo "write=$?" > /shared/ro.tmp
      test -x /img/usr/local/bin/entry && echo "img-has-entry" >> /shared/ro.tmp
      echo y > /evil/%[4]s/f && echo "evil=$(readlink /evil)" >> /shared/ro.tmp
      mv /shared/ro.tmp /shared/ro.txt
      exec sleep 100000
    securityContext: {runAsUser: 0}
    volumeMounts:
    - {name: shared, mountPath: /shared}
    - {name: img, mountPath: /img}
    - {name: scratch, mountPath: /evil/%[4]s}
`, ref, shared, marker, evil, time.Now().UnixNano()%100000)
}

func TestPodFromImages(t *testing.T) {
	needRoot(t)
	base := t.TempDir()
	root := filepath.Join(base, "img")
	busyboxRoot(t, root)
	must(t, os.WriteFile(root+".json", []byte(imageConfig), 0o644))
	ref := "localhost/podvisor-kube-images-test:1"
	modes := []struct {
		name string
		args []string
	}{{"image-root", []string{"--image-root", ref + "=" + root}}}
	if _, err := exec.LookPath("podman"); err == nil {
		podmanImport(t, root, ref)
		modes = append(modes, struct {
			name string
			args []string
		}{"podman", []string{"--images", "podman"}})
	} else if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
		t.Fatal("podman is missing")
	}
	for _, m := range modes {
		t.Run(m.name, func(t *testing.T) {
			shared := t.TempDir()
			must(t, os.Chmod(shared, 0o777)) // the image's user app writes there
			marker := filepath.Join(shared, "host-marker")
			must(t, os.WriteFile(marker, nil, 0o644))
			evil := fmt.Sprintf("podvisor-evil-%d", time.Now().UnixNano())
			t.Cleanup(func() { os.RemoveAll("/etc/" + evil) })
			manifest := filepath.Join(t.TempDir(), "pod.yaml")
			must(t, os.WriteFile(manifest, []byte(imagePod(ref, shared, marker, evil)), 0o644))
			r := startEnv(t, []string{"CONTAINERS_CONF=" + podmanConf()}, append(append([]string{"kube", "play", "--listen", "off"}, m.args...), manifest)...)
			read := func(name string) string {
				var s string
				testharness.Poll(30*time.Second, 20*time.Millisecond, func() bool {
					b, err := os.ReadFile(filepath.Join(shared, name))
					s = string(b)
					select {
					case <-r.done:
						return true
					default:
					}
					return err == nil
				})
				if s == "" {
					t.Fatalf("no %s\nstdout:\n%s\nstderr:\n%s", name, r.stdout, r.stderr)
				}
				return strings.TrimSpace(s)
			}
			// The image's Entrypoint and Cmd, WorkingDir, User (by name, from
			// the image's passwd) and Env under the container's.
			if got, want := read("main.txt"), "args=default-arg pwd=/srv uid=1234 a=image b=container home=/home/app host=hidden"; got != want {
				t.Errorf("main saw %q, want %q", got, want)
			}
			// args replace the Cmd only.
			if got, want := read("side.txt"), "args=side-arg pwd=/srv uid=1234 a=image b=image home=/home/app host=hidden"; got != want {
				t.Errorf("side saw %q, want %q", got, want)
			}
			// The image volume is read-only (EROFS: the shell's write fails),
			// and holds the image; the volume below /evil landed in the root's
			// /etc, never this machine's.
			if got, want := read("ro.txt"), "write=1\nimg-has-entry\nevil=/etc"; got != want {
				t.Errorf("ro saw %q, want %q", got, want)
			}
			if _, err := os.Stat("/etc/" + evil); !os.IsNotExist(err) {
				t.Errorf("/etc/%s exists on this machine: a mount point escaped the image's root (%v)", evil, err)
			}
			// The exec probe ran inside the image (cat /shared/main.txt): all ready.
			testharness.Poll(30*time.Second, 20*time.Millisecond, func() bool {
				return strings.Contains(r.stderr.String(), "all processes ready") || strings.Contains(r.stdout.String(), "all processes ready")
			})
			if !strings.Contains(r.stderr.String()+r.stdout.String(), "all processes ready") {
				t.Fatalf("never all ready\nstdout:\n%s\nstderr:\n%s", r.stdout, r.stderr)
			}
			r.signal(syscall.SIGTERM)
			if code := r.wait(60 * time.Second); code != 0 {
				t.Errorf("exit code %d\nstdout:\n%s\nstderr:\n%s", code, r.stdout, r.stderr)
			}
			if got := read("prestop.txt"); got != "in-image" {
				t.Errorf("preStop wrote %q, want in-image", got)
			}
			if m.name == "podman" {
				out, _ := exec.Command("podman", "image", "mount").CombinedOutput()
				if strings.Contains(string(out), "podvisor-kube-images-test") {
					t.Errorf("the image is still mounted after the run: %s", out)
				}
			}
		})
	}
}

// TestImageVolumeNeedsImages: without --images or --image-root an image
// volume is refused, naming the flags.
func TestImageVolumeNeedsImages(t *testing.T) {
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: imgvol}
spec:
  volumes: [{name: img, image: {reference: example/tools:1}}]
  containers:
  - {name: a, image: x, command: [sleep, "1"], volumeMounts: [{name: img, mountPath: /tools}]}
`), 0o644))
	r := start(t, "kube", "play", "--dry-run", manifest)
	if code := r.wait(30 * time.Second); code != 2 {
		t.Fatalf("exit code %d, want 2\nstderr:\n%s", code, r.stderr)
	}
	if s := r.stderr.String(); !strings.Contains(s, "--images podman") || !strings.Contains(s, "--image-root example/tools:1=DIR") {
		t.Errorf("the refusal names neither flag:\n%s", s)
	}
}

// TestMissingImageNamed: with --images podman, an image not in the store
// is an error naming the container, the image and the fix.
func TestMissingImageNamed(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("podman"); err != nil {
		t.Skip("needs podman")
	}
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(`apiVersion: v1
kind: Pod
metadata: {name: missing}
spec:
  containers:
  - {name: web, image: localhost/podvisor-no-such-image:0}
`), 0o644))
	r := startEnv(t, []string{"CONTAINERS_CONF=" + podmanConf()}, "kube", "play", "--images", "podman", manifest)
	if code := r.wait(60 * time.Second); code != 2 {
		t.Fatalf("exit code %d, want 2\nstderr:\n%s", code, r.stderr)
	}
	s := r.stderr.String()
	for _, want := range []string{"container web", "localhost/podvisor-no-such-image:0", "podman pull localhost/podvisor-no-such-image:0"} {
		if !strings.Contains(s, want) {
			t.Errorf("stderr lacks %q:\n%s", want, s)
		}
	}
}

// podmanConf is the podman configuration the repository's tests use.
func podmanConf() string {
	p, _ := filepath.Abs("../../scripts/podman.conf")
	return p
}

// podmanImport imports the root at dir as ref, with the image config's
// settings as --change lines.
func podmanImport(t *testing.T, dir, ref string) {
	t.Helper()
	tar := exec.Command("tar", "-C", dir, "-c", ".")
	imp := exec.Command("podman", "import",
		"--change", "ENV=A=image", "--change", "ENV=B=image", "--change", "ENV=PATH=/usr/local/bin:/bin",
		"--change", "WORKDIR=/srv", "--change", "USER=app",
		"--change", `ENTRYPOINT ["/usr/local/bin/entry"]`, "--change", `CMD ["default-arg"]`, "-", ref)
	imp.Env = append(os.Environ(), "CONTAINERS_CONF="+podmanConf())
	pipe, err := tar.StdoutPipe()
	must(t, err)
	imp.Stdin = pipe
	must(t, tar.Start())
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("podman import: %v\n%s", err, out)
	}
	must(t, tar.Wait())
	t.Cleanup(func() { exec.Command("podman", "rmi", "-f", ref).Run() })
}
