package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/graph"
)

// TeardownWarning returns "" or a warning (without a "warning: " prefix:
// check prints one, run logs it at WARN level) that the stop timeouts along the
// longest teardown chain add up to more than shutdown_timeout, naming the
// chain from the first process stopped to the last. Teardown stops a process
// only after its dependents, so such a chain can run out of budget and end
// in SIGKILL.
//
// A oneshot or job that a dependent waits for to complete (condition ready
// or completed) has exited before that dependent starts: the dependent
// never holds it up in teardown, and it never holds up its own
// dependencies after the dependent, so no chain runs through that edge
// (kube play's postStart hooks are such oneshots: the containers around
// them stop in parallel). Such a oneshot counts as 0 when all its
// dependents wait for it so; one awaited only as started counts, and so
// does the chain through it. One with a stop.command counts in full: that
// runs in the teardown between its dependents and its dependencies.
//
// A chain whose every process has stop.min_grace shares the budget as a
// pod's containers share the kubelet's grace period: each gets what is left
// of it, and still its stop signal and min_grace after it runs out, so no
// process on it is killed without its signal: no warning (kube play's pods,
// docs/kubernetes.md).
func (c *Config) TeardownWarning() string {
	path, total := c.TeardownChain()
	if total <= c.ShutdownTimeout || c.sharesBudget(path) {
		return ""
	}
	return fmt.Sprintf("stop timeouts along the longest teardown chain %s add up to %s, more than shutdown_timeout %s",
		strings.Join(path, " -> "), formatDuration(total), formatDuration(c.ShutdownTimeout))
}

// TeardownChain returns the longest teardown chain (from the first process
// stopped to the last) and the sum of its stop timeouts, counted as
// TeardownWarning counts them; nil and 0 without a graph.
func (c *Config) TeardownChain() ([]string, time.Duration) {
	if c.Graph == nil {
		return nil, 0
	}
	g := c.Graph
	names := g.Names()
	var edges []graph.Edge
	cut := false
	for _, n := range names {
		for _, e := range g.Dependencies(n) {
			if c.finishedBefore(e) {
				cut = true
				continue
			}
			edges = append(edges, e)
		}
	}
	if cut {
		// The same nodes without some of the edges of an acyclic graph:
		// acyclic too.
		var err error
		if g, err = graph.New(names, edges); err != nil {
			return nil, 0
		}
	}
	weight := func(name string) int64 {
		p := c.Processes[name]
		if p.Type != Service && len(p.Stop.Command) == 0 && finishesFirst(c.Graph.Dependents(name)) {
			return 0
		}
		return int64(p.Stop.Timeout)
	}
	path, total := g.LongestPath(weight)
	return path, time.Duration(total)
}

// sharesBudget reports whether every process on path has stop.min_grace.
func (c *Config) sharesBudget(path []string) bool {
	for _, name := range path {
		if c.Processes[name].Stop.MinGrace <= 0 {
			return false
		}
	}
	return len(path) > 0
}

// finishedBefore reports whether e's dependency has exited before e's
// dependent starts: a oneshot or job awaited as ready or completed.
func (c *Config) finishedBefore(e graph.Edge) bool {
	p := c.Processes[e.To]
	return p != nil && p.Type != Service && len(p.Stop.Command) == 0 && e.Cond != graph.Started
}

func finishesFirst(dependents []graph.Edge) bool {
	if len(dependents) == 0 {
		return false
	}
	for _, e := range dependents {
		if e.Cond == graph.Started {
			return false
		}
	}
	return true
}
