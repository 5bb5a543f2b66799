package logs

import "github.com/podvisor/podvisor/internal/metrics"

// Collector returns the sink's metrics:
// podvisor_log_lines_dropped_total{process,reason}.
func (s *Sink) Collector() metrics.Collector { return collector{s} }

type collector struct{ s *Sink }

func (c collector) Collect(w *metrics.Writer) {
	w.Family("podvisor_log_lines_dropped_total", metrics.Counter,
		"Lines of output dropped because their destination could not take them (disk_full, stdout_blocked, stdout_closed, file_refused, write_error); podvisor's own messages count under process=\"podvisor\".")
	c.s.DroppedLines(func(process, reason string, n uint64) {
		w.Sample("", float64(n), "process", process, "reason", reason)
	})
}
