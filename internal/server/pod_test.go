package server

import (
	"testing"
	"time"
)

func procAt(name, state string, ready bool, code *int, started, readyAt *time.Time) ProcessStatus {
	return ProcessStatus{Name: name, State: state, Ready: ready, ExitCode: code, StartedAt: started, ReadyAt: readyAt}
}

// alive gives p a pid: its process runs.
func alive(p ProcessStatus) ProcessStatus { p.Pid = 100; return p }

// The kubelet's phase and condition statuses from the containers' states
// (status/generate.go); their times are podconditions_test.go's.
func TestPodStatus(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(s int) *time.Time { x := t0.Add(time.Duration(s) * time.Second); return &x }
	zero, one := 0, 1
	roles := PodRoles{Init: []string{"migrate"}, Sidecars: []string{"proxy"}, Containers: []string{"app", "worker"}, RestartPolicy: "Never", Since: t0}
	const T, F = true, false
	cases := []struct {
		name  string
		procs []ProcessStatus
		phase string
		ready int
		conds [numConds]bool // PodReadyToStartContainers, Initialized, ContainersReady, Ready
	}{
		{"init running", []ProcessStatus{alive(procAt("migrate", "starting", false, nil, at(1), nil)), procAt("proxy", "pending", false, nil, nil, nil),
			procAt("app", "pending", false, nil, nil, nil), procAt("worker", "pending", false, nil, nil, nil)}, PodPending, 0, [numConds]bool{T, F, F, F}},
		{"sidecar started, not ready", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "starting", false, nil, at(3), nil)),
			procAt("app", "pending", false, nil, nil, nil), procAt("worker", "pending", false, nil, nil, nil)}, PodPending, 0, [numConds]bool{T, T, F, F}},
		{"all ready", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "running", true, nil, at(3), at(4))),
			alive(procAt("app", "running", true, nil, at(5), at(7))), alive(procAt("worker", "running", true, nil, at(5), at(6)))}, PodRunning, 3, [numConds]bool{T, T, T, T}},
		{"one unready", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "running", true, nil, at(3), at(4))),
			alive(procAt("app", "running", false, nil, at(5), at(7))), alive(procAt("worker", "running", true, nil, at(5), at(6)))}, PodRunning, 2, [numConds]bool{T, T, F, F}},
		// The kubelet's HasAnyRegularContainerStarted: a sidecar waiting
		// to restart does not un-initialize a pod whose app has started,
		// nor make it Pending (getPhase's podHasInitialized).
		{"sidecar restarting", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "backoff", false, &one, nil, nil),
			alive(procAt("app", "running", true, nil, at(5), at(7))), alive(procAt("worker", "running", true, nil, at(5), at(6)))}, PodRunning, 2, [numConds]bool{T, T, F, F}},
		{"succeeded, sidecar stopping", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "stopping", true, nil, at(3), at(4))),
			procAt("app", "completed", false, &zero, at(5), nil), procAt("worker", "completed", false, &zero, at(5), nil)}, PodSucceeded, 1, [numConds]bool{T, T, F, F}},
		{"succeeded", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "stopped", false, nil, at(3), at(4)),
			procAt("app", "completed", false, &zero, at(5), nil), procAt("worker", "completed", false, &zero, at(5), nil)}, PodSucceeded, 0, [numConds]bool{F, T, F, F}},
		{"failed", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), procAt("proxy", "stopped", false, nil, at(3), nil),
			procAt("app", "failed", false, &one, at(5), nil), procAt("worker", "completed", false, &zero, at(5), nil)}, PodFailed, 0, [numConds]bool{F, T, F, F}},
		{"init failed", []ProcessStatus{procAt("migrate", "failed", false, &one, at(1), nil), procAt("proxy", "pending", false, nil, nil, nil),
			procAt("app", "pending", false, nil, nil, nil), procAt("worker", "pending", false, nil, nil, nil)}, PodFailed, 0, [numConds]bool{F, F, F, F}},
		{"init in backoff", []ProcessStatus{procAt("migrate", "backoff", false, &one, at(1), nil), procAt("proxy", "pending", false, nil, nil, nil),
			procAt("app", "pending", false, nil, nil, nil), procAt("worker", "pending", false, nil, nil, nil)}, PodPending, 0, [numConds]bool{T, F, F, F}},
		{"one still running", []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "running", true, nil, at(3), at(3))),
			procAt("app", "failed", false, &one, at(5), nil), alive(procAt("worker", "running", false, nil, at(5), nil))}, PodRunning, 1, [numConds]bool{T, T, F, F}},
	}
	for _, tc := range cases {
		pl := planPod(roles, Status{Processes: tc.procs})
		if pl.phase != tc.phase || pl.ready != tc.ready || pl.total != 3 {
			t.Errorf("%s: phase %s ready %d/%d, want %s %d/3", tc.name, pl.phase, pl.ready, pl.total, tc.phase, tc.ready)
		}
		for i := range numConds {
			if pl.conds[i] != tc.conds[i] {
				t.Errorf("%s: %s %s, want %s", tc.name, condTypes[i], trueFalse(pl.conds[i]), trueFalse(tc.conds[i]))
			}
		}
	}
	// Always: containers that exited restart, the pod stays Running.
	always := roles
	always.RestartPolicy = "Always"
	pl := planPod(always, Status{Processes: []ProcessStatus{procAt("migrate", "completed", true, &zero, at(1), at(2)), alive(procAt("proxy", "running", true, nil, at(3), at(3))),
		procAt("app", "backoff", false, &one, at(5), nil), procAt("worker", "backoff", false, &one, at(5), nil)}})
	if pl.phase != PodRunning || pl.conds != [numConds]bool{T, T, F, F} {
		t.Errorf("Always, containers in backoff: phase %s, conditions %v, want Running [true true false false]", pl.phase, pl.conds)
	}
}
