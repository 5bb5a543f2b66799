package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/resources"
)

// fakeSampler answers with fixed usage and counts calls.
type fakeSampler struct {
	calls atomic.Int32
	roots atomic.Value // []resources.Root of the last call
	usage map[string]resources.Usage
}

func (f *fakeSampler) Sample(roots []resources.Root) map[string]resources.Usage {
	f.calls.Add(1)
	f.roots.Store(roots)
	return f.usage
}

func withSampler(s Sampler) *Metrics {
	m := NewMetrics()
	m.sampler = s
	return m
}

func TestResourcesInStatus(t *testing.T) {
	fs := &fakeSampler{usage: map[string]resources.Usage{
		"db": {CPUSeconds: 3.5, RSSBytes: 52 << 20, OpenFDs: 12, Threads: 7, Processes: 4},
	}}
	snap := fourStates()
	snap.Processes[1].OOMKills = 2
	h := New(newFakeSource(snap), withSampler(fs), Options{})
	rec := do(t, h, http.MethodGet, "/status")
	var st Status
	if err := json.Unmarshal(rec.Body.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	// Only the running process is asked about.
	if got := fs.roots.Load().([]resources.Root); len(got) != 1 || got[0] != (resources.Root{Name: "db", Pid: 4242}) {
		t.Errorf("sampled roots %v, want only db 4242", got)
	}
	for _, p := range st.Processes {
		switch p.Name {
		case "db":
			want := Resources{CPUSeconds: 3.5, MemoryBytes: 52 << 20, OpenFDs: 12, Threads: 7, Processes: 4}
			if p.Resources == nil || *p.Resources != want {
				t.Errorf("db resources %+v, want %+v", p.Resources, want)
			}
		case "cache":
			if p.OOMKills != 2 {
				t.Errorf("cache oom_kills = %d, want 2", p.OOMKills)
			}
			fallthrough
		default:
			if p.Resources != nil {
				t.Errorf("%s (not running) has resources %+v", p.Name, p.Resources)
			}
		}
	}

	// The table: 3.5 s of CPU over 35 s up is 10%.
	var b strings.Builder
	if err := WriteStatusTable(&b, st, t0.Add(35*time.Second)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "4242  10.0  52.0M") {
		t.Errorf("table lacks db's CPU%% and MEM:\n%s", b.String())
	}
}

func TestResourceMetrics(t *testing.T) {
	fs := &fakeSampler{usage: map[string]resources.Usage{
		"db": {CPUSeconds: 3.5, RSSBytes: 1000, OpenFDs: 12, Threads: 7, Processes: 4},
	}}
	snap := fourStates()
	snap.Processes[1].OOMKills = 1
	body := scrape(t, newFakeSource(snap), withSampler(fs))
	for _, want := range []string{
		`podvisor_process_cpu_seconds_total{process="db"} 3.5`,
		`podvisor_process_resident_memory_bytes{process="db"} 1000`,
		`podvisor_process_open_fds{process="db"} 12`,
		`podvisor_process_threads{process="db"} 7`,
		`podvisor_process_oom_kills_total{process="cache"} 1`,
		`podvisor_process_oom_kills_total{process="api"} 0`,
	} {
		if !strings.Contains(body, want+"\n") {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	if strings.Contains(body, `podvisor_process_cpu_seconds_total{process="api"}`) {
		t.Error("a process that does not run has a CPU series")
	}
	promtoolCheck(t, body)
}

func TestMemText(t *testing.T) {
	for _, c := range []struct {
		b    uint64
		want string
	}{{512 << 10, "512K"}, {52<<20 + 300<<10, "52.3M"}, {3 << 30, "3.0G"}} {
		if got := memText(ProcessStatus{Resources: &Resources{MemoryBytes: c.b}}); got != c.want {
			t.Errorf("memText(%d) = %q, want %q", c.b, got, c.want)
		}
	}
	if got := memText(ProcessStatus{}); got != "-" {
		t.Errorf("no resources: %q", got)
	}
}
