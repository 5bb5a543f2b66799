package importer

import (
	"fmt"
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// sweepMargin is added to a teardown chain's stop timeouts in the
// shutdown_timeout the import writes: what podvisor's teardown spends
// after the last process of the chain (the final sweep of leftover
// descendants, up to 2 s, and the last drain of the output).
const sweepMargin = 5 * time.Second

// sdShutdownTimeout gives the converted units the teardown systemd gives
// them. systemd stops each unit with its own stop timeout, one after the
// other in the reverse of their start order, with no budget for the whole
// (90 s each by default); podvisor bounds its whole teardown by
// shutdown_timeout, 30 s by default, so two units with the default would
// be SIGKILLed early (check warns of it). The import writes a
// shutdown_timeout that covers the longest chain, as podvisor's loader
// counts it (config.TeardownChain), plus sweepMargin.
func sdShutdownTimeout(m *Model, r *Report) {
	if r.Failed() || len(m.Processes) == 0 {
		return
	}
	cfg, _, err := config.ParsePortable("/nonexistent/procs.yaml", config.Write(m), func(string) (string, bool) { return "1", true })
	if err != nil {
		return // the file fails the check anyway; it says why
	}
	chain, total := cfg.TeardownChain()
	if total <= config.DefaultShutdownTimeout || m.ShutdownTimeout >= total+sweepMargin {
		return
	}
	m.ShutdownTimeout = min(total+sweepMargin, config.MaxDuration)
	capped := ""
	if total+sweepMargin > config.MaxDuration {
		capped = " (podvisor's longest)"
	}
	how := fmt.Sprintf("%s%s: systemd stops each unit with its own stop timeout, one after the other, with no limit on the whole; podvisor's teardown is bounded by shutdown_timeout (30s by default), so it is the stop timeouts of the longest chain %s (%s) plus %s for the final sweep",
		config.FormatDuration(m.ShutdownTimeout), capped, strings.Join(chain, " -> "), config.FormatDuration(total), config.FormatDuration(sweepMargin))
	r.Approx("", "shutdown_timeout", how)
	m.Header = append(m.Header, "approximated: shutdown_timeout: "+how)
}
