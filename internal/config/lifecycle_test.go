package config

import (
	"testing"
	"time"
)

func TestSidecarAndStopKeys(t *testing.T) {
	cfg := mustParse(t, "processes:\n  proxy: {command: x, sidecar: true, stop: {command_first: true, min_grace: 2s}}\n  app: {command: x}\n", nil)
	p := cfg.Processes["proxy"]
	if !p.Sidecar || !p.Stop.CommandFirst || p.Stop.MinGrace != 2*time.Second {
		t.Errorf("proxy = sidecar %v, command_first %v, min_grace %v; want true, true, 2s", p.Sidecar, p.Stop.CommandFirst, p.Stop.MinGrace)
	}
}
