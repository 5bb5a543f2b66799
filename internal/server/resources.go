package server

import (
	"fmt"
	"time"

	"github.com/podvisor/podvisor/api"

	"github.com/podvisor/podvisor/internal/metrics"
	"github.com/podvisor/podvisor/internal/resources"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// resourceMaxAge is how long one /proc walk serves scrapes and status calls.
const resourceMaxAge = time.Second

// Sampler measures the trees of running processes; *resources.Sampler is
// the real one.
type Sampler interface {
	Sample(roots []resources.Root) map[string]resources.Usage
}

// Resources is what a running process's tree uses, in /status.
type Resources = api.Resources

// roots lists the running processes of snap, for a Sampler.
func roots(snap supervisor.Snapshot) []resources.Root {
	var rs []resources.Root
	for _, p := range snap.Processes {
		if p.Pid > 0 {
			rs = append(rs, resources.Root{Name: p.Name, Pid: p.Pid})
		}
	}
	return rs
}

// sample measures snap's running processes; nil when nothing runs or there
// is no sampler.
func sample(s Sampler, snap supervisor.Snapshot) map[string]resources.Usage {
	rs := roots(snap)
	if s == nil || len(rs) == 0 {
		return nil
	}
	return s.Sample(rs)
}

// addResources fills in the resources of st's running processes.
func addResources(st *Status, usage map[string]resources.Usage) {
	for i := range st.Processes {
		p := &st.Processes[i]
		if u, ok := usage[p.Name]; ok && p.Pid > 0 {
			p.Resources = &Resources{CPUSeconds: u.CPUSeconds, MemoryBytes: u.RSSBytes, OpenFDs: u.OpenFDs, Threads: u.Threads, Processes: u.Processes}
		}
	}
}

// writeResources writes the per-process resource families: the trees of
// the running processes (one /proc walk shared by scrapes within
// resourceMaxAge) and the OOM kill counts from the snapshot.
func writeResources(w *metrics.Writer, snap supervisor.Snapshot, s Sampler) {
	usage := sample(s, snap)
	w.Family("podvisor_process_oom_kills_total", metrics.Counter, "Exits of the process caused by the kernel's OOM killer.")
	for _, p := range snap.Processes {
		w.Sample("", float64(p.OOMKills), "process", p.Name)
	}
	running := func(name, typ, help string, value func(u resources.Usage) float64) {
		w.Family(name, typ, help)
		for _, p := range snap.Processes {
			if u, ok := usage[p.Name]; ok && p.Pid != 0 {
				w.Sample("", value(u), "process", p.Name)
			}
		}
	}
	running("podvisor_process_cpu_seconds_total", metrics.Counter,
		"CPU time (user+system) of the process and its descendants; absent while it does not run, resets when it restarts.",
		func(u resources.Usage) float64 { return u.CPUSeconds })
	running("podvisor_process_resident_memory_bytes", metrics.Gauge,
		"Resident memory of the process and its descendants, summed (pages shared between them count once per process).",
		func(u resources.Usage) float64 { return float64(u.RSSBytes) })
	running("podvisor_process_open_fds", metrics.Gauge, "Open file descriptors of the process and its descendants.",
		func(u resources.Usage) float64 { return float64(u.OpenFDs) })
	running("podvisor_process_threads", metrics.Gauge, "Threads of the process and its descendants.",
		func(u resources.Usage) float64 { return float64(u.Threads) })
}

// cpuPercent is the tree's CPU time over the process's uptime, as ps shows
// %CPU: 100 is one core busy on average since it started.
func cpuPercent(p ProcessStatus, now time.Time) string {
	if p.Resources == nil || p.StartedAt == nil {
		return "-"
	}
	up := now.Sub(*p.StartedAt).Seconds()
	if up <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", 100*p.Resources.CPUSeconds/up)
}

// memText shows resident memory in binary units: "512K", "52.3M", "1.2G".
func memText(p ProcessStatus) string {
	if p.Resources == nil {
		return "-"
	}
	b := float64(p.Resources.MemoryBytes)
	switch {
	case b < 1<<20:
		return fmt.Sprintf("%.0fK", b/(1<<10))
	case b < 1<<30:
		return fmt.Sprintf("%.1fM", b/(1<<20))
	default:
		return fmt.Sprintf("%.1fG", b/(1<<30))
	}
}
