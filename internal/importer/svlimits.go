package importer

import (
	"fmt"
	"strconv"

	"github.com/podvisor/podvisor/internal/config"
)

// svMinimum is [supervisord] minfds= or minprocs=: supervisord raises its
// own soft and hard limit to at least this at its start, and every program
// inherits them.
type svMinimum struct {
	pos, key string
	limit    config.Rlimit
}

// minimum records minfds or minprocs for applyMinimums.
func (c *svConv) minimum(pos string, k iniKey) {
	n, err := strconv.ParseUint(k.Value, 10, 64)
	if err != nil || n == 0 {
		c.r.Fail(pos, "[supervisord] "+k.Name, fmt.Sprintf("%q is not a positive number", k.Value))
		return
	}
	name := map[string]string{"minfds": "nofile", "minprocs": "nproc"}[k.Name]
	c.minimums = append(c.minimums, svMinimum{pos: pos, key: k.Name, limit: config.Rlimit{Name: name, Soft: n, Hard: n}})
}

// applyMinimums gives every program the limits of minfds and minprocs. It
// is an approximation: supervisord only raises a limit below the minimum,
// while limits sets it, lower than before where the container gives more.
func (c *svConv) applyMinimums() {
	for _, m := range c.minimums {
		how := fmt.Sprintf("%s=%d: supervisord raised its own limits to at least that for all programs; here soft and hard are set to it, lower where the container allows more",
			m.key, m.limit.Soft)
		for _, p := range c.m.Processes {
			p.Limits = setLimit(p.Limits, m.limit)
			p.Comment("limits."+m.limit.Name, how)
		}
		c.r.approxBeside(m.pos, "[supervisord] "+m.key, how)
	}
}
