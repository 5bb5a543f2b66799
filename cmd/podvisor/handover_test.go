package main

import (
	"testing"

	"github.com/podvisor/podvisor/internal/launch"
)

// Every variable podvisor sets for its own re-exec is kept from the
// children (issue 34 item 8): a child that is itself podvisor would take
// the fds it names.
func TestHandOverEnvHiddenFromChildren(t *testing.T) {
	for _, name := range []string{inheritedEnv, mountedEnv} {
		got := launch.CleanBaseEnv([]string{"KEEP=1", name + "=5 6 /run/x.sock"})
		if len(got) != 1 || got[0] != "KEEP=1" {
			t.Errorf("CleanBaseEnv kept %s: %q", name, got)
		}
	}
}
