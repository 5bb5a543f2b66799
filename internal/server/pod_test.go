package server

import (
	"testing"
	"time"
)

func procAt(name, state string, ready bool, code *int, started, readyAt *time.Time) ProcessStatus {
	return ProcessStatus{Name: name, State: state, Ready: ready, ExitCode: code, StartedAt: started, ReadyAt: readyAt}
}

// The kubelet's phase and conditions from the containers' states.
func TestPodStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { x := t0.Add(time.Duration(s) * time.Second); return &x }
	zero, one := 0, 1
	roles := PodRoles{Init: []string{"migrate"}, Sidecars: []string{"proxy"}, Containers: []string{"app", "worker"}, RestartPolicy: "Never", Since: t0}
	cases := []struct {
		name        string
		procs       []ProcessStatus
		phase       string
		ready       int
		initialized string
		initAt      time.Time
		readyCond   string
		readyAt     time.Time
	}{
		{"init running", []ProcessStatus{procAt("migrate", "starting", false, nil, at(1), nil), procAt("proxy", "pending", false, nil, nil, nil),
			procAt("app", "pending", false, nil, nil, nil), procAt("worker", "pending", false, nil, nil, nil)}, PodPending, 0, "False", t0, "False", t0},
		{"all ready", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "running", true, nil, at(3), at(4)),
			procAt("app", "running", true, nil, at(5), at(7)), procAt("worker", "running", true, nil, at(5), at(6))}, PodRunning, 3, "True", *at(3), "True", *at(7)},
		{"succeeded", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "stopped", false, nil, at(3), at(4)),
			procAt("app", "completed", false, &zero, at(5), nil), procAt("worker", "completed", false, &zero, at(5), nil)}, PodSucceeded, 0, "True", *at(3), "False", *at(5)},
		{"failed", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "stopped", false, nil, at(3), nil),
			procAt("app", "failed", false, &one, at(5), nil), procAt("worker", "completed", false, &zero, at(5), nil)}, PodFailed, 0, "True", *at(3), "False", *at(5)},
		{"one still running", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "running", true, nil, at(3), at(3)),
			procAt("app", "failed", false, &one, at(5), nil), procAt("worker", "running", false, nil, at(5), nil)}, PodRunning, 1, "True", *at(3), "False", *at(5)},
	}
	for _, tc := range cases {
		ps := NewPodStatus(roles, Status{Processes: tc.procs})
		if ps.Phase != tc.phase || ps.Ready != tc.ready || ps.Total != 3 {
			t.Errorf("%s: phase %s ready %d/%d, want %s %d/3", tc.name, ps.Phase, ps.Ready, ps.Total, tc.phase, tc.ready)
		}
		want := []PodCondition{{Type: "PodReadyToStartContainers", Status: "True", LastTransitionTime: t0}, {Type: "Initialized", Status: tc.initialized, LastTransitionTime: tc.initAt},
			{Type: "ContainersReady", Status: tc.readyCond, LastTransitionTime: tc.readyAt}, {Type: "Ready", Status: tc.readyCond, LastTransitionTime: tc.readyAt}}
		for i, c := range ps.Conditions {
			if c != want[i] {
				t.Errorf("%s: condition %+v, want %+v", tc.name, c, want[i])
			}
		}
	}
	// Always: containers that exited restart, the pod stays Running.
	always := roles
	always.RestartPolicy = "Always"
	ps := NewPodStatus(always, Status{Processes: []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "running", true, nil, at(3), at(3)),
		procAt("app", "backoff", false, &one, at(5), nil), procAt("worker", "backoff", false, &one, at(5), nil)}})
	if ps.Phase != PodRunning {
		t.Errorf("Always, containers in backoff: phase %s, want Running", ps.Phase)
	}
}
