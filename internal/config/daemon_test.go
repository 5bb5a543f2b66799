package config

import (
	"path/filepath"
	"testing"
)

func TestDaemon(t *testing.T) {
	cfg := mustParse(t, `
processes:
  abs: {command: [a], daemon: {pid_file: /run/a.pid}}
  rel: {command: [r], daemon: {pid_file: "run/../$${X}r.pid"}}
`, nil)
	if got := cfg.Processes["abs"].Daemon; got == nil || got.PidFile != "/run/a.pid" {
		t.Errorf("abs daemon %+v", got)
	}
	dir, _ := filepath.Abs(filepath.Dir(testFile))
	if got, want := cfg.Processes["rel"].Daemon, filepath.Join(dir, "${X}r.pid"); got == nil || got.PidFile != want {
		t.Errorf("rel daemon %+v, want %s", got, want)
	}
	runErrCases(t, []errCase{
		{name: "missing", src: "processes:\n  a: {command: [a], daemon: {}}\n", pos: testFile + ":2:29", path: "processes.a.daemon", msg: "pid_file is required"},
		{name: "empty", src: "processes:\n  a: {command: [a], daemon: {pid_file: \"\"}}\n", pos: testFile + ":2:40", path: "processes.a.daemon.pid_file", msg: "pid_file is empty"},
		{name: "oneshot", src: "processes:\n  a: {command: [a], type: oneshot, daemon: {pid_file: /x}}\n", pos: testFile + ":2:44", path: "processes.a.daemon", msg: "daemon applies to services only"},
	})
}
