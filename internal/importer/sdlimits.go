package importer

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
)

// sdLimitKey converts the [Service] keys that become limits, umask,
// no_new_privs, capabilities and resources (docs/import.md); false when k
// is none of them.
func (c *sdConv) sdLimitKey(f *unitFile, p *Process, k iniKey) bool {
	r := c.r
	pos, what := kpos(f, k), f.name+": "+k.Name
	v := strings.TrimSpace(k.Value)
	switch {
	case strings.HasPrefix(k.Name, "Limit"):
		name := strings.ToLower(strings.TrimPrefix(k.Name, "Limit"))
		if !slices.Contains(config.LimitNames, name) {
			return false
		}
		lim, msg := config.ParseRlimit(name, v)
		if msg != "" {
			r.Fail(pos, what, msg)
			return true
		}
		p.Limits = setLimit(p.Limits, lim)
		r.AsIs(pos, what)
	case k.Name == "UMask":
		m, err := strconv.ParseUint(v, 8, 32)
		if err != nil || m > 0o777 {
			r.Fail(pos, what, fmt.Sprintf("%q is not an octal mode", v))
			return true
		}
		mask := uint32(m)
		p.Umask = &mask
		r.AsIs(pos, what)
	case k.Name == "NoNewPrivileges":
		on, ok := parseBool(strings.ToLower(v))
		if !ok {
			r.Fail(pos, what, fmt.Sprintf("%q is not a boolean", v))
			return true
		}
		p.NoNewPrivs = on
		r.AsIs(pos, what)
	case k.Name == "AmbientCapabilities":
		c.sdAmbient(p, pos, what, v)
	default:
		return c.sdResource(p, pos, what, k.Name, v)
	}
	return true
}

// setLimit puts l into limits in place of one of the same name (a later
// assignment wins, as in systemd), in the config's order.
func setLimit(limits []config.Rlimit, l config.Rlimit) []config.Rlimit {
	limits = slices.DeleteFunc(limits, func(x config.Rlimit) bool { return x.Name == l.Name })
	limits = append(limits, l)
	slices.SortFunc(limits, func(a, b config.Rlimit) int {
		return slices.Index(config.LimitNames, a.Name) - slices.Index(config.LimitNames, b.Name)
	})
	return limits
}

// sdAmbient converts AmbientCapabilities=: a privilege grant. An empty
// assignment resets the list; "~" (all but these) has no equivalent.
func (c *sdConv) sdAmbient(p *Process, pos, what, v string) {
	if v == "" {
		p.AmbientCaps = nil
		return
	}
	if strings.HasPrefix(v, "~") {
		c.r.Drop(pos, what, "a privilege grant of every capability but those listed: podvisor grants only capabilities it is given by name")
		return
	}
	for _, name := range strings.Fields(v) {
		if !slices.Contains(config.CapabilityNames, name) {
			c.r.Fail(pos, what, fmt.Sprintf("unknown capability %q", name))
			return
		}
		if !slices.Contains(p.AmbientCaps, name) {
			p.AmbientCaps = append(p.AmbientCaps, name)
		}
	}
	slices.Sort(p.AmbientCaps)
	c.r.AsIs(pos, what+" (a privilege grant: capabilities.ambient, which needs User=)")
}

// sdResource converts MemoryMax=, MemoryHigh=, CPUQuota=, CPUWeight= and
// TasksMax= to resources; false for any other key.
func (c *sdConv) sdResource(p *Process, pos, what, key, v string) bool {
	r := c.r
	res := p.Resources
	if res == nil {
		res = &config.Resources{}
	}
	switch key {
	case "MemoryMax", "MemoryHigh":
		if v == "infinity" {
			return true
		}
		n, ok := sdBytes(v)
		if !ok || n < config.MinMemory {
			r.Fail(pos, what, fmt.Sprintf("%q is not a size of at least 1M podvisor can take (a percentage of the machine's memory has no equivalent)", v))
			return true
		}
		if res.Memory == nil {
			res.Memory = &config.MemoryResources{}
		}
		if key == "MemoryMax" {
			res.Memory.Max = n
		} else {
			res.Memory.High = n
		}
		r.AsIs(pos, what)
	case "CPUQuota":
		pct, err := strconv.ParseFloat(strings.TrimSuffix(v, "%"), 64)
		if !strings.HasSuffix(v, "%") || err != nil || pct <= 0 || pct > 1e6 {
			r.Fail(pos, what, fmt.Sprintf("%q is not a percentage above 0", v))
			return true
		}
		if res.CPU == nil {
			res.CPU = &config.CPUResources{}
		}
		res.CPU.Max = int64(math.Ceil(pct * 10))
		note(p, r, pos, "resources", fmt.Sprintf("CPUQuota=%s is cpu max %dm (1000m = one CPU's time), enforced over podvisor's period rather than systemd's 100ms", v, res.CPU.Max))
	case "CPUWeight":
		w, err := strconv.ParseInt(v, 10, 64)
		if err != nil || w < config.MinCPUWeight || w > config.MaxCPUWeight {
			r.Fail(pos, what, fmt.Sprintf("%q is not a weight 1..10000 (idle has no equivalent)", v))
			return true
		}
		if res.CPU == nil {
			res.CPU = &config.CPUResources{}
		}
		res.CPU.Weight = w
		r.AsIs(pos, what)
	case "TasksMax":
		if v == "infinity" {
			return true
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 || n > config.MaxPids {
			r.Fail(pos, what, fmt.Sprintf("%q is not a number of tasks (a percentage of the system's limit has no equivalent)", v))
			return true
		}
		res.Pids = &config.PidsResources{Max: n}
		r.AsIs(pos, what)
	default:
		return false
	}
	if res.Memory != nil || res.CPU != nil || res.Pids != nil {
		p.Resources = res
	}
	return true
}

// sdBytes parses a systemd size: bytes, or K, M, G, T, P, E (base 1024).
func sdBytes(v string) (int64, bool) {
	l, msg := config.ParseRlimit("as", v)
	if msg != "" || l.Soft != l.Hard || l.Soft > math.MaxInt64 {
		return 0, false
	}
	return int64(l.Soft), true
}
