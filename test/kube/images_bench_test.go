package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// benchPod is a pod of three containers that each write a marker into
// the shared hostPath as their first act, then sleep; image "" runs them
// on this machine.
func benchPod(image, shared string, n int) string {
	dir := shared
	img := "busybox"
	if image != "" {
		dir, img = "/shared", image
	}
	s := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: bench-images-%d}
spec:
  terminationGracePeriodSeconds: 5
  volumes: [{name: shared, hostPath: {path: %s, type: Directory}}]
  containers:
`, n, shared)
	for _, c := range []string{"one", "two", "three"} {
		s += fmt.Sprintf(`  - name: %s
    image: %s
    command: [/bin/sh, -c, 'echo > %s/%s; exec sleep 100000']
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
`, c, img, dir, c)
	}
	return s
}

// BenchmarkPodFromImages: the time from `kube play` to the third
// container's first act, for the same pod from podman's store (mounting
// included) and on this machine, alternated in the same run.
//
//	go test -run '^$' -bench PodFromImages -benchtime 5x ./test/kube/
func BenchmarkPodFromImages(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		b.Skip("needs podman")
	}
	root := filepath.Join(b.TempDir(), "img")
	busyboxRoot(b, root)
	ref := "localhost/podvisor-kube-images-bench:1"
	tar := exec.Command("sh", "-c", "tar -C "+root+" -c . | podman import - "+ref)
	tar.Env = append(os.Environ(), "CONTAINERS_CONF="+podmanConf())
	if out, err := tar.CombinedOutput(); err != nil {
		b.Fatalf("podman import: %v\n%s", err, out)
	}
	defer exec.Command("podman", "rmi", "-f", ref).Run()
	var host, images time.Duration
	for i := 0; i < b.N; i++ {
		host += playOnce(b, "", i)
		images += playOnce(b, ref, i)
	}
	b.ReportMetric(float64(host.Milliseconds())/float64(b.N), "ms-host")
	b.ReportMetric(float64(images.Milliseconds())/float64(b.N), "ms-images")
	b.ReportMetric(float64((images-host).Milliseconds())/float64(b.N)/3, "ms-more-per-container")
}

// playOnce plays the bench pod and returns the time to its third marker.
func playOnce(b *testing.B, image string, n int) time.Duration {
	shared := b.TempDir()
	manifest := filepath.Join(b.TempDir(), "pod.yaml")
	if err := os.WriteFile(manifest, []byte(benchPod(image, shared, n)), 0o644); err != nil {
		b.Fatal(err)
	}
	args := []string{"kube", "play", "--listen", "off", manifest}
	if image != "" {
		args = []string{"kube", "play", "--listen", "off", "--images", "podman", manifest}
	}
	cmd := exec.Command(podvisorBin, args...)
	cmd.Env = append(os.Environ(), "CONTAINERS_CONF="+podmanConf())
	t0 := time.Now()
	p, err := testharness.Start(cmd)
	if err != nil {
		b.Fatal(err)
	}
	all := func() bool {
		for _, c := range []string{"one", "two", "three"} {
			if _, err := os.Stat(filepath.Join(shared, c)); err != nil {
				return false
			}
		}
		return true
	}
	testharness.Poll(60*time.Second, time.Millisecond, all)
	d := time.Since(t0)
	if !all() {
		b.Fatalf("%s: not all started", image)
	}
	cmd.Process.Signal(syscall.SIGTERM)
	<-p.Done()
	return d
}
