package logs

import "github.com/prometheus/client_golang/prometheus"

// Collector returns the sink's metrics for Prometheus:
// podvisor_log_lines_dropped_total{process,reason}.
func (s *Sink) Collector() prometheus.Collector { return collector{s} }

var droppedDesc = prometheus.NewDesc("podvisor_log_lines_dropped_total",
	"Lines of output dropped because their destination could not take them (disk_full, stdout_blocked, stdout_closed, write_error); podvisor's own messages count under process=\"podvisor\".",
	[]string{"process", "reason"}, nil)

type collector struct{ s *Sink }

func (c collector) Describe(ch chan<- *prometheus.Desc) { ch <- droppedDesc }

func (c collector) Collect(ch chan<- prometheus.Metric) {
	c.s.DroppedLines(func(process, reason string, n uint64) {
		ch <- prometheus.MustNewConstMetric(droppedDesc, prometheus.CounterValue, float64(n), process, reason)
	})
}
