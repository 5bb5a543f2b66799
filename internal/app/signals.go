package app

import (
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/podvisor/podvisor/internal/logs"
)

// reopenOnSignal reopens the sink's log files on each SIGUSR1 until the
// returned function is called. A channel of its own: every channel notified
// for a signal gets it, so the supervisor's forwarding is untouched.
func reopenOnSignal(sink *logs.Sink, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR1)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if n := sink.Reopen(); n > 0 {
					log.Info("log files reopened", "files", n)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
