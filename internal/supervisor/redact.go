package supervisor

import (
	"context"
	"sort"
	"strings"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/health"
)

// minRedacted is the shortest environment value redacted from probe
// details: shorter ones ("1", "UTC", "debug") are settings, not secrets, and
// blanking them would garble every message.
const minRedacted = 8

// envRedactor replaces the values of p's configured environment (env,
// env_file) in text with ${NAME}: a probe's output or error reaches /status
// and the log, and no endpoint may show environment values.
func envRedactor(p *config.Process) *strings.Replacer {
	type kv struct{ k, v string }
	var pairs []kv
	for _, e := range p.Env {
		k, v, ok := strings.Cut(e, "=")
		if ok && len(v) >= minRedacted {
			pairs = append(pairs, kv{k, v})
		}
	}
	if len(pairs) == 0 {
		return nil
	}
	// Longest first, so a value containing another is replaced whole.
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i].v) > len(pairs[j].v) })
	args := make([]string, 0, 2*len(pairs))
	for _, p := range pairs {
		args = append(args, p.v, "${"+p.k+"}")
	}
	return strings.NewReplacer(args...)
}

// redactingChecker redacts environment values from a checker's details.
type redactingChecker struct {
	health.Checker
	r *strings.Replacer
}

func (c redactingChecker) Check(ctx context.Context) health.Result {
	res := c.Checker.Check(ctx)
	if c.r != nil {
		res.Detail = c.r.Replace(res.Detail)
	}
	return res
}
