package supervisor

import (
	"fmt"
	"slices"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// PlanStep is one action of a reload plan.
type PlanStep struct {
	Action PlanAction
	Name   string
	Why    string
}

func (s PlanStep) String() string { return s.Action.String() + " " + s.Name + ": " + s.Why }

// Plan is what a reload will do. Processes that appear in no step are left
// alone: same incarnation, same pid, no blip in readiness.
type Plan struct {
	Steps     []PlanStep // stops (dependents first), then restarts, starts and updates in start order
	Unchanged int        // processes left alone
	Global    []string   // global settings that change, in words
}

// Lines renders the plan for `podvisor reload --dry-run` and the log.
func (p Plan) Lines() []string {
	out := make([]string, 0, len(p.Steps)+len(p.Global)+1)
	for _, s := range p.Steps {
		out = append(out, s.String())
	}
	out = append(out, p.Global...)
	out = append(out, fmt.Sprintf("unchanged: %d process(es) left running as they are", p.Unchanged))
	return out
}

// Changes reports whether the plan does anything at all.
func (p Plan) Changes() bool { return len(p.Steps) > 0 || len(p.Global) > 0 }

// PlanReload computes a reload: a pure function of the config in effect,
// the new (already validated) config and each current process's state.
//
//   - A process only in old is stopped; stops come in reverse start order of
//     old, so a removed process stops after its removed dependents.
//   - A process only in new is started (when its dependencies hold).
//   - A process whose spawn or probe spec changed (config.SpawnDiff: after
//     interpolation and env_file reading) is restarted if it is active
//     (pending, starting, running, backoff); if it is not (stopped by the
//     operator or by its policy, completed, failed) its definition is
//     replaced and it stays as it is; except a completed oneshot or job
//     that becomes a service, which is started (a service cannot stay
//     "completed").
//   - The restart carries along, transitively, the active dependents that
//     declared restart: true on it, as a policy restart does.
//   - A process whose only changes apply in place (config.SettingsDiff:
//     depends_on, restart, start_timeout, success_exit_codes, stop) is
//     updated without a restart.
//   - Everything else is left alone, and costs one comparison.
func PlanReload(old, new *config.Config, states map[string]State) Plan {
	var p Plan
	for _, level := range reversed(old.Graph.Levels()) {
		for _, name := range level {
			if _, ok := new.Processes[name]; !ok {
				p.Steps = append(p.Steps, PlanStep{PlanStop, name, "removed from the config"})
			}
		}
	}

	restart := map[string]string{} // name -> why
	var order []string             // new's start order
	for _, level := range new.Graph.Levels() {
		order = append(order, level...)
	}
	for _, name := range order {
		np := new.Processes[name]
		op, ok := old.Processes[name]
		if !ok {
			continue
		}
		if d := config.SpawnDiff(op, np); d != "" && (active(states[name]) || completedToService(op, np, states[name])) {
			restart[name] = d
		}
	}
	// Carry restart: true dependents along, transitively. Walking in start
	// order, a dependent is visited after each of its dependencies.
	if len(restart) > 0 {
		for _, name := range order {
			if _, ok := restart[name]; ok {
				continue
			}
			if _, existed := old.Processes[name]; !existed || !active(states[name]) {
				continue
			}
			for _, d := range new.Processes[name].DependsOn {
				if _, ok := restart[d.Name]; ok && d.Restart {
					restart[name] = "dependency " + d.Name + " restarts (restart: true)"
					break
				}
			}
		}
	}
	for _, name := range order {
		np := new.Processes[name]
		op, existed := old.Processes[name]
		switch why, ok := restart[name]; {
		case !existed:
			p.Steps = append(p.Steps, PlanStep{PlanStart, name, "added to the config"})
		case ok:
			p.Steps = append(p.Steps, PlanStep{PlanRestart, name, why})
		default:
			spawn, settings := config.SpawnDiff(op, np), config.SettingsDiff(op, np)
			switch {
			case spawn != "":
				p.Steps = append(p.Steps, PlanStep{PlanUpdate, name, spawn + "; not restarted while " + states[name].String()})
			case settings != "":
				p.Steps = append(p.Steps, PlanStep{PlanUpdate, name, settings + "; applied without a restart"})
			default:
				p.Unchanged++
			}
		}
	}
	p.Global = globalChanges(old, new)
	return p
}

// completedToService reports whether a completed oneshot or job becomes a
// service: a service has no "completed" state to stay in, so it starts.
func completedToService(old, new *config.Process, s State) bool {
	return s == Completed && old.Type != config.Service && new.Type == config.Service
}

// active reports whether a process in state s is running or meant to run
// on its own, so that a change of its spec calls for a restart.
func active(s State) bool {
	switch s {
	case Pending, Starting, Running, Backoff:
		return true
	}
	return false
}

func globalChanges(old, new *config.Config) []string {
	var out []string
	if old.Listen != new.Listen {
		out = append(out, fmt.Sprintf("listen: %s -> %s (applied now)", old.Listen, new.Listen))
	}
	if !slices.Equal(old.ListenHosts, new.ListenHosts) {
		out = append(out, "listen_hosts: changed (applied now)")
	}
	if old.Log != new.Log {
		out = append(out, fmt.Sprintf("log: %s -> %s (applied now)", describeLog(old.Log), describeLog(new.Log)))
	}
	if old.ShutdownTimeout != new.ShutdownTimeout {
		out = append(out, fmt.Sprintf("shutdown_timeout: %s -> %s (for the next teardown)", old.ShutdownTimeout, new.ShutdownTimeout))
	}
	if old.Control != new.Control {
		out = append(out, "control: changed; the socket moves when podvisor next starts")
	}
	if old.UI != new.UI {
		out = append(out, "ui: changed; the web page takes it when podvisor next starts")
	}
	if old.MCP != new.MCP {
		out = append(out, "mcp: changed; podvisor mcp takes it when it next starts")
	}
	if !slices.Equal(old.Env, new.Env) {
		out = append(out, "env: changed (processes using it are restarted above)")
	}
	return out
}

func describeLog(l config.Log) string {
	parts := []string{"format " + l.Format}
	if l.Timestamps {
		parts = append(parts, "timestamps")
	}
	parts = append(parts, fmt.Sprintf("tail %d", l.Tail))
	return strings.Join(parts, ", ")
}

func reversed[T any](s []T) []T {
	out := make([]T, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}
