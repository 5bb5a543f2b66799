package server

import (
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/podvisor/podvisor/internal/metrics"
	"github.com/podvisor/podvisor/internal/observe"
	"github.com/podvisor/podvisor/internal/resources"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// maxConcurrentScrapes bounds /metrics work under a flood of scrapers; the
// excess gets 503 instead of piling up goroutines and buffers.
const maxConcurrentScrapes = 2

// probeBuckets span a local TCP connect (sub-millisecond) to the longest
// sensible probe timeout.
var probeBuckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// Metrics holds podvisor's own metrics: the Go runtime and process
// figures, the probe measurements and reloads it observes (OnEvent), and
// anything added with Register. The per-process metrics are not stored
// here; they are read from a snapshot at each scrape (see Collectors), so
// they can never drift from /status.
//
// Metrics exists before the supervisor (which reports probes to it), and the
// supervisor is the snapshot source; hence the source is bound later, per
// handler, rather than in the constructor.
type Metrics struct {
	probeDuration *metrics.HistogramVec
	probeFailures *metrics.CounterVec
	sampler       Sampler // per-process resources, read at scrape and status time
	reloads       *metrics.CounterVec

	mu    sync.Mutex
	extra []metrics.Collector
}

// NewMetrics returns empty Metrics.
func NewMetrics() *Metrics {
	m := &Metrics{
		probeDuration: metrics.NewHistogramVec("podvisor_probe_duration_seconds",
			"Duration of readiness (probe=\"ready\"), liveness (probe=\"live\") and startup (probe=\"startup\") probe attempts.",
			probeBuckets, "process", "probe"),
		probeFailures: metrics.NewCounterVec("podvisor_probe_failures_total",
			"Probe attempts that failed, by process and probe kind.", "process", "probe"),
		sampler: resources.New(os.Getpid(), resourceMaxAge),
		reloads: metrics.NewCounterVec("podvisor_reloads_total",
			"Config reloads (podvisor reload or SIGHUP) by result: applied, invalid (the new config has errors; nothing changed) or refused (during teardown).",
			"result"),
	}
	for _, r := range []string{"applied", "invalid", "refused"} {
		m.reloads.Add(0, r) // every series exists at 0
	}
	return m
}

// OnEvent counts what the supervisor reports that the metrics show (its
// Options.OnEvent): probe attempts, from probe goroutines, and reloads,
// from the loop. It does not block beyond a short internal lock.
func (m *Metrics) OnEvent(e observe.Event) {
	switch e.Kind {
	case observe.Probe:
		m.ProbeObserved(e.Process, e.Probe, e.Took, e.OK)
	case observe.Reload:
		m.ReloadObserved(e.Why)
	}
}

// ProbeObserved records one probe attempt.
func (m *Metrics) ProbeObserved(process, probe string, d time.Duration, ok bool) {
	m.probeDuration.Observe(d.Seconds(), process, probe)
	// Count on success too, so the series exists at 0 and a rate() over it
	// is defined before the first failure.
	var failed float64
	if !ok {
		failed = 1
	}
	m.probeFailures.Add(failed, process, probe)
}

// ReloadObserved counts one reload attempt by its result.
func (m *Metrics) ReloadObserved(result string) {
	m.reloads.Add(1, result)
}

// Register adds a collector from elsewhere in podvisor (for example the
// dropped log lines) to what /metrics serves. Registering the same
// collector twice is an error.
func (m *Metrics) Register(c metrics.Collector) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, have := range m.extra {
		if have == c {
			return errors.New("metrics: collector already registered")
		}
	}
	m.extra = append(m.extra, c)
	return nil
}

// Collectors returns everything /metrics serves: podvisor's own figures,
// the registered collectors, and the per-process metrics read from
// snapshot at every scrape.
func (m *Metrics) Collectors(snapshot func() supervisor.Snapshot) func() []metrics.Collector {
	procs := metrics.CollectorFunc(func(w *metrics.Writer) {
		snap := snapshot()
		writeSnapshot(w, snap)
		writeResources(w, snap, m.sampler)
	})
	return func() []metrics.Collector {
		m.mu.Lock()
		extra := slices.Clone(m.extra)
		m.mu.Unlock()
		return append([]metrics.Collector{metrics.CollectorFunc(metrics.Runtime), m.reloads, m.probeDuration, m.probeFailures, procs}, extra...)
	}
}

// Scrape writes one exposition of everything /metrics serves, with what it
// dropped.
func (m *Metrics) Scrape(snapshot func() supervisor.Snapshot) ([]byte, []error) {
	var w metrics.Writer
	for _, c := range m.Collectors(snapshot)() {
		c.Collect(&w)
	}
	return w.Bytes(), w.Errs()
}

func (m *Metrics) handler(snapshot func() supervisor.Snapshot, log *slog.Logger) http.Handler {
	return metrics.Handler(m.Collectors(snapshot), maxConcurrentScrapes, func(errs []error) {
		// One bad series must not hide every other metric from a scrape;
		// it is dropped and said here.
		for _, err := range errs {
			log.Error("metrics: " + err.Error())
		}
	})
}

// writeSnapshot writes the per-process families of snap. Each family is
// one block, as the text format requires.
func writeSnapshot(w *metrics.Writer, snap supervisor.Snapshot) {
	w.Family("podvisor_ready", metrics.Gauge, "1 when podvisor is ready (what /readyz answers 200 for), else 0.")
	w.Sample("", boolValue(isReady(snap)))
	perProcess := func(name, typ, help string, value func(p *supervisor.ProcessSnapshot) (float64, bool)) {
		w.Family(name, typ, help)
		for i := range snap.Processes {
			p := &snap.Processes[i]
			if v, ok := value(p); ok {
				w.Sample("", v, "process", p.Name)
			}
		}
	}
	perProcess("podvisor_process_up", metrics.Gauge, "1 while a child of the process is alive, else 0.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) { return boolValue(p.Up), true })
	perProcess("podvisor_process_ready", metrics.Gauge, "1 when the process is ready (or completed, for a oneshot or job), else 0.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) { return boolValue(p.Ready), true })
	perProcess("podvisor_process_restarts_total", metrics.Counter, "Times the process has been restarted.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) { return float64(p.Restarts), true })
	perProcess("podvisor_process_last_exit_code", metrics.Gauge, "Exit code of the last exit (128+N for signal N); absent until the process first exits.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) {
			if p.ExitCode == nil {
				return 0, false
			}
			return float64(*p.ExitCode), true
		})
	perProcess("podvisor_process_start_duration_seconds", metrics.Gauge, "Time from spawn to ready of the last start; absent until the process is first ready.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) {
			return p.StartDuration.Seconds(), p.StartDuration > 0
		})
	perProcess("podvisor_process_watchdog_failures_total", metrics.Counter, "Missed WATCHDOG=1 deadlines and WATCHDOG=trigger messages; each stops the process as a failed liveness check.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) { return float64(p.WatchdogFailures), true })
	perProcess("podvisor_process_scheduled_runs_total", metrics.Counter, "Runs of a scheduled process started by its ticks.",
		func(p *supervisor.ProcessSnapshot) (float64, bool) {
			return float64(p.ScheduledRuns), !p.NextRun.IsZero()
		})
	perProcess("podvisor_process_scheduled_skipped_total", metrics.Counter, "Ticks of a scheduled process skipped because the last run was still going (concurrency: forbid).",
		func(p *supervisor.ProcessSnapshot) (float64, bool) {
			return float64(p.SkippedRuns), !p.NextRun.IsZero()
		})
	w.Family("podvisor_process_rule_matches_total", metrics.Counter, "Exits decided by a restart.rules rule; reason is the rule, as \"rule N (ACTION)\".")
	for _, p := range snap.Processes {
		for _, reason := range slices.Sorted(maps.Keys(p.RuleMatches)) {
			w.Sample("", float64(p.RuleMatches[reason]), "process", p.Name, "reason", reason)
		}
	}
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

// UseCgroups takes the memory and CPU of processes in a cgroup of their
// own from it (docs/resources.md).
func (m *Metrics) UseCgroups(src resources.CgroupSource) {
	if s, ok := m.sampler.(*resources.Sampler); ok {
		s.UseCgroups(src)
	}
}
