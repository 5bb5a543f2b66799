package config

import "testing"

// TestTeardownChainBreaksAtCompletedOneshot: a oneshot or job that its
// dependents wait for to complete has exited before they start, so the
// processes on either side of it stop in parallel: no teardown chain runs
// through it. The shape is what kube play makes of a container with a
// postStart hook (default mode), which warned every time.
func TestTeardownChainBreaksAtCompletedOneshot(t *testing.T) {
	cases := []struct {
		name, src, want string
	}{
		{"kube play postStart", `shutdown_timeout: 30s
processes:
  install: {command: x, type: oneshot, stop: {timeout: 30s}}
  proxy: {command: x, depends_on: {install: completed}, stop: {timeout: 30s}}
  proxy.post-start: {command: x, type: oneshot, depends_on: {proxy: started}, stop: {timeout: 1s}}
  app: {command: x, depends_on: {install: completed, proxy.post-start: completed}, stop: {timeout: 30s}}
`, ""},
		{"job awaited as ready", `shutdown_timeout: 25s
processes:
  db: {command: x, stop: {timeout: 15s}}
  seed: {command: x, type: job, depends_on: [db]}
  app: {command: x, depends_on: [seed], stop: {timeout: 15s}}
`, ""},
		{"a chain beside the oneshot still counts", `shutdown_timeout: 25s
processes:
  db: {command: x, stop: {timeout: 15s}}
  init: {command: x, type: oneshot, depends_on: [db]}
  app: {command: x, depends_on: {init: completed, db: ready}, stop: {timeout: 15s}}
`, "stop timeouts along the longest teardown chain app -> db add up to 30s, more than shutdown_timeout 25s"},
		{"a oneshot awaited as started keeps the chain", `shutdown_timeout: 25s
processes:
  db: {command: x, stop: {timeout: 15s}}
  init: {command: x, type: oneshot, depends_on: [db], stop: {timeout: 1s}}
  app: {command: x, depends_on: {init: started}, stop: {timeout: 15s}}
`, "stop timeouts along the longest teardown chain app -> init -> db add up to 31s, more than shutdown_timeout 25s"},
		{"a completed oneshot's stop.command runs in the teardown", `shutdown_timeout: 25s
processes:
  db: {command: x, stop: {timeout: 15s}}
  init: {command: x, type: oneshot, depends_on: [db], stop: {command: [umount, /data], timeout: 5s}}
  app: {command: x, depends_on: {init: completed}, stop: {timeout: 10s}}
`, "stop timeouts along the longest teardown chain app -> init -> db add up to 30s, more than shutdown_timeout 25s"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := mustParse(t, tc.src, nil).TeardownWarning(); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}
