package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestKubePlayEntrypoint runs examples/kubernetes/pod-entrypoint.yaml with
// `podman kube play`: its image (examples/kubernetes/Dockerfile, built FROM
// the base image under the name the manifest uses), its ConfigMap mounted as
// /etc/podvisor, its command. podvisor is the container's PID 1, brings the
// proxy up before the app, and on `podman pod stop` stops the app before the
// proxy. Only the pod's name changes, so that it cannot collide with another
// run on the machine.
func TestKubePlayEntrypoint(t *testing.T) {
	needImages(t)
	t.Parallel()
	const appImage = "registry.example/app-with-podvisor:1.0"
	out, code, replaced := buildImage("examples/kubernetes/Dockerfile", appImage, "--build-arg", "BASE_IMAGE="+baseImage)
	if code != 0 {
		t.Fatalf("podman build -f examples/kubernetes/Dockerfile: exit %d\n%s", code, tail(out, 30))
	}
	if replaced != "" {
		podman("rmi", replaced)
	}
	manifest, err := os.ReadFile(filepath.Join(repoRoot, "examples", "kubernetes", "pod-entrypoint.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pod := uniqueName("kube")
	src := strings.Replace(string(manifest), "\n  name: app-with-proxy\n", "\n  name: "+pod+"\n", 1)
	if !strings.Contains(src, pod) || !strings.Contains(src, "image: "+appImage) {
		t.Fatalf("pod-entrypoint.yaml no longer names the pod app-with-proxy or runs %s", appImage)
	}
	file := filepath.Join(t.TempDir(), "pod.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	main := &container{t: t, name: pod + "-main"}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("podman logs %s:\n%s", main.name, tail(main.logs(), 40))
		}
		podman("kube", "play", "--down", file)
	})
	must(t, "kube", "play", file)

	if out, code := main.exec("podvisor", "wait", "--ready", ":9464", "--timeout", scaled(60*time.Second).String()); code != 0 {
		t.Fatalf("podvisor wait --ready in the pod: exit %d\n%s", code, out)
	}
	cmdline, _ := main.exec("cat", "/proc/1/cmdline")
	if got := strings.ReplaceAll(strings.TrimRight(cmdline, "\x00"), "\x00", " "); got != "podvisor run -c /etc/podvisor/procs.yaml" {
		t.Errorf("PID 1 of the pod's container: %q, want the manifest's command", got)
	}
	// Through nginx to the app, from inside the pod's network namespace.
	body, code := main.exec("python3", "-c", "import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:8080/').read().decode(), end='')")
	if code != 0 || !strings.Contains(body, "hello from the app behind nginx") {
		t.Errorf("GET :8080/ through the proxy: %d %q", code, body)
	}
	t.Logf("podman's stop timeout for the container: %ss (the manifest's terminationGracePeriodSeconds is 30)", main.inspect("{{.Config.StopTimeout}}"))

	must(t, "pod", "stop", pod)
	if code := main.waitExit(30 * time.Second); code != 0 {
		t.Errorf("exit code %d after podman pod stop, want 0", code)
	}
	logs := main.logs()
	if logIndex(t, logs, "msg=exited process=app code=0") > logIndex(t, logs, "msg=exited process=proxy") {
		t.Error("the proxy exited before the app")
	}
	logIndex(t, logs, "app: stopped")
}
