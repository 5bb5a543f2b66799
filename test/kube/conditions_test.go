package kube

// Pod conditions in /status (issue 38 item 7): a container's readiness
// probe (exec, reading a file the test controls) passes, fails and passes
// again; Ready and ContainersReady follow, and their lastTransitionTime
// moves at each flip and only then, as the kubelet's status manager keeps
// it. PodReadyToStartContainers and Initialized keep their first times.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
	"github.com/podvisor/podvisor/schema/openapitest"
)

type podCondition struct {
	Type, Status       string
	LastTransitionTime time.Time `json:"last_transition_time"`
}

type podStatusDoc struct {
	Pod struct {
		Phase      string
		Conditions []podCondition
	}
}

func (d podStatusDoc) cond(typ string) podCondition {
	for _, c := range d.Pod.Conditions {
		if c.Type == typ {
			return c
		}
	}
	return podCondition{}
}

func TestPodConditionsFollowReadiness(t *testing.T) {
	env := podsEnv(t)
	dir := t.TempDir()
	readyFile, probes := filepath.Join(dir, "ready"), filepath.Join(dir, "probes")
	doc := fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: conds}
spec:
  terminationGracePeriodSeconds: 5
  initContainers:
  - name: proxy
    restartPolicy: Always
    command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 0.1; done']
  containers:
  - name: app
    command: [sh, -c, 'trap "exit 0" TERM; while :; do sleep 0.1; done']
    readinessProbe:
      exec: {command: [sh, -c, 'echo x >> %[2]s; test -e %[1]s']}
      periodSeconds: 1
      failureThreshold: 1
`, readyFile, probes)
	manifest := filepath.Join(dir, "conds.yaml")
	if err := os.WriteFile(manifest, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startEnv(t, env, "kube", "play", manifest)
	defer func() {
		if t.Failed() {
			t.Logf("podvisor stderr:\n%s\nstdout:\n%s", r.stderr, r.stdout)
		}
	}()
	openapi, err := openapitest.New()
	if err != nil {
		t.Fatal(err)
	}

	var last string
	status := func() (podStatusDoc, bool) {
		out, errOut, code := podvisorCmd(t, env, "status", "--pod", "conds", "-o", "json")
		last = out + errOut
		var d podStatusDoc
		if code != 0 || json.Unmarshal([]byte(out), &d) != nil || len(d.Pod.Conditions) != 4 {
			return d, false
		}
		if err := openapi.JSON("Status", []byte(out)); err != nil {
			t.Errorf("status --pod conds: %v\n%s", err, out)
		}
		return d, true
	}
	// waitReady polls until Ready is want and returns that document.
	waitReady := func(want string) podStatusDoc {
		t.Helper()
		var d podStatusDoc
		if !testharness.Poll(time.Minute, 20*time.Millisecond, func() bool {
			var ok bool
			d, ok = status()
			return ok && d.Pod.Phase == "Running" && d.cond("Ready").Status == want
		}) {
			t.Fatalf("Ready never %s:\n%s", want, last)
		}
		return d
	}
	probeRuns := func() int {
		b, _ := os.ReadFile(probes)
		return strings.Count(string(b), "x")
	}
	// steady waits until the probe has run twice more, then checks that
	// /status still shows d's conditions, times included: a probe result
	// that changes nothing moves no time.
	steady := func(d podStatusDoc, what string) {
		t.Helper()
		n := probeRuns()
		if !testharness.Poll(time.Minute, 20*time.Millisecond, func() bool { return probeRuns() >= n+2 }) {
			t.Fatalf("%s: the readiness probe stopped running (%d runs)", what, probeRuns())
		}
		now := waitReady(d.cond("Ready").Status)
		for _, c := range d.Pod.Conditions {
			if got := now.cond(c.Type); !got.LastTransitionTime.Equal(c.LastTransitionTime) || got.Status != c.Status {
				t.Errorf("%s: %s is %s since %v two probes later, was %s since %v", what, c.Type, got.Status, got.LastTransitionTime, c.Status, c.LastTransitionTime)
			}
		}
	}
	// flip checks d's Ready and ContainersReady: status want, flipped at
	// one same time after notBefore (when the test changed the file), and
	// the other conditions' times as in first.
	flip := func(d, first podStatusDoc, want string, notBefore time.Time) time.Time {
		t.Helper()
		ready, cready := d.cond("Ready"), d.cond("ContainersReady")
		if cready.Status != want || !cready.LastTransitionTime.Equal(ready.LastTransitionTime) {
			t.Errorf("ContainersReady %s since %v, Ready %s since %v: want both %s, flipped together", cready.Status, cready.LastTransitionTime, ready.Status, ready.LastTransitionTime, want)
		}
		if ready.LastTransitionTime.Before(notBefore) {
			t.Errorf("Ready %s since %v, before the readiness file changed (%v)", want, ready.LastTransitionTime, notBefore)
		}
		for _, typ := range []string{"PodReadyToStartContainers", "Initialized"} {
			if c, c0 := d.cond(typ), first.cond(typ); c.Status != "True" || !c.LastTransitionTime.Equal(c0.LastTransitionTime) {
				t.Errorf("%s %s since %v, want True since %v throughout", typ, c.Status, c.LastTransitionTime, c0.LastTransitionTime)
			}
		}
		return ready.LastTransitionTime
	}

	first := waitReady("False") // running, the probe failing
	t0 := first.cond("Ready").LastTransitionTime
	steady(first, "not ready yet")

	touchAt := time.Now()
	if err := os.WriteFile(readyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d := waitReady("True")
	t1 := flip(d, first, "True", touchAt)
	steady(d, "ready")

	removeAt := time.Now()
	if err := os.Remove(readyFile); err != nil {
		t.Fatal(err)
	}
	d = waitReady("False")
	t2 := flip(d, first, "False", removeAt)
	steady(d, "unready")

	touchAt = time.Now()
	if err := os.WriteFile(readyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	d = waitReady("True")
	t3 := flip(d, first, "True", touchAt)
	if !(t0.Before(t1) && t1.Before(t2) && t2.Before(t3)) {
		t.Errorf("Ready's transitions %v, %v, %v, %v: want strictly increasing", t0, t1, t2, t3)
	}

	if out, errOut, code := podvisorCmd(t, env, "kube", "down", "conds"); code != 0 {
		t.Fatalf("kube down conds: exit %d\n%s%s", code, out, errOut)
	}
	if code := r.wait(time.Minute); code != 0 {
		t.Errorf("podvisor exited %d after kube down, want 0 (a clean deletion)", code)
	}
}
