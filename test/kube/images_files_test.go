package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestImageRootPodFiles: a container in its image's root sees the pod's
// /etc/hosts (this machine's lines and the pod's FQDN line, as the kubelet's
// managed file), /etc/hostname (the pod's hostname) and /etc/resolv.conf (a
// copy of this machine's), bound over what the image has (here: nothing).
// A container with a volume of its own at /etc/hosts keeps its volume, as
// the kubelet leaves /etc/hosts to it.
func TestImageRootPodFiles(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	root := filepath.Join(t.TempDir(), "img")
	busyboxRoot(t, root)
	if _, err := os.Stat(filepath.Join(root, "etc/hosts")); err == nil {
		t.Fatal("the test image must lack /etc/hosts")
	}
	ref := "localhost/podvisor-kube-files-test:1"
	shared := t.TempDir()
	must(t, os.Chmod(shared, 0o777))
	own := filepath.Join(t.TempDir(), "own-hosts")
	must(t, os.WriteFile(own, []byte("10.9.9.9\town-volume\n"), 0o644))
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: files-%[4]d, namespace: shop}
spec:
  hostname: web
  subdomain: front
  volumes:
  - {name: shared, hostPath: {path: %[2]s, type: Directory}}
  - {name: own, hostPath: {path: %[3]s, type: File}}
  containers:
  - name: reader
    image: %[1]s
    command: [/bin/sh, -c, 'cat /etc/hostname /etc/hosts > /shared/r.tmp; echo ---- >> /shared/r.tmp; cat /etc/resolv.conf >> /shared/r.tmp; mv /shared/r.tmp /shared/reader; exec sleep 100000']
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: owner
    image: %[1]s
    command: [/bin/sh, -c, 'cat /etc/hosts > /shared/o.tmp; mv /shared/o.tmp /shared/owner; exec sleep 100000']
    volumeMounts: [{name: shared, mountPath: /shared}, {name: own, mountPath: /etc/hosts}]
`, ref, shared, own, time.Now().UnixNano()%100000)), 0o644))
	r := startEnv(t, env, "kube", "play", "--listen", "off", "--image-root", ref+"="+root, manifest)
	read := func(name string) string {
		var s string
		if !waitFor(func() bool {
			b, err := os.ReadFile(filepath.Join(shared, name))
			s = string(b)
			select {
			case <-r.done:
				return true
			default:
			}
			return err == nil
		}) || s == "" {
			t.Fatalf("no %s\nstderr:\n%s", name, r.stderr)
		}
		return s
	}
	got := read("reader")
	files, resolv, _ := strings.Cut(got, "----\n")
	host, hosts, _ := strings.Cut(files, "\n")
	if host != "web" {
		t.Errorf("/etc/hostname says %q, want web", host)
	}
	if want := "127.0.1.1\tweb.front.shop.svc.cluster.local\tweb"; !strings.Contains(hosts, want) {
		t.Errorf("/etc/hosts lacks %q:\n%s", want, hosts)
	}
	if machine, _ := os.ReadFile("/etc/hosts"); !strings.HasPrefix(hosts, string(machine)) {
		t.Errorf("/etc/hosts does not keep the machine's lines:\n%s", hosts)
	}
	if machine, _ := os.ReadFile("/etc/resolv.conf"); resolv != string(machine) {
		t.Errorf("/etc/resolv.conf is %q, want the machine's %q", resolv, machine)
	}
	if got := read("owner"); got != "10.9.9.9\town-volume\n" {
		t.Errorf("the container's own volume at /etc/hosts was replaced: %q", got)
	}
	// Nothing was written in the image.
	for _, p := range []string{"etc/hosts", "etc/hostname", "etc/resolv.conf"} {
		if _, err := os.Stat(filepath.Join(root, p)); err == nil {
			t.Errorf("the image's directory gained %s", p)
		}
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(60 * time.Second); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, r.stderr)
	}
}

// killedPod is a pod of one container from image ref that writes a marker
// into shared, then sleeps.
func killedPod(ref, shared string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: killed-images}
spec:
  volumes: [{name: shared, hostPath: {path: %[2]s, type: Directory}}]
  containers:
  - name: app
    image: %[1]s
    command: [/bin/sh, -c, 'echo > /shared/up; exec sleep 100000']
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
`, ref, shared)
}

// podmanMountOf returns where podman has ref mounted, or "".
func podmanMountOf(t *testing.T, ref string) string {
	t.Helper()
	cmd := exec.Command("podman", "image", "mount")
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+podmanConf())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("podman image mount: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == ref {
			return f[1]
		}
	}
	return ""
}

// mountedAt reports whether this machine's mount namespace has a mount at
// dir (the test runs in it).
func mountedAt(t *testing.T, dir string) bool {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	must(t, err)
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && f[4] == dir {
			return true
		}
	}
	return false
}

// TestImagesKilledRunGivenBack: a kube play --images podman killed with
// SIGKILL leaves podman's mount of its image (in this machine's mount
// namespace) and its run directory; the next kube play gives both back,
// says so, and runs; at its end nothing is mounted.
func TestImagesKilledRunGivenBack(t *testing.T) {
	needRoot(t)
	if _, err := exec.LookPath("podman"); err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal("podman is missing")
		}
		t.Skip("needs podman")
	}
	root := filepath.Join(t.TempDir(), "img")
	busyboxRoot(t, root)
	ref := "localhost/podvisor-kube-killed-test:1"
	podmanImport(t, root, ref)
	env := append(podsEnv(t), "CONTAINERS_CONF="+podmanConf())
	shared := t.TempDir()
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(killedPod(ref, shared)), 0o644))
	up := func(r *run) {
		t.Helper()
		if !waitFor(func() bool {
			_, err := os.Stat(filepath.Join(shared, "up"))
			return err == nil
		}) {
			t.Fatalf("the container never started\nstderr:\n%s", r.stderr)
		}
		must(t, os.Remove(filepath.Join(shared, "up")))
	}
	first := startEnv(t, env, "kube", "play", "--listen", "off", "--images", "podman", manifest)
	up(first)
	merged := podmanMountOf(t, ref)
	if merged == "" || !mountedAt(t, merged) {
		t.Fatalf("podman's mount of %s is not in /proc/self/mountinfo (podman says %q)", ref, merged)
	}
	runDir := regexp.MustCompile(`upper layer is in (\S+)`).FindStringSubmatch(first.stderr.String())
	if runDir == nil {
		t.Fatalf("no run directory named\nstderr:\n%s", first.stderr)
	}
	first.signal(syscall.SIGKILL)
	first.wait(time.Minute)
	if !mountedAt(t, merged) {
		t.Fatalf("the killed run left no mount at %s: nothing to test", merged)
	}
	if _, err := os.Stat(runDir[1]); err != nil {
		t.Fatalf("the killed run left no run directory %s: %v", runDir[1], err)
	}

	second := startEnv(t, env, "kube", "play", "--listen", "off", "--images", "podman", manifest)
	up(second)
	if s := second.stderr.String(); !strings.Contains(s, "removed what a killed run left") || !strings.Contains(s, "image mount "+ref) || !strings.Contains(s, runDir[1]) {
		t.Errorf("the next run does not say it gave back the image and removed %s:\n%s", runDir[1], s)
	}
	if _, err := os.Stat(runDir[1]); !os.IsNotExist(err) {
		t.Errorf("the killed run's directory %s is still there (%v)", runDir[1], err)
	}
	second.signal(syscall.SIGTERM)
	if code := second.wait(time.Minute); code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", code, second.stderr)
	}
	// Podman counts mounts: had the killed run's not been given back, the
	// image would still be mounted now.
	if p := podmanMountOf(t, ref); p != "" || mountedAt(t, merged) {
		t.Errorf("after the next run, %s is still mounted (podman: %q)", ref, p)
	}
}

// TestImagesDryRunMountsNothing: kube play --dry-run --images podman
// inspects the images (the procs.yaml names each container's root) and
// mounts none: podman is never asked to mount, and it says so.
func TestImagesDryRunMountsNothing(t *testing.T) {
	needRoot(t)
	real, err := exec.LookPath("podman")
	if err != nil {
		t.Skip("needs podman")
	}
	root := filepath.Join(t.TempDir(), "img")
	busyboxRoot(t, root)
	ref := "localhost/podvisor-kube-dryrun-test:1"
	podmanImport(t, root, ref)
	// podman as kube play finds it on PATH: every call logged.
	bin := t.TempDir()
	log := filepath.Join(bin, "calls")
	must(t, os.WriteFile(filepath.Join(bin, "podman"), []byte("#!/bin/sh\necho \"$*\" >> "+log+"\nexec "+real+" \"$@\"\n"), 0o755))
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(killedPod(ref, t.TempDir())), 0o644))
	r := startEnv(t, []string{"CONTAINERS_CONF=" + podmanConf(), "PATH=" + bin + ":" + os.Getenv("PATH")}, "kube", "play", "--dry-run", "--images", "podman", manifest)
	if code := r.wait(time.Minute); code != 0 {
		t.Fatalf("exit code %d\nstderr:\n%s", code, r.stderr)
	}
	calls, _ := os.ReadFile(log)
	if !strings.Contains(string(calls), "image inspect") {
		t.Errorf("podman was not asked to inspect the image: %q", calls)
	}
	if strings.Contains(string(calls), "mount") {
		t.Errorf("a dry run asked podman to mount:\n%s", calls)
	}
	if out := r.stdout.String(); !strings.Contains(out, "root: ") || !strings.Contains(out, "/roots/app") {
		t.Errorf("the procs.yaml names no root for app:\n%s", out)
	}
	if !strings.Contains(r.stderr.String(), "not mounted") {
		t.Errorf("the dry run does not say the images are not mounted:\n%s", r.stderr)
	}
}

// stackOverlays puts dir under as many overlayfs layers as the kernel
// allows (FILESYSTEM_MAX_STACK_DEPTH: an overlay on an overlay on the
// disk), unmounted at the end, and returns the top one: an overlay on it
// is refused, so kube play must fall back to a read-only root there.
func stackOverlays(t *testing.T, dir string) string {
	t.Helper()
	top := dir
	for i := range 4 {
		base := filepath.Join(t.TempDir(), fmt.Sprint("layer", i))
		for _, d := range []string{"upper", "work", "merged"} {
			must(t, os.MkdirAll(filepath.Join(base, d), 0o755))
		}
		merged := filepath.Join(base, "merged")
		opts := fmt.Sprintf("lowerdir=%s,upperdir=%s/upper,workdir=%s/work", top, base, base)
		if err := unix.Mount("overlay", merged, "overlay", 0, opts); err != nil {
			break
		}
		t.Cleanup(func() { unix.Unmount(merged, unix.MNT_DETACH) })
		top = merged
	}
	if top == dir {
		t.Log("no overlayfs here at all: the image directory is used as it is")
	}
	return top
}

// TestImageRootReadOnlyFallback: where overlayfs refuses the image (here
// an image already as deep in overlays as the kernel allows), the root is
// the image bound read-only, kube play says why, /tmp is memory, a write
// elsewhere fails with EROFS, the pod's /etc/hosts is bound over the
// image's, and /etc/hostname, which the image lacks, is said to be left.
func TestImageRootReadOnlyFallback(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	dir := filepath.Join(t.TempDir(), "img")
	busyboxRoot(t, dir)
	must(t, os.WriteFile(filepath.Join(dir, "etc/hosts"), []byte("# the image's\n"), 0o644))
	// A read-only image must hold its mount points itself.
	must(t, os.Mkdir(filepath.Join(dir, "shared"), 0o755))
	root := stackOverlays(t, dir)
	ref := "localhost/podvisor-kube-readonly-test:1"
	shared := t.TempDir()
	manifest := filepath.Join(t.TempDir(), "pod.yaml")
	must(t, os.WriteFile(manifest, []byte(fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: readonly-root}
spec:
  volumes: [{name: shared, hostPath: {path: %[2]s, type: Directory}}]
  containers:
  - name: app
    image: %[1]s
    command: [/bin/sh, -c, 'echo x > /srv/new 2>/dev/null; echo "srv=$?" > /shared/o.tmp; echo x > /tmp/new && echo tmp=ok >> /shared/o.tmp; grep -c "the pod" /etc/hosts >> /shared/o.tmp; mv /shared/o.tmp /shared/out; exec sleep 100000']
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
`, ref, shared)), 0o644))
	r := startEnv(t, env, "kube", "play", "--listen", "off", "--image-root", ref+"="+root, manifest)
	var got string
	if !waitFor(func() bool {
		b, err := os.ReadFile(filepath.Join(shared, "out"))
		got = string(b)
		select {
		case <-r.done:
			return true
		default:
		}
		return err == nil
	}) || got == "" {
		t.Fatalf("no output\nstderr:\n%s", r.stderr)
	}
	if want := "srv=1\ntmp=ok\n1\n"; got != want {
		t.Errorf("the container saw %q, want %q", got, want)
	}
	s := r.stderr.String()
	if !strings.Contains(s, "app runs from image "+ref+", its root read-only (no overlayfs here: ") {
		t.Errorf("kube play does not say the root is read-only, and why:\n%s", s)
	}
	if !strings.Contains(s, "app keeps its image's /etc/hostname") || strings.Contains(s, "/etc/hosts,") {
		t.Errorf("kube play does not name exactly the files the read-only image could not take:\n%s", s)
	}
	if _, err := os.Stat(filepath.Join(dir, "srv/new")); err == nil {
		t.Error("the container wrote into the image")
	}
	r.signal(syscall.SIGTERM)
	if code := r.wait(time.Minute); code != 0 {
		t.Errorf("exit code %d\nstderr:\n%s", code, r.stderr)
	}
}
