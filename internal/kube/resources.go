package kube

import (
	"slices"

	"github.com/podvisor/podvisor/internal/config"
	"go.yaml.in/yaml/v3"
)

// CPU shares as the kubelet computes them from a CPU request (cgroup v1's
// cpu.shares range), and cgroup v2's weight range.
const (
	minShares = 2
	maxShares = 262144
)

// cpuWeight is the cgroup v2 cpu.weight the kubelet gives a container
// that requests milliCPU: shares = milliCPU*1024/1000 (at least 2, at most
// 262144), then the runtime's linear map of shares onto weights 1..10000.
func cpuWeight(milliCPU int64) int64 {
	shares := min(max(milliCPU*1024/1000, minShares), maxShares)
	return 1 + (shares-minShares)*9999/(maxShares-minShares)
}

// resources maps a container's resources onto podvisor's: limits.memory
// to memory max, limits.cpu to cpu max, requests.cpu to cpu weight (as
// the kubelet does); nil when none applies. Other resources and
// requests.memory (a scheduling hint only) are warned about.
func (b *builder) resources(c *Container, where place) *config.Resources {
	t := b.t
	if c.Resources == nil {
		return nil
	}
	r := &config.Resources{}
	at := where.in("resources")
	if q, ok := c.Resources.Limits["memory"]; ok {
		v, err := config.ParseBytes(string(q))
		if err != nil || v < config.MinMemory {
			t.errorAt(at.in("limits", "memory"), ": %q is not a memory size of at least 1Mi", string(q))
		} else {
			r.Memory = &config.MemoryResources{Max: v}
		}
	}
	cpu := &config.CPUResources{}
	if q, ok := c.Resources.Limits["cpu"]; ok {
		if v, err := config.ParseMillicores(string(q)); err != nil || v <= 0 {
			t.errorAt(at.in("limits", "cpu"), ": %q is not a CPU quantity such as 500m", string(q))
		} else {
			cpu.Max = v
		}
	}
	req, ok := c.Resources.Requests["cpu"]
	if !ok {
		req, ok = c.Resources.Limits["cpu"] // the API server defaults the request to the limit
	}
	if ok {
		if v, err := config.ParseMillicores(string(req)); err == nil && v > 0 {
			cpu.Weight = cpuWeight(v)
		}
	}
	if *cpu != (config.CPUResources{}) {
		r.CPU = cpu
	}
	var other []string
	for _, m := range []map[string]Quantity{c.Resources.Limits, c.Resources.Requests} {
		for k := range m {
			if k != "cpu" && k != "memory" && !slices.Contains(other, k) {
				other = append(other, k)
			}
		}
	}
	slices.Sort(other)
	for _, k := range other {
		t.warnFor(c.Name, "resources "+k+": not enforced (podvisor enforces memory and cpu)")
	}
	if _, ok := c.Resources.Requests["memory"]; ok {
		t.warnFor(c.Name, "resources.requests.memory: a scheduling hint, not enforced (limits.memory is)")
	}
	if r.Memory == nil && r.CPU == nil {
		return nil
	}
	return r
}

// resourcesNode writes p's resources as a container's: memory max and cpu
// max as limits, cpu weight as the CPU request the kubelet turns back into
// that weight (the inverse of cpuWeight, rounded up); nil when none.
func resourcesNode(r *config.Resources) *yaml.Node {
	if r == nil {
		return nil
	}
	limits, requests := mapping(), mapping()
	if r.Memory != nil && r.Memory.Max > 0 {
		add(limits, "memory", scalar(config.FormatBytes(r.Memory.Max)))
	}
	if r.CPU != nil && r.CPU.Max > 0 {
		add(limits, "cpu", scalar(config.FormatMillicores(r.CPU.Max)))
	}
	if r.CPU != nil && r.CPU.Weight > 0 {
		add(requests, "cpu", scalar(config.FormatMillicores(weightMilliCPU(r.CPU.Weight))))
	}
	out := mapping()
	if len(limits.Content) > 0 {
		add(out, "limits", limits)
	}
	if len(requests.Content) > 0 {
		add(out, "requests", requests)
	}
	if len(out.Content) == 0 {
		return nil
	}
	return out
}

// weightMilliCPU is the least CPU request whose weight (cpuWeight) is at
// least w.
func weightMilliCPU(w int64) int64 {
	shares := minShares + ((w-1)*(maxShares-minShares)+9998)/9999
	m := max(shares*1000/1024, 1)
	for cpuWeight(m) < w {
		m++
	}
	return m
}
