package server

import (
	"time"
)

// A pod's status as the kubelet would report it, from /status's processes
// (docs/kubernetes.md, "Pod phase and conditions"): kube play passes the
// pod's roles (which process is which container), and /status then carries
// the pod's phase and conditions. planPod here decides what they are, a pure
// function of the processes; podconditions.go stamps when each condition
// last changed.

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

// The pod's conditions, in the order /status lists them (the kubelet's).
const (
	condReadyToStart    = iota // PodReadyToStartContainers
	condInitialized            // Initialized
	condContainersReady        // ContainersReady
	condReady                  // Ready
	numConds
)

var condTypes = [numConds]string{"PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready"}

// podPlan is the pod's status without times.
type podPlan struct {
	phase        string
	ready, total int
	conds        [numConds]bool // by condReadyToStart...
}

// planPod computes the pod's phase and the status of each condition from
// st's processes, as the kubelet's status/generate.go does from container
// statuses:
//   - Initialized: every init container completed and every sidecar
//     started; also once any regular container has started (a restarting
//     sidecar does not un-initialize a running pod), and for a Succeeded pod.
//   - ContainersReady: every sidecar and regular container ready; never for
//     a Succeeded or Failed pod (its containers may still be terminating).
//   - Ready: ContainersReady (kube play has no readiness gates).
//   - PodReadyToStartContainers: the sandbox exists, which podvisor's run
//     is, from its start until the pod has ended and none of its processes
//     is left (the kubelet removes an ended pod's sandbox).
func planPod(roles PodRoles, st Status) podPlan {
	byName := make(map[string]ProcessStatus, len(st.Processes))
	for _, p := range st.Processes {
		byName[p.Name] = p
	}
	pl := podPlan{phase: podPhase(roles, byName)}
	terminal := pl.phase == PodSucceeded || pl.phase == PodFailed

	initialized := true
	for _, n := range roles.Init {
		if byName[n].State != "completed" {
			initialized = false
		}
	}
	for _, n := range roles.Sidecars {
		if byName[n].StartedAt == nil {
			initialized = false
		}
	}
	if anyStarted(roles, byName) {
		initialized = true // initialized before: a restarting sidecar does not undo it
	}
	pl.conds[condInitialized] = initialized || pl.phase == PodSucceeded

	ready := true
	for _, n := range append(append([]string{}, roles.Sidecars...), roles.Containers...) {
		pl.total++
		if byName[n].Ready {
			pl.ready++
		} else {
			ready = false
		}
	}
	pl.conds[condContainersReady] = ready && !terminal
	pl.conds[condReady] = pl.conds[condContainersReady]

	alive := false
	for _, p := range st.Processes {
		if p.Pid != 0 {
			alive = true
		}
	}
	pl.conds[condReadyToStart] = !terminal || alive
	return pl
}

// podPhase is the kubelet's getPhase over podvisor's process states: an
// init container that failed for good fails the pod; a pending one keeps
// it Pending, as do a sidecar not started before any regular container has
// and a regular container never started; one running makes it Running;
// once all have stopped, Always keeps it Running (they restart), else
// Succeeded when each exited 0, Failed otherwise.
func podPhase(roles PodRoles, byName map[string]ProcessStatus) string {
	for _, n := range roles.Init {
		switch byName[n].State {
		case "completed":
		case "failed": // never run again: the kubelet's failedInitialization under Never
			return PodFailed
		default:
			return PodPending
		}
	}
	// A sidecar not (yet, or again) started keeps the pod Pending only
	// until a regular container has started: the kubelet's
	// pendingRestartableInitContainers && !podHasInitialized.
	if !anyStarted(roles, byName) {
		for _, n := range roles.Sidecars {
			if byName[n].StartedAt == nil {
				return PodPending
			}
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

// anyStarted reports whether a regular container has started at least
// once (the kubelet's HasAnyRegularContainerStarted).
func anyStarted(roles PodRoles, byName map[string]ProcessStatus) bool {
	for _, n := range roles.Containers {
		if p := byName[n]; p.StartedAt != nil || p.ExitCode != nil {
			return true
		}
	}
	return false
}

func trueFalse(b bool) string {
	if b {
		return "True"
	}
	return "False"
}
