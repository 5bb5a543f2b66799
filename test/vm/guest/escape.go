package main

import (
	"errors"
	"fmt"
	"regexp"
	"time"
)

// escape: a daemon that double-forked out of its process's group and
// session (its parent exits, so podvisor, a subreaper, inherits it) is
// gone after `podvisor stop` of its process: the final SIGKILL writes
// cgroup.kill, and podvisor says what it killed that way. The neighbour
// runs on.
func escape(r *reporter) {
	start := time.Now()
	dir, err := newCgroup("esc")
	if err != nil {
		r.result("escape", start, "", err)
		return
	}
	const mark = "900008"
	run, err := startRun("esc", dir, 8104, `processes:
  app:
    command: "(setsid sleep `+mark+` &); exec sleep 900009"
    resources: {memory: {max: 64Mi}}
    stop: {timeout: 1s}
  other:
    command: [sleep, '900010']
`)
	if err != nil {
		r.result("escape", start, "", err)
		return
	}
	defer func() {
		_, _ = run.stop(30 * time.Second)
		if err := run.clean(); err != nil {
			r.result("escape-clean", start, "", err)
		}
	}()
	pids, err := run.running("app", "other")
	if err != nil {
		r.result("escape", start, "", err)
		return
	}
	daemon, err := onePid(mark)
	if err != nil {
		r.result("escape", start, "", err)
		return
	}
	pv := run.cmd.Process.Pid
	reparented := eventually(10*time.Second, func() bool { pp, _ := stat(daemon, 4); return pp == pv })
	pgid, _ := stat(daemon, 5)
	sid, _ := stat(daemon, 6)
	if !reparented || pgid == pids["app"] || sid != daemon {
		pp, _ := stat(daemon, 4)
		r.result("escape", start, "", fmt.Errorf("the daemon %d did not leave: parent %d (podvisor %d), group %d, session %d (app %d): the test proves nothing", daemon, pp, pv, pgid, sid, pids["app"]))
		return
	}
	var errs []error
	errs = append(errs, inCgroup(daemon, "/vm-esc/p-app.1"))
	if out, err := run.ctl("stop", "app"); err != nil {
		errs = append(errs, fmt.Errorf("podvisor stop app: %v\n%s", err, out))
	}
	if !eventually(20*time.Second, func() bool { return !alive(daemon) }) {
		errs = append(errs, fmt.Errorf("the escaped daemon %d outlived its process's stop", daemon))
	}
	said := regexp.MustCompile(`killed the process's cgroup.*process=app.*processes=1`)
	if !eventually(10*time.Second, func() bool { return said.MatchString(run.out.String()) }) {
		errs = append(errs, fmt.Errorf("podvisor did not say it killed app's cgroup:\n%s", run.out))
	}
	if p, err := process(run.port, "other"); err != nil || p.State != "running" || p.Pid != pids["other"] {
		errs = append(errs, fmt.Errorf("other did not run on: %+v %v", p, err))
	}
	r.result("escape", start, fmt.Sprintf("the daemon %d (parent podvisor, own session) was in p-app.1 and died at app's stop by cgroup.kill; podvisor: %q", daemon, said.FindString(run.out.String())), errors.Join(errs...))
}
