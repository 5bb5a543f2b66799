package server

import (
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/podvisor/podvisor/internal/resources"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// maxConcurrentScrapes bounds /metrics work under a flood of scrapers; the
// excess gets 503 instead of piling up goroutines and buffers.
const maxConcurrentScrapes = 2

// probeBuckets span a local TCP connect (sub-millisecond) to the longest
// sensible probe timeout.
var probeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds podvisor's own registry: the Go and process collectors, the
// probe measurements it receives as a supervisor.Observer, and anything
// added with Register. The per-process metrics are not stored here; they
// are read from a snapshot at each scrape (see Gatherer), so they can never
// drift from /status.
//
// Metrics exists before the supervisor (which reports probes to it), and the
// supervisor is the snapshot source; hence the source is bound later, per
// handler, rather than in the constructor.
type Metrics struct {
	reg           *prometheus.Registry
	probeDuration *prometheus.HistogramVec
	probeFailures *prometheus.CounterVec
	sampler       Sampler // per-process resources, read at scrape and status time
	reloads       *prometheus.CounterVec
}

var _ supervisor.Observer = (*Metrics)(nil)

// NewMetrics returns Metrics with a fresh registry; nothing is registered
// with prometheus.DefaultRegisterer.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		probeDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "podvisor_probe_duration_seconds",
			Help:    "Duration of readiness (probe=\"ready\") and liveness (probe=\"live\") probe attempts.",
			Buckets: probeBuckets,
		}, []string{"process", "probe"}),
		probeFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podvisor_probe_failures_total",
			Help: "Probe attempts that failed, by process and probe kind.",
		}, []string{"process", "probe"}),
		sampler: resources.New(os.Getpid(), resourceMaxAge),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "podvisor_reloads_total",
			Help: "Config reloads (podvisor reload or SIGHUP) by result: applied, invalid (the new config has errors; nothing changed) or refused (during teardown).",
		}, []string{"result"}),
	}
	for _, r := range []string{"applied", "invalid", "refused"} {
		m.reloads.WithLabelValues(r) // every series exists at 0
	}
	m.reg.MustRegister(
		m.reloads,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.probeDuration,
		m.probeFailures,
	)
	return m
}

// ProbeObserved records one probe attempt. It does not block beyond a short
// internal lock, as supervisor.Observer requires.
func (m *Metrics) ProbeObserved(process, probe string, d time.Duration, ok bool) {
	m.probeDuration.WithLabelValues(process, probe).Observe(d.Seconds())
	// Touch the counter on success too, so the series exists at 0 and a
	// rate() over it is defined before the first failure.
	c := m.probeFailures.WithLabelValues(process, probe)
	if !ok {
		c.Inc()
	}
}

// ReloadObserved counts one reload attempt by its result.
func (m *Metrics) ReloadObserved(result string) {
	m.reloads.WithLabelValues(result).Inc()
}

// Register adds a collector from elsewhere in podvisor (for example a log
// line counter) to the registry served on /metrics.
func (m *Metrics) Register(c prometheus.Collector) error {
	return m.reg.Register(c)
}

// Gatherer returns everything /metrics serves: m's registry plus the
// per-process metrics read from snapshot at every gather.
func (m *Metrics) Gatherer(snapshot func() supervisor.Snapshot) prometheus.Gatherer {
	procs := prometheus.NewRegistry()
	procs.MustRegister(newSnapshotCollector(snapshot), newResourceCollector(snapshot, m.sampler))
	return prometheus.Gatherers{m.reg, procs}
}

func (m *Metrics) handler(snapshot func() supervisor.Snapshot, log *slog.Logger) http.Handler {
	return promhttp.HandlerFor(m.Gatherer(snapshot), promhttp.HandlerOpts{
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelError),
		// One bad series must not hide every other metric from a scrape.
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: maxConcurrentScrapes,
	})
}

// snapshotCollector turns a snapshot into const metrics at scrape time.
type snapshotCollector struct {
	snapshot      func() supervisor.Snapshot
	ready         *prometheus.Desc
	up            *prometheus.Desc
	procReady     *prometheus.Desc
	restarts      *prometheus.Desc
	lastExit      *prometheus.Desc
	startDuration *prometheus.Desc
	ruleMatches   *prometheus.Desc
	watchdog      *prometheus.Desc
	schedRuns     *prometheus.Desc
	schedSkipped  *prometheus.Desc
}

func newSnapshotCollector(snapshot func() supervisor.Snapshot) *snapshotCollector {
	proc := []string{"process"}
	return &snapshotCollector{
		snapshot: snapshot,
		ready: prometheus.NewDesc("podvisor_ready",
			"1 when podvisor is ready (what /readyz answers 200 for), else 0.", nil, nil),
		up: prometheus.NewDesc("podvisor_process_up",
			"1 while a child of the process is alive, else 0.", proc, nil),
		procReady: prometheus.NewDesc("podvisor_process_ready",
			"1 when the process is ready (or completed, for a oneshot or job), else 0.", proc, nil),
		restarts: prometheus.NewDesc("podvisor_process_restarts_total",
			"Times the process has been restarted.", proc, nil),
		lastExit: prometheus.NewDesc("podvisor_process_last_exit_code",
			"Exit code of the last exit (128+N for signal N); absent until the process first exits.", proc, nil),
		startDuration: prometheus.NewDesc("podvisor_process_start_duration_seconds",
			"Time from spawn to ready of the last start; absent until the process is first ready.", proc, nil),
		ruleMatches: prometheus.NewDesc("podvisor_process_rule_matches_total",
			"Exits decided by a restart.rules rule; reason is the rule, as \"rule N (ACTION)\".", []string{"process", "reason"}, nil),
		watchdog: prometheus.NewDesc("podvisor_process_watchdog_failures_total",
			"Missed WATCHDOG=1 deadlines and WATCHDOG=trigger messages; each stops the process as a failed liveness check.", proc, nil),
		schedRuns: prometheus.NewDesc("podvisor_process_scheduled_runs_total",
			"Runs of a scheduled process started by its ticks.", proc, nil),
		schedSkipped: prometheus.NewDesc("podvisor_process_scheduled_skipped_total",
			"Ticks of a scheduled process skipped because the last run was still going (concurrency: forbid).", proc, nil),
	}
}

func (c *snapshotCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.ready
	ch <- c.up
	ch <- c.procReady
	ch <- c.restarts
	ch <- c.lastExit
	ch <- c.startDuration
	ch <- c.ruleMatches
	ch <- c.watchdog
	ch <- c.schedRuns
	ch <- c.schedSkipped
}

func (c *snapshotCollector) Collect(ch chan<- prometheus.Metric) {
	snap := c.snapshot()
	ch <- constMetric(c.ready, prometheus.GaugeValue, boolValue(isReady(snap)))
	for _, p := range snap.Processes {
		ch <- constMetric(c.up, prometheus.GaugeValue, boolValue(p.Up), p.Name)
		ch <- constMetric(c.procReady, prometheus.GaugeValue, boolValue(p.Ready), p.Name)
		ch <- constMetric(c.restarts, prometheus.CounterValue, float64(p.Restarts), p.Name)
		if p.ExitCode != nil {
			ch <- constMetric(c.lastExit, prometheus.GaugeValue, float64(*p.ExitCode), p.Name)
		}
		if p.StartDuration > 0 {
			ch <- constMetric(c.startDuration, prometheus.GaugeValue, p.StartDuration.Seconds(), p.Name)
		}
		ch <- constMetric(c.watchdog, prometheus.CounterValue, float64(p.WatchdogFailures), p.Name)
		if !p.NextRun.IsZero() {
			ch <- constMetric(c.schedRuns, prometheus.CounterValue, float64(p.ScheduledRuns), p.Name)
			ch <- constMetric(c.schedSkipped, prometheus.CounterValue, float64(p.SkippedRuns), p.Name)
		}
		for reason, n := range p.RuleMatches {
			ch <- constMetric(c.ruleMatches, prometheus.CounterValue, float64(n), p.Name, reason)
		}
	}
}

// constMetric reports a bad label value (say, invalid UTF-8) as an invalid
// metric, which fails that one series instead of panicking the scrape.
func constMetric(d *prometheus.Desc, t prometheus.ValueType, v float64, labels ...string) prometheus.Metric {
	m, err := prometheus.NewConstMetric(d, t, v, labels...)
	if err != nil {
		return prometheus.NewInvalidMetric(d, err)
	}
	return m
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Sampler returns the resource sampler /status and the metrics use, for
// the event stream's resources frames (one /proc walk serves them all).
func (m *Metrics) Sampler() Sampler { return m.sampler }
