package server

import (
	"time"
)

// A pod's status as the kubelet would report it, from /status's processes
// (docs/kubernetes.md, "Pod phase and conditions"): kube play passes the
// pod's roles (which process is which container), and /status then carries
// the pod's phase and conditions.

// PodRoles names the processes that are the pod's containers.
type PodRoles struct {
	Init       []string `json:"init,omitempty"`     // init containers (run to completion)
	Sidecars   []string `json:"sidecars,omitempty"` // native sidecars
	Containers []string `json:"containers"`         // regular containers
	// RestartPolicy is the pod's: Always, OnFailure or Never.
	RestartPolicy string `json:"restart_policy"`
	// Since is when the pod's run began: its sandbox is ready.
	Since time.Time `json:"since"`
}

// Pod phases (the kubelet's getPhase).
const (
	PodPending   = "Pending"
	PodRunning   = "Running"
	PodSucceeded = "Succeeded"
	PodFailed    = "Failed"
)

// NewPodStatus computes the pod's phase and conditions from st's processes.
func NewPodStatus(roles PodRoles, st Status) *PodStatus {
	byName := map[string]ProcessStatus{}
	for _, p := range st.Processes {
		byName[p.Name] = p
	}
	ps := &PodStatus{Phase: podPhase(roles, byName)}
	initialized, initAt := true, roles.Since
	for _, n := range roles.Init {
		p := byName[n]
		if p.State != "completed" {
			initialized = false
		}
		initAt = later(initAt, p.ReadyAt, p.StartedAt)
	}
	for _, n := range roles.Sidecars {
		p := byName[n]
		if p.StartedAt == nil {
			initialized = false
		}
		initAt = later(initAt, p.StartedAt)
	}
	ready, readyAt := true, roles.Since
	for _, n := range append(append([]string{}, roles.Sidecars...), roles.Containers...) {
		p := byName[n]
		ps.Total++
		if p.Ready {
			ps.Ready++
			readyAt = later(readyAt, p.ReadyAt)
		} else {
			ready = false
			readyAt = later(readyAt, p.StartedAt)
		}
	}
	if !initialized {
		initAt = roles.Since
	}
	ps.Conditions = []PodCondition{
		{Type: "PodReadyToStartContainers", Status: "True", LastTransitionTime: roles.Since},
		{Type: "Initialized", Status: trueFalse(initialized), LastTransitionTime: initAt},
		{Type: "ContainersReady", Status: trueFalse(ready), LastTransitionTime: readyAt},
		{Type: "Ready", Status: trueFalse(ready), LastTransitionTime: readyAt},
	}
	return ps
}

// podPhase is the kubelet's getPhase over podvisor's process states: a
// pending init container or sidecar keeps the pod Pending; so does a
// regular container never started; one running makes it Running; once all
// have stopped, Always keeps it Running (they restart), else Succeeded when
// each exited 0, Failed otherwise.
func podPhase(roles PodRoles, byName map[string]ProcessStatus) string {
	for _, n := range roles.Init {
		if byName[n].State != "completed" {
			return PodPending
		}
	}
	for _, n := range roles.Sidecars {
		if byName[n].StartedAt == nil {
			return PodPending
		}
	}
	var waiting, running, stopped, failed int
	for _, n := range roles.Containers {
		p := byName[n]
		switch p.State {
		case "starting", "running", "stopping":
			running++
			continue
		case "pending", "":
			if p.ExitCode == nil {
				waiting++
				continue
			} // else waiting to start again after an exit
		}
		stopped++ // backoff, stopped, completed, failed
		if p.State != "completed" && (p.ExitCode == nil || *p.ExitCode != 0) {
			failed++
		}
	}
	switch {
	case waiting > 0:
		return PodPending
	case running > 0:
		return PodRunning
	case stopped > 0 && roles.RestartPolicy == "Always":
		return PodRunning
	case stopped > 0 && failed == 0:
		return PodSucceeded
	case stopped > 0:
		return PodFailed
	}
	return PodPending
}

func trueFalse(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// later returns the latest of t and the times set among ts.
func later(t time.Time, ts ...*time.Time) time.Time {
	for _, x := range ts {
		if x != nil && x.After(t) {
			t = *x
		}
	}
	return t
}
