// Reloading one process (`podvisor reload NAME`, `reload:` in its config)
// and the sd_notify RELOADING=1 that says a process reloads: the process
// stays Running and ready, and shows as "reloading" (publish.go) until the
// action is done or, for a process with ready: {notify: systemd}, until
// its next READY=1 (systemd's Type=notify-reload).

package supervisor

import (
	"context"
	"fmt"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
)

// reloadCommandLimit bounds a reload command without a start_timeout.
const reloadCommandLimit = time.Minute

// reloadNotified reports whether r confirms its reloads with READY=1.
func reloadNotified(r *record) bool {
	return r.p.Ready != nil && r.p.Ready.Kind == config.ProbeNotifySystemd
}

// opReload runs each record's reload action; the answer says what was
// done, not the reload's end (which /status shows).
func (s *Supervisor) opReload(w *waiter, rs []*record, now time.Time) {
	for _, r := range rs {
		switch {
		case r.p.Reload == nil:
			w.done(r, false, "cannot reload: no reload: action in its config (add reload: {signal: HUP} or reload: {command: [...]}; podvisor reload without a name re-reads procs.yaml)")
		case r.cur.child == nil || r.state != Running && r.state != Starting:
			w.done(r, false, "cannot reload: it is "+r.state.String())
		case r.cur.reloadCmd:
			w.done(r, false, "cannot reload: its reload command is still running")
		default:
			w.done(r, true, s.beginReload(r, now))
		}
	}
}

// beginReload runs r's reload action and says what it did.
func (s *Supervisor) beginReload(r *record, now time.Time) string {
	inc := r.cur
	inc.reloading, inc.reloadBegin = true, now
	s.log.Info("reloading", "process", r.p.Name, "pid", inc.pid)
	if sig := r.p.Reload.Signal; sig != 0 {
		if err := inc.child.Signal(sig); err != nil {
			s.log.Warn("reload signal", "process", r.p.Name, "err", err)
		}
		if !reloadNotified(r) {
			inc.reloading = false // nothing will say when it is done
		}
		return fmt.Sprintf("reloading: sent %s%s", proc.SignalName(sig), pidText(inc.pid))
	}
	limit := reloadCommandLimit
	if r.p.StartTimeout > 0 {
		limit = r.p.StartTimeout
	}
	ctx, cancel := context.WithTimeout(s.probeCtx, limit)
	inc.reloadCmd = true
	idx, gen, p := r.idx, inc.gen, r.p
	go func() {
		defer cancel()
		err := s.launcher.ReloadCommand(ctx, p)
		s.send(reloadCmdDoneEv{idx: idx, gen: gen, err: err})
	}()
	return "reloading: reload command started" + pidText(inc.pid)
}

// onReloadCmdDone ends a reload command: the reload too, unless READY=1
// is to say so.
func (s *Supervisor) onReloadCmdDone(r *record, inc *incarnation, e reloadCmdDoneEv) {
	inc.reloadCmd = false
	if e.err != nil {
		s.log.Warn("reload command failed", "process", r.p.Name, "err", e.err)
		inc.reloading = false
		return
	}
	if !reloadNotified(r) && inc.reloading {
		inc.reloading = false
		s.log.Info("reloaded", "process", r.p.Name)
	}
}

// onReloading is RELOADING=1: the process reloads (on its own, or as the
// action asked). One whose MONOTONIC_USEC says it was sent before the
// reload podvisor began is about an earlier reload: ignored.
func (s *Supervisor) onReloading(r *record, inc *incarnation, e reloadingEv) {
	if r.state != Running || !e.at.IsZero() && e.at.Before(inc.reloadBegin) {
		return
	}
	if !inc.reloading {
		s.log.Info("reloading (RELOADING=1)", "process", r.p.Name)
		inc.reloading, inc.reloadBegin = true, e.at
	}
}

// endReload is a READY=1 while reloading: the reload is over.
func (s *Supervisor) endReload(r *record, inc *incarnation) {
	inc.reloading = false
	s.log.Info("reloaded (READY=1)", "process", r.p.Name)
}
