package metrics

import (
	"runtime"

	"github.com/podvisor/podvisor/internal/resources"
)

// figure is one unlabelled sample of its own family.
type figure struct {
	name, typ, help string
	v               float64
}

// Runtime writes podvisor's own Go runtime and process figures under the
// names the Prometheus Go client uses (go_*, process_*), so dashboards built
// for any Go program work on podvisor too. A scrape costs one
// runtime.ReadMemStats and a read of /proc/self.
func Runtime(w *Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Family("go_info", Gauge, "Information about the Go environment.")
	w.Sample("", 1, "version", runtime.Version())
	gauges := []figure{
		{"go_goroutines", Gauge, "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())},
		{"go_memstats_alloc_bytes", Gauge, "Number of bytes allocated in heap and currently in use.", float64(ms.HeapAlloc)},
		{"go_memstats_heap_inuse_bytes", Gauge, "Number of heap bytes that are in use.", float64(ms.HeapInuse)},
		{"go_memstats_heap_objects", Gauge, "Number of currently allocated objects.", float64(ms.HeapObjects)},
		{"go_memstats_next_gc_bytes", Gauge, "Number of heap bytes when next garbage collection will take place.", float64(ms.NextGC)},
		{"go_memstats_sys_bytes", Gauge, "Number of bytes obtained from system.", float64(ms.Sys)},
		{"go_gc_cycles_total", Counter, "Completed garbage collection cycles.", float64(ms.NumGC)},
	}
	self, err := resources.ReadSelf()
	if err != nil {
		w.errs = append(w.errs, err)
	} else {
		gauges = append(gauges, []figure{
			{"go_threads", Gauge, "Number of OS threads created.", float64(self.Threads)},
			{"process_cpu_seconds_total", Counter, "Total user and system CPU time spent in seconds.", self.CPUSeconds},
			{"process_resident_memory_bytes", Gauge, "Resident memory size in bytes.", float64(self.RSSBytes)},
			{"process_virtual_memory_bytes", Gauge, "Virtual memory size in bytes.", float64(self.VirtualBytes)},
			{"process_open_fds", Gauge, "Number of open file descriptors.", float64(self.OpenFDs)},
			{"process_max_fds", Gauge, "Maximum number of open file descriptors.", float64(self.MaxFDs)},
		}...)
		if !self.StartTime.IsZero() { // /proc/stat's btime was readable
			gauges = append(gauges, figure{"process_start_time_seconds", Gauge, "Start time of the process since unix epoch in seconds.", float64(self.StartTime.Unix())})
		}
	}
	for _, g := range gauges {
		w.Family(g.name, g.typ, g.help)
		w.Sample("", g.v)
	}
}
