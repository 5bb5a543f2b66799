package app

import (
	"sync/atomic"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/launch"
	"github.com/podvisor/podvisor/internal/logs"
)

// logsBackend is the control socket's backend: the supervisor, plus what
// `logs` needs of the log set-up (control.LogBackend).
type logsBackend struct {
	control.Supervised
	sink *logs.Sink
	cfg  *atomic.Pointer[config.Config] // the config in effect (reloads replace it)
	// terms: the attachable processes' terminals (control.AttachBackend).
	terms *launch.Terminals
}

var _ control.AttachBackend = logsBackend{}

// Attach connects to name's terminal; an unknown name gets the
// supervisor's "did you mean".
func (b logsBackend) Attach(name string, readOnly bool) (control.Attachment, error) {
	if _, err := b.Tail(name); err != nil {
		return nil, err
	}
	a, err := b.terms.Attach(name, readOnly)
	if err != nil {
		return nil, err // not a nil *launch.Attachment in an interface
	}
	return a, nil
}

var _ control.LogBackend = logsBackend{}

func (b logsBackend) LogNames() []string { return b.cfg.Load().Names }

func (b logsBackend) LogFile(name string) (string, bool) {
	p := b.cfg.Load().Processes[name]
	if p == nil {
		return "", false
	}
	o := p.Log
	path := o.File
	if path == "" {
		path = o.StderrFile // stdout does not go to a file; stderr may
	}
	return path, o.Format == "json" || o.Timestamps
}

func (b logsBackend) ReopenLogs() int { return b.sink.Reopen() }
