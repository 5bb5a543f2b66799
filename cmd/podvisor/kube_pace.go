package main

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/server"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// kube play's --pace: node (default) or fast.
const (
	paceNode = "node"
	paceFast = "fast"
)

// relistPeriod is the kubelet's generic PLEG relist period
// (pkg/kubelet/kubelet.go, genericPlegRelistPeriod).
const relistPeriod = time.Second

// checkPace checks --pace: node or fast, and node is the kubelet order's
// (--ordered has its own gating and goes at full speed).
func checkPace(pace string, ordered bool) error {
	switch {
	case pace != "" && pace != paceNode && pace != paceFast:
		return fmt.Errorf("--pace %q: want node or fast", pace)
	case pace == paceNode && ordered:
		return fmt.Errorf("--pace node is the kubelet order's pace; --ordered has its own gating and goes at full speed (leave --pace out)")
	}
	return nil
}

// podPace is the run's pace: the kubelet's relist by default, none with
// --pace fast or --ordered. The containers are noticed at a relist, and so
// are the postStart hooks of sidecars (an init container's sync ends with
// its hook); a regular container's hook is not (the next container starts
// in the same sync). The first relist comes at a random point of the
// period, as a node's relist runs on its own schedule.
func podPace(pace string, ordered bool, roles server.PodRoles, cfg *config.Config) supervisor.Pace {
	if ordered || pace == paceFast {
		return supervisor.Pace{}
	}
	p := supervisor.Pace{Period: relistPeriod, Phase: time.Duration(rand.Int64N(int64(relistPeriod))) + 1}
	p.Noticed = append(p.Noticed, roles.Init...)
	p.Noticed = append(p.Noticed, roles.Sidecars...)
	p.Noticed = append(p.Noticed, roles.Containers...)
	for _, s := range roles.Sidecars {
		if _, ok := cfg.Processes[s+".post-start"]; ok {
			p.Noticed = append(p.Noticed, s+".post-start")
		}
	}
	return p
}
