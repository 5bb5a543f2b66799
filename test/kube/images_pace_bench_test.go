package kube

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// imagesPacePod is paceBench's pod (an init container, a native sidecar and
// the container after it, each logging its first line with its own clock)
// run from image, or on this machine when image is "": the same busybox
// shell and GNU date (at the path date, called by its path: busybox's
// shell prefers its own applets) either way, the events in a shared
// hostPath. main ends once the sidecar's line is written: at full speed
// main may come first (a negative lag), and the pod's end must not stop
// the sidecar before its line.
func imagesPacePod(image, shared, date string) string {
	sh, events, img := "[busybox, sh, -c", shared+"/events", "busybox"
	if image != "" {
		sh, events, img = "[/bin/sh, -c", "/shared/events", image
	}
	line := func(name, rest string) string {
		return fmt.Sprintf(`%s, 'echo "%s started $(%s +%%s%%N)" >> %s%s']`, sh, name, date, events, rest)
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: images-pace}
spec:
  restartPolicy: Never
  volumes: [{name: shared, hostPath: {path: %[1]s, type: Directory}}]
  initContainers:
  - name: i1
    image: %[2]s
    command: %[3]s
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
  - name: s1
    image: %[2]s
    restartPolicy: Always
    command: %[4]s
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: main
    image: %[2]s
    command: %[5]s
    securityContext: {runAsUser: 0}
    volumeMounts: [{name: shared, mountPath: /shared}]
`, shared, img, line("i1", ""), line("s1", `; trap "exit 0" TERM; while :; do sleep 0.1; done`), line("main", `; while :; do case "$(cat `+events+`)" in *"s1 started"*) break;; esac; sleep 0.05; done`))
}

// withGNUDate copies this machine's date(1), and the libraries it loads,
// into the image root dir: busybox's date has no %N.
func withGNUDate(b *testing.B, dir string) string {
	date, err := exec.LookPath("date")
	if err != nil {
		b.Skip("needs date")
	}
	if date, err = filepath.EvalSymlinks(date); err != nil {
		b.Skip(err)
	}
	out, err := exec.Command("ldd", date).Output()
	if err != nil {
		b.Skipf("ldd %s: %v", date, err)
	}
	files := []string{date}
	for _, line := range strings.Split(string(out), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "/") {
				files = append(files, f)
			}
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		must(b, err)
		dst := filepath.Join(dir, f)
		must(b, os.MkdirAll(filepath.Dir(dst), 0o755))
		os.Remove(dst) // busybox's applet link, for date itself
		must(b, os.WriteFile(dst, data, 0o755))
	}
	return date
}

// BenchmarkImagesPace measures whether running from an image changes a
// pod's pace once it runs: on the containers' own clocks, the lag from the
// sidecar's first line to the next container's, and from the init
// container's to the sidecar's, for the same pod from podman's store and on
// this machine, alternated in the same run, at a node's pace and at full
// speed (where a per-spawn cost would show most).
//
//	go test -run '^$' -bench ImagesPace -benchtime 8x ./test/kube/
func BenchmarkImagesPace(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Skip("needs root")
	}
	if _, err := exec.LookPath("podman"); err != nil {
		b.Skip("needs podman")
	}
	root := filepath.Join(b.TempDir(), "img")
	busyboxRoot(b, root)
	date := withGNUDate(b, root)
	ref := "localhost/podvisor-kube-images-pace:1"
	imp := exec.Command("sh", "-c", "tar -C "+root+" -c . | podman import - "+ref)
	imp.Env = append(os.Environ(), "CONTAINERS_CONF="+podmanConf())
	if out, err := imp.CombinedOutput(); err != nil {
		b.Fatalf("podman import: %v\n%s", err, out)
	}
	defer exec.Command("podman", "rmi", "-f", ref).Run()
	for _, pace := range []string{"node", "fast"} {
		b.Run(pace, func(b *testing.B) {
			lags := map[string][]time.Duration{}
			for range b.N {
				for _, image := range []string{"", ref} {
					side, init := playPace(b, image, pace, date)
					mode := "host"
					if image != "" {
						mode = "images"
					}
					lags[mode+"-sidecar-to-next"] = append(lags[mode+"-sidecar-to-next"], side)
					lags[mode+"-init-to-sidecar"] = append(lags[mode+"-init-to-sidecar"], init)
				}
			}
			for what, ds := range lags {
				report(b, what, ds)
			}
		})
	}
}

// playPace plays imagesPacePod to its end and returns its two lags.
func playPace(b *testing.B, image, pace, date string) (sidecarToNext, initToSidecar time.Duration) {
	shared := b.TempDir()
	manifest := filepath.Join(b.TempDir(), "pod.yaml")
	must(b, os.WriteFile(manifest, []byte(imagesPacePod(image, shared, date)), 0o644))
	args := []string{"kube", "play", "--listen", "off", "--pace", pace}
	if image != "" {
		args = append(args, "--images", "podman")
	}
	r := startEnv(b, []string{"CONTAINERS_CONF=" + podmanConf()}, append(args, manifest)...)
	if code := r.wait(time.Minute); code != 0 {
		b.Fatalf("%s: exit %d\n%s", image, code, r.stderr)
	}
	evs, err := testharness.ReadEvents(filepath.Join(shared, "events"))
	must(b, err)
	t := testharness.FirstTimes(evs)
	for _, ev := range []string{"i1 started", "s1 started", "main started"} {
		if _, ok := t[ev]; !ok {
			b.Fatalf("%s: no %q in %v\n%s", image, ev, t, r.stderr)
		}
	}
	return time.Duration(t["main started"] - t["s1 started"]), time.Duration(t["s1 started"] - t["i1 started"])
}
