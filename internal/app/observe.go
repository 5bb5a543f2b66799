package app

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/oom"
	"github.com/podvisor/podvisor/internal/supervisor"
	"github.com/podvisor/podvisor/internal/timeline"
)

// observers builds the timeline recorder and the OOM kill detector of a run.
// A missing memory cgroup counter only means OOM kills show as plain
// SIGKILL deaths.
func observers(cfg *config.Config, log *slog.Logger) (*timeline.Recorder, supervisor.OOMDetector) {
	tl := timeline.New(timeline.FromConfig(cfg), timeline.DefaultKeep, time.Now())
	det, err := oom.Open("/sys/fs/cgroup", "/proc/self/cgroup")
	if err != nil {
		log.Debug("OOM kills cannot be told apart from other SIGKILLs", "err", err)
		return tl, nil
	}
	log.Debug("OOM kills counted from", "file", det.File())
	return tl, det
}

// logShutdownReport writes the shutdown report as podvisor's last block of
// log lines: the budget, then one line per process in the order they exited.
func logShutdownReport(log *slog.Logger, d timeline.Doc) {
	sd := d.Shutdown
	if sd == nil {
		return
	}
	log.Info("shutdown report", "cause", sd.Cause, "took", secs(sd.UsedSeconds),
		"shutdown_timeout", secs(sd.BudgetSeconds), "left", secs(sd.LeftSeconds))
	for _, p := range sd.Processes {
		attrs := []any{"process", p.Process, "ended_by", p.EndedBy}
		if p.StopSeconds != nil {
			attrs = append(attrs, "stop_took", secs(*p.StopSeconds))
		}
		if p.Signal != "" {
			attrs = append(attrs, "signal", p.Signal)
		}
		if p.SIGKILLed {
			attrs = append(attrs, "sigkilled", true)
		}
		if p.ExitCode != nil {
			attrs = append(attrs, "code", *p.ExitCode)
		}
		if p.Cause {
			attrs = append(attrs, "began_teardown", true)
		}
		log.Info("shutdown report", attrs...)
	}
}

func secs(s float64) string {
	return fmt.Sprintf("%.3fs", s)
}
