package metrics

import (
	"runtime"

	"github.com/podvisor/podvisor/internal/resources"
)

// Runtime writes podvisor's own Go runtime and process figures under the
// names the Prometheus Go client uses (go_*, process_*), so dashboards built
// for any Go program work on podvisor too. A scrape costs one
// runtime.ReadMemStats and a read of /proc/self.
func Runtime(w *Writer) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w.Family("go_goroutines", Gauge, "Number of goroutines that currently exist.")
	w.Sample("", float64(runtime.NumGoroutine()))
	w.Family("go_info", Gauge, "Information about the Go environment.")
	w.Sample("", 1, "version", runtime.Version())
	w.Family("go_memstats_alloc_bytes", Gauge, "Number of bytes allocated in heap and currently in use.")
	w.Sample("", float64(ms.HeapAlloc))
	w.Family("go_memstats_heap_inuse_bytes", Gauge, "Number of heap bytes that are in use.")
	w.Sample("", float64(ms.HeapInuse))
	w.Family("go_memstats_heap_objects", Gauge, "Number of currently allocated objects.")
	w.Sample("", float64(ms.HeapObjects))
	w.Family("go_memstats_next_gc_bytes", Gauge, "Number of heap bytes when next garbage collection will take place.")
	w.Sample("", float64(ms.NextGC))
	w.Family("go_memstats_sys_bytes", Gauge, "Number of bytes obtained from system.")
	w.Sample("", float64(ms.Sys))
	w.Family("go_gc_cycles_total", Counter, "Completed garbage collection cycles.")
	w.Sample("", float64(ms.NumGC))

	self, err := resources.ReadSelf()
	if err != nil {
		w.errs = append(w.errs, err)
		return
	}
	w.Family("go_threads", Gauge, "Number of OS threads created.")
	w.Sample("", float64(self.Threads))
	w.Family("process_cpu_seconds_total", Counter, "Total user and system CPU time spent in seconds.")
	w.Sample("", self.CPUSeconds)
	w.Family("process_resident_memory_bytes", Gauge, "Resident memory size in bytes.")
	w.Sample("", float64(self.RSSBytes))
	w.Family("process_virtual_memory_bytes", Gauge, "Virtual memory size in bytes.")
	w.Sample("", float64(self.VirtualBytes))
	w.Family("process_open_fds", Gauge, "Number of open file descriptors.")
	w.Sample("", float64(self.OpenFDs))
	if self.MaxFDs > 0 {
		w.Family("process_max_fds", Gauge, "Maximum number of open file descriptors.")
		w.Sample("", float64(self.MaxFDs))
	}
	if !self.StartTime.IsZero() {
		w.Family("process_start_time_seconds", Gauge, "Start time of the process since unix epoch in seconds.")
		w.Sample("", float64(self.StartTime.Unix()))
	}
}
