package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/graph"
)

// TeardownWarning returns "" or a warning that the stop timeouts along the
// longest teardown chain add up to more than shutdown_timeout, naming the
// chain from the first process stopped to the last. Teardown stops a process
// only after its dependents, so such a chain can run out of budget and end
// in SIGKILL.
//
// A oneshot or job counts as 0 when it has dependents and all of them wait
// for it to complete (condition ready or completed): it has exited before any
// of them starts, so it never stops after them in teardown.
func (c *Config) TeardownWarning() string {
	if c.Graph == nil {
		return ""
	}
	weight := func(name string) int64 {
		p := c.Processes[name]
		if p.Type != Service && finishesFirst(c.Graph.Dependents(name)) {
			return 0
		}
		return int64(p.Stop.Timeout)
	}
	path, total := c.Graph.LongestPath(weight)
	if total <= int64(c.ShutdownTimeout) {
		return ""
	}
	return fmt.Sprintf("warning: stop timeouts along the longest teardown chain %s add up to %s, more than shutdown_timeout %s",
		strings.Join(path, " -> "), formatDuration(time.Duration(total)), formatDuration(c.ShutdownTimeout))
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
