package kube

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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
