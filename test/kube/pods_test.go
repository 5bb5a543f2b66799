package kube

// Several pods at once (issue 38 items 1, 2, 7, 8): kube play a.yaml and
// kube play b.yaml run side by side, each with its own control socket and
// record; kube ps lists them with the kubelet's phase; status --pod reaches
// one; kube down stops one as a deletion while the others run; a claim's
// data outlives a run until --volumes.

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
	"github.com/podvisor/podvisor/schema/openapitest"
)

// podsEnv gives the runs and commands of one test their own pods and
// state directories, and the per-pod control socket (no $PODVISOR_CONTROL).
func podsEnv(t *testing.T) []string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pvp") // short: the sockets live here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return []string{"PODVISOR_CONTROL=", "PODVISOR_KUBE_PODS=" + filepath.Join(dir, "pods"), "PODVISOR_KUBE_STATE=" + filepath.Join(dir, "state")}
}

// podvisorCmd runs `podvisor ARGS...` to the end with env.
func podvisorCmd(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(podvisorBin, args...)
	cmd.Env = append(testharness.Environ(nil), env...)
	var out, errOut strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	code = testharness.ExitCode(cmd.ProcessState)
	if err != nil && code < 0 {
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// sidecarPod is a pod with a native sidecar and an app; both write their
// start to the events file, and stop on SIGTERM.
func sidecarPod(t *testing.T, name string) string {
	t.Helper()
	loop := `trap "exit 0" TERM; echo "%s start $(date +%%s%%N)" >> "$E2E_EVENTS"; while :; do sleep 0.1; done`
	doc := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  terminationGracePeriodSeconds: 5
  initContainers:
  - name: proxy
    restartPolicy: Always
    command: [sh, -c, '%s']
  containers:
  - name: app
    command: [sh, -c, '%s']
`, name, fmt.Sprintf(loop, name+".proxy"), fmt.Sprintf(loop, name+".app"))
	file := filepath.Join(t.TempDir(), name+".yaml")
	if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

type psList struct {
	Pods []struct {
		Name, Phase, Socket string
		Pid, Ready, Total   int
	}
}

// waitPods waits until kube ps lists exactly names, each Running with
// every container ready, and returns the last -o json output.
func waitPods(t *testing.T, env []string, names ...string) []byte {
	t.Helper()
	var out, errOut string
	ok := testharness.Poll(time.Minute, 50*time.Millisecond, func() bool {
		var code int
		out, errOut, code = podvisorCmd(t, env, "kube", "ps", "-o", "json")
		var l psList
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil || len(l.Pods) != len(names) {
			return false
		}
		for i, p := range l.Pods {
			if p.Name != names[i] || p.Phase != "Running" || p.Ready != 2 || p.Total != 2 {
				return false
			}
		}
		return true
	})
	if !ok {
		t.Fatalf("kube ps never listed %v, all Running 2/2:\n%s%s", names, out, errOut)
	}
	return []byte(out)
}

func TestSeveralPodsAtOnce(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			env := podsEnv(t)
			var names []string
			runs := map[string]*run{}
			defer func() {
				if t.Failed() { // what each pod's podvisor said
					for name, r := range runs {
						t.Logf("%s stderr:\n%s\nstdout:\n%s", name, r.stderr.String(), r.stdout.String())
					}
				}
			}()
			for i := range n {
				name := fmt.Sprintf("pod-%c", 'a'+i)
				names = append(names, name)
				// No flags: the second pod must not meet the first's
				// port or control socket.
				runs[name] = startEnv(t, env, "kube", "play", sidecarPod(t, name))
			}
			out := waitPods(t, env, names...)
			doc, err := openapitest.New()
			if err != nil {
				t.Fatal(err)
			}
			if err := doc.JSON("KubePods", out); err != nil {
				t.Errorf("kube ps -o json: %v\n%s", err, out)
			}
			for _, name := range names {
				st, errOut, code := podvisorCmd(t, env, "status", "--pod", name, "-o", "json")
				var s struct {
					Processes []struct{ Name string }
					Pod       struct {
						Phase      string
						Conditions []struct{ Type, Status string }
					}
				}
				if code != 0 || json.Unmarshal([]byte(st), &s) != nil {
					t.Fatalf("status --pod %s: exit %d\n%s%s", name, code, st, errOut)
				}
				if err := doc.JSON("Status", []byte(st)); err != nil {
					t.Errorf("status --pod %s: %v", name, err)
				}
				if s.Pod.Phase != "Running" || len(s.Pod.Conditions) != 4 || s.Pod.Conditions[3].Type != "Ready" || s.Pod.Conditions[3].Status != "True" {
					t.Errorf("status --pod %s: pod %+v, want Running and Ready", name, s.Pod)
				}
			}
			// kube down stops one as a deletion: the others run on.
			downOut, downErr, code := podvisorCmd(t, env, "kube", "down", "pod-b")
			if code != 0 {
				t.Fatalf("kube down pod-b: exit %d\n%s%s", code, downOut, downErr)
			}
			if c := runs["pod-b"].wait(time.Minute); c != 0 {
				t.Errorf("pod-b exited %d after kube down, want 0 (a clean deletion)", c)
			}
			for name, r := range runs {
				select {
				case <-r.done:
					if name != "pod-b" {
						t.Errorf("%s exited (code %d) when pod-b was stopped\n%s", name, r.code, r.stderr)
					}
				default:
				}
			}
			rest := []string{"pod-a"}
			if n == 3 {
				rest = append(rest, "pod-c")
			}
			waitPods(t, env, rest...)
			// A sidecar pod's budget is the kubelet's: no warning.
			if s := runs["pod-b"].stderr.String() + runs["pod-b"].stdout.String(); strings.Contains(s, "add up to") {
				t.Errorf("pod-b warned about its stop budget:\n%s", s)
			}
			for _, name := range rest {
				if _, e, code := podvisorCmd(t, env, "kube", "down", name); code != 0 {
					t.Errorf("kube down %s: exit %d: %s", name, code, e)
				}
			}
			waitPods(t, env)
		})
	}
}

// A second pod of the same name is refused while the first runs.
func TestSamePodNameRefused(t *testing.T) {
	env := podsEnv(t)
	file := sidecarPod(t, "twin")
	first := startEnv(t, env, "kube", "play", file)
	waitPods(t, env, "twin")
	second := startEnv(t, env, "kube", "play", file)
	if code := second.wait(time.Minute); code != 1 || !strings.Contains(second.stderr.String(), "twin") {
		t.Errorf("second twin: exit %d, want 1 naming the running pod\n%s", code, second.stderr)
	}
	select {
	case <-first.done:
		t.Fatalf("the first pod exited\n%s", first.stderr)
	default:
	}
}

// The pod's hostname is its name, or spec.hostname, in a UTS namespace of
// its own (as root); the machine's stays. The pod's /etc/hosts names it,
// as the kubelet's managed file does, below this machine's lines.
func TestPodHostname(t *testing.T) {
	needRoot(t)
	env := podsEnv(t)
	machine, _ := os.Hostname()
	for _, tc := range []struct{ name, spec, want string }{{"host-a", "", "host-a"}, {"host-b", "  hostname: web-1\n", "web-1"}} {
		file := filepath.Join(t.TempDir(), tc.name+".yaml")
		doc := "apiVersion: v1\nkind: Pod\nmetadata: {name: " + tc.name + "}\nspec:\n" + tc.spec +
			"  containers:\n  - name: app\n    command: [sh, -c, 'trap \"exit 0\" TERM; { cat /proc/sys/kernel/hostname; cat /etc/hosts; } > \"$E2E_DIR/h.tmp\"; mv \"$E2E_DIR/h.tmp\" \"$E2E_DIR/host\"; while :; do sleep 0.1; done']\n"
		if err := os.WriteFile(file, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
		r := startEnv(t, env, "kube", "play", file)
		var got, hosts string
		if !waitFor(func() bool {
			b, _ := os.ReadFile(filepath.Join(r.dir, "host"))
			got, hosts, _ = strings.Cut(string(b), "\n")
			return got != ""
		}) {
			t.Fatalf("%s: no hostname written\n%s", tc.name, r.stderr)
		}
		if got != tc.want {
			t.Errorf("%s: hostname %q, want %q", tc.name, got, tc.want)
		}
		if line := "\n127.0.1.1\t" + tc.want + "\n"; !strings.Contains("\n"+hosts, line) {
			t.Errorf("%s: the pod's /etc/hosts lacks %q:\n%s", tc.name, line[1:], hosts)
		}
		if m, _ := os.ReadFile("/etc/hosts"); !strings.HasPrefix(hosts, string(m)) {
			t.Errorf("%s: the pod's /etc/hosts does not begin with this machine's:\n%s", tc.name, hosts)
		}
		if _, e, code := podvisorCmd(t, env, "kube", "down", tc.name); code != 0 {
			t.Fatalf("kube down: %d %s", code, e)
		}
		r.wait(time.Minute)
	}
	if now, _ := os.Hostname(); now != machine {
		t.Errorf("the machine's hostname changed: %q -> %q", machine, now)
	}
}
