package config

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Resources is `resources:`: the limits podvisor enforces through a cgroup
// of the process's own (internal/cgroup, docs/resources.md). A nil section
// means none, and then no cgroup is made for the process.
type Resources struct {
	Memory *MemoryResources // nil: no memory limit
	CPU    *CPUResources    // nil: no CPU limit
	Pids   *PidsResources   // nil: no limit on tasks
}

// MemoryResources is `resources.memory`. 0 means unset.
type MemoryResources struct {
	Max  int64 // bytes: the OOM killer acts above it (memory.max)
	High int64 // bytes: reclaimed and throttled above it (memory.high)
}

// CPUResources is `resources.cpu`. 0 means unset.
type CPUResources struct {
	Max    int64 // millicores: 1000 is one CPU's time per period (cpu.max)
	Weight int64 // 1..10000, the share against siblings (cgroup v2 cpu.weight; default 100)
}

// PidsResources is `resources.pids`. 0 means unset.
type PidsResources struct {
	Max int64 // tasks (processes and threads) the process's tree may hold at once (pids.max)
}

// The bounds the loader checks.
const (
	MinMemory    = 1 << 20 // a smaller limit kills any real program at once
	MaxCPUMillis = 1 << 30 // a million CPUs: anything more is a slip
	MinCPUWeight = 1
	MaxCPUWeight = 10000
	MaxPids      = 1 << 22 // the kernel's pid_max ceiling
)

var (
	resourcesKeys = []string{"memory", "cpu", "pids"}
	memoryKeys    = []string{"max", "high"}
	cpuKeys       = []string{"max", "weight"}
	pidsKeys      = []string{"max"}
)

// resources decodes `resources:`; an empty section is nil.
func (l *loader) resources(n *yaml.Node, path *keyPath) *Resources {
	f, ok := l.fields(n, path, resourcesKeys)
	if !ok {
		return nil
	}
	r := &Resources{}
	if v, ok := f.get("memory"); ok {
		r.Memory = l.memoryResources(v.val, path.field("memory"))
	}
	if v, ok := f.get("cpu"); ok {
		r.CPU = l.cpuResources(v.val, path.field("cpu"))
	}
	if v, ok := f.get("pids"); ok {
		r.Pids = l.pidsResources(v.val, path.field("pids"))
	}
	if r.Memory == nil && r.CPU == nil && r.Pids == nil {
		return nil
	}
	return r
}

func (l *loader) memoryResources(n *yaml.Node, path *keyPath) *MemoryResources {
	f, ok := l.fields(n, path, memoryKeys)
	if !ok {
		return nil
	}
	m := &MemoryResources{}
	for _, p := range f {
		v, ok := l.bytesQuantity(p.val, path.field(p.name))
		if !ok {
			continue
		}
		if p.name == "max" {
			m.Max = v
		} else {
			m.High = v
		}
	}
	if m.Max > 0 && m.High > m.Max {
		hv, _ := f.get("high")
		l.errorf(hv.val, path.field("high"), "memory.high %s is above memory.max %s", FormatBytes(m.High), FormatBytes(m.Max)).Hint =
			"high throttles before max kills: set it below max, or leave it out"
	}
	if *m == (MemoryResources{}) {
		return nil
	}
	return m
}

// bytesQuantity reads a memory size written as Kubernetes does (512Mi, 1G,
// 1073741824): at least MinMemory.
func (l *loader) bytesQuantity(n *yaml.Node, path *keyPath) (int64, bool) {
	s, ok := l.quantityText(n, path, "a memory size such as 512Mi")
	if !ok {
		return 0, false
	}
	v, err := ParseBytes(s)
	if err != nil {
		l.errorf(n, path, "%s", err.Error()).Hint = "use a number of bytes or a suffix: Ki, Mi, Gi (1024s) or k, M, G (1000s), e.g. 512Mi"
		return 0, false
	}
	if v < MinMemory {
		e := l.errorf(n, path, "memory %s is %d bytes, below the least of 1Mi", s, v)
		if isDigits(s) {
			e.Hint = "a plain number is bytes: did you mean " + s + "Mi?"
		}
		return 0, false
	}
	return v, true
}

func (l *loader) cpuResources(n *yaml.Node, path *keyPath) *CPUResources {
	f, ok := l.fields(n, path, cpuKeys)
	if !ok {
		return nil
	}
	c := &CPUResources{}
	if p, ok := f.get("max"); ok {
		c.Max = l.cpuQuantity(p.val, path.field("max"))
	}
	if p, ok := f.get("weight"); ok {
		if w, ok := l.integer(p.val, path.field("weight")); ok {
			if w < MinCPUWeight || w > MaxCPUWeight {
				l.errorf(p.val, path.field("weight"), "cpu weight %d is out of range 1..10000", w).Hint =
					"100 is the default share; 200 gets twice a sibling's time under contention"
			} else {
				c.Weight = int64(w)
			}
		}
	}
	if *c == (CPUResources{}) {
		return nil
	}
	return c
}

// cpuQuantity reads CPU time written as Kubernetes does (500m, 0.5, 2), in
// millicores.
func (l *loader) cpuQuantity(n *yaml.Node, path *keyPath) int64 {
	s, ok := l.quantityText(n, path, "a CPU amount such as 500m or 2")
	if !ok {
		return 0
	}
	v, err := ParseMillicores(s)
	switch {
	case err != nil:
		l.errorf(n, path, "%s", err.Error()).Hint = "use CPUs (0.5, 2) or millicores (500m)"
		return 0
	case v == 0:
		l.errorf(n, path, "cpu max %s is zero", s).Hint = "give at least 1m, or leave max out for no limit"
		return 0
	case v > MaxCPUMillis:
		l.errorf(n, path, "cpu max %s is more than a million CPUs", s).Hint = "leave max out for no limit"
		return 0
	}
	return v
}

func (l *loader) pidsResources(n *yaml.Node, path *keyPath) *PidsResources {
	f, ok := l.fields(n, path, pidsKeys)
	if !ok {
		return nil
	}
	p, ok := f.get("max")
	if !ok {
		return nil
	}
	v, ok := l.integer(p.val, path.field("max"))
	if !ok {
		return nil
	}
	if v < 1 || v > MaxPids {
		l.errorf(p.val, path.field("max"), "pids max %d is out of range 1..%d", v, MaxPids).Hint =
			"count the process's threads and children; leave max out for no limit"
		return nil
	}
	return &PidsResources{Max: int64(v)}
}

// quantityText is a quantity's text: a string or a YAML number as written.
func (l *loader) quantityText(n *yaml.Node, path *keyPath, want string) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!int", "!!float":
			return n.Value, true
		}
	}
	l.errorf(n, path, "expected %s, got %s", want, describe(n))
	return "", false
}

// FormatBytes writes a byte count as the shortest exact quantity (512Mi,
// 1G, 1500).
func FormatBytes(v int64) string {
	for _, u := range []struct {
		s string
		f int64
	}{{"Ei", 1 << 60}, {"Pi", 1 << 50}, {"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10},
		{"E", 1e18}, {"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}} {
		if v != 0 && v%u.f == 0 {
			return strconv.FormatInt(v/u.f, 10) + u.s
		}
	}
	return strconv.FormatInt(v, 10)
}

// FormatMillicores writes CPU time as Kubernetes does: whole CPUs as a plain
// number (2), else millicores (500m).
func FormatMillicores(v int64) string {
	if v%1000 == 0 {
		return strconv.FormatInt(v/1000, 10)
	}
	return strconv.FormatInt(v, 10) + "m"
}

// writeResources writes the resources block (docs/reference.md's order).
func (w *writer) resources(r *Resources, c func(string) string) {
	if r == nil {
		return
	}
	w.kv(2, "resources", "", c("resources"))
	if m := r.Memory; m != nil {
		w.line(3, "memory: "+flow(pairIf("max", m.Max, FormatBytes), pairIf("high", m.High, FormatBytes)))
	}
	if p := r.CPU; p != nil {
		w.line(3, "cpu: "+flow(pairIf("max", p.Max, FormatMillicores), pairIf("weight", p.Weight, itoa64)))
	}
	if p := r.Pids; p != nil {
		w.line(3, "pids: "+flow(pairIf("max", p.Max, itoa64)))
	}
}

// String says what r asks for: "memory max 512Mi, cpu max 500m, pids max 64".
func (r *Resources) String() string {
	var parts []string
	add := func(what string, v int64, format func(int64) string) {
		if v != 0 {
			parts = append(parts, what+" "+format(v))
		}
	}
	if m := r.Memory; m != nil {
		add("memory max", m.Max, FormatBytes)
		add("memory high", m.High, FormatBytes)
	}
	if c := r.CPU; c != nil {
		add("cpu max", c.Max, FormatMillicores)
		add("cpu weight", c.Weight, itoa64)
	}
	if p := r.Pids; p != nil {
		add("pids max", p.Max, itoa64)
	}
	return strings.Join(parts, ", ")
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }

// pairIf is "key: value" for a set value, "" for 0.
func pairIf(key string, v int64, format func(int64) string) string {
	if v == 0 {
		return ""
	}
	return key + ": " + format(v)
}

// flow writes the non-empty pairs as a YAML flow mapping.
func flow(pairs ...string) string {
	s := "{"
	for _, p := range pairs {
		if p == "" {
			continue
		}
		if len(s) > 1 {
			s += ", "
		}
		s += p
	}
	return s + "}"
}
