package metrics

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/podvisor/podvisor/internal/resources"
)

// parse reads an exposition with the Prometheus libraries' own text parser,
// the reader a Prometheus server uses for this format.
func parse(t testing.TB, b []byte) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the exposition: %v\n%s", err, b)
	}
	return fams
}

func labelsOf(m *dto.Metric) map[string]string {
	out := map[string]string{}
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

func TestWriterEscapesAndParses(t *testing.T) {
	var w Writer
	hostile := "a\"b\nc} x=\"1\\"
	w.Family("podvisor_test_up", Gauge, "Help with \\ and \n and \"quotes\".")
	w.Sample("", 1, "process", hostile)
	w.Sample("", 0.25, "process", "web")
	w.Sample("", math.Inf(1), "process", "inf")
	w.Sample("", 1234567890123, "process", "big")
	fams := parse(t, w.Bytes())
	f := fams["podvisor_test_up"]
	if f == nil || f.GetType() != dto.MetricType_GAUGE {
		t.Fatalf("family missing or mistyped: %v", fams)
	}
	if got, want := f.GetHelp(), "Help with \\ and \n and \"quotes\"."; got != want {
		t.Errorf("help = %q, want %q", got, want)
	}
	want := map[string]float64{hostile: 1, "web": 0.25, "inf": math.Inf(1), "big": 1234567890123}
	if len(f.GetMetric()) != len(want) {
		t.Fatalf("%d samples, want %d", len(f.GetMetric()), len(want))
	}
	for _, m := range f.GetMetric() {
		name := labelsOf(m)["process"]
		if v, ok := want[name]; !ok || m.GetGauge().GetValue() != v {
			t.Errorf("sample %q = %v, want %v (known %v)", name, m.GetGauge().GetValue(), v, ok)
		}
	}
	if len(w.Errs()) != 0 {
		t.Errorf("errors: %v", w.Errs())
	}
}

func TestWriterDropsWhatItCannotWrite(t *testing.T) {
	var w Writer
	w.Family("podvisor_a", Counter, "A.")
	w.Sample("", 1, "process", "bad\xff")
	w.Sample("", 2, "process", "good")
	w.Family("podvisor_a", Counter, "A again.")
	w.Sample("", 3, "process", "twice")
	w.Family("bad name", Gauge, "B.")
	w.Sample("", 4)
	out := string(w.Bytes())
	if strings.Contains(out, "bad\xff") || strings.Contains(out, "twice") || strings.Contains(out, "bad name") {
		t.Errorf("dropped series reached the exposition:\n%s", out)
	}
	if !strings.Contains(out, `podvisor_a{process="good"} 2`) {
		t.Errorf("the good series was lost with the bad one:\n%s", out)
	}
	if n := len(w.Errs()); n != 3 {
		t.Errorf("%d errors, want 3 (bad UTF-8, family twice, bad name): %v", n, w.Errs())
	}
	parse(t, w.Bytes())
}

func TestHistogramBucketsAreCumulativeAndInclusive(t *testing.T) {
	h := NewHistogramVec("podvisor_test_seconds", "Test.", []float64{0.001, 0.01, 1}, "process", "probe")
	for _, v := range []float64{0.0005, 0.001, 0.005, 0.5, 3} {
		h.Observe(v, "db", "ready")
	}
	h.Observe(0.01, "web", "live")
	var w Writer
	h.Collect(&w)
	out := string(w.Bytes())
	// Labels by name, le last, as the Prometheus client writes them.
	for _, line := range []string{
		`podvisor_test_seconds_bucket{probe="ready",process="db",le="0.001"} 2`,
		`podvisor_test_seconds_bucket{probe="ready",process="db",le="0.01"} 3`,
		`podvisor_test_seconds_bucket{probe="ready",process="db",le="1"} 4`,
		`podvisor_test_seconds_bucket{probe="ready",process="db",le="+Inf"} 5`,
		`podvisor_test_seconds_count{probe="ready",process="db"} 5`,
		`podvisor_test_seconds_bucket{probe="live",process="web",le="0.001"} 0`,
		`podvisor_test_seconds_bucket{probe="live",process="web",le="0.01"} 1`,
	} {
		if !strings.Contains(out, line+"\n") {
			t.Errorf("missing %s in\n%s", line, out)
		}
	}
	f := parse(t, w.Bytes())["podvisor_test_seconds"]
	for _, m := range f.GetMetric() {
		if labelsOf(m)["process"] == "db" && math.Abs(m.GetHistogram().GetSampleSum()-3.5065) > 1e-9 {
			t.Errorf("sum = %v, want 3.5065", m.GetHistogram().GetSampleSum())
		}
	}
}

func TestCounterVecSeriesAtZeroAndSorted(t *testing.T) {
	c := NewCounterVec("podvisor_test_total", "Test.", "result")
	c.Add(0, "refused")
	c.Add(1, "applied")
	c.Add(2, "applied")
	var w Writer
	c.Collect(&w)
	want := "# HELP podvisor_test_total Test.\n# TYPE podvisor_test_total counter\n" +
		"podvisor_test_total{result=\"applied\"} 3\npodvisor_test_total{result=\"refused\"} 0\n"
	if got := string(w.Bytes()); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if c.Value("applied") != 3 || c.Value("nope") != 0 {
		t.Errorf("Value: %v %v", c.Value("applied"), c.Value("nope"))
	}
}

func TestRuntimeFigures(t *testing.T) {
	// Spin until the kernel has charged this process a clock tick, so the
	// CPU counter has something to show.
	for deadline := time.Now().Add(10 * time.Second); ; {
		if s, err := resources.ReadSelf(); err == nil && s.CPUSeconds > 0 || time.Now().After(deadline) {
			break
		}
	}
	var w Writer
	Runtime(&w)
	if len(w.Errs()) != 0 {
		t.Fatal(w.Errs())
	}
	fams := parse(t, w.Bytes())
	for _, name := range []string{"go_goroutines", "go_threads", "process_resident_memory_bytes",
		"process_cpu_seconds_total", "process_open_fds", "process_max_fds", "process_start_time_seconds"} {
		f := fams[name]
		if f == nil || len(f.GetMetric()) != 1 {
			t.Errorf("%s missing", name)
			continue
		}
		m := f.GetMetric()[0]
		if v := m.GetGauge().GetValue() + m.GetCounter().GetValue(); v <= 0 {
			t.Errorf("%s = %v, want > 0", name, v)
		}
	}
	problems, err := promlint.New(bytes.NewReader(w.Bytes())).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// FuzzWriter: whatever names, help, label values and values go in, the
// exposition parses, and every sample written comes back with its labels
// and value.
func FuzzWriter(f *testing.F) {
	f.Add("podvisor_x", "help \\ \n", "a\"b\nc", 1.5)
	f.Add("x", "", "", math.NaN())
	f.Add("9bad", "h", "\xff", -2.0)
	f.Fuzz(func(t *testing.T, name, help, value string, v float64) {
		if name == "podvisor_tail" {
			return
		}
		var w Writer
		w.Family(name, Gauge, help)
		w.Sample("", v, "process", value)
		w.Family("podvisor_tail", Counter, "Tail.")
		w.Sample("", 7)
		fams := parse(t, w.Bytes())
		if tail := fams["podvisor_tail"]; tail == nil || tail.GetMetric()[0].GetCounter().GetValue() != 7 {
			t.Fatalf("a family after a fuzzed one was lost:\n%s", w.Bytes())
		}
		f, ok := fams[name]
		if !ok {
			if len(w.Errs()) == 0 {
				t.Fatalf("family %q missing without an error:\n%s", name, w.Bytes())
			}
			return
		}
		// The parser skips the blanks that separate the name from the text.
		if f.GetHelp() != strings.TrimLeft(help, " \t") {
			t.Fatalf("help %q came back as %q", help, f.GetHelp())
		}
		if len(f.GetMetric()) == 0 {
			if len(w.Errs()) == 0 {
				t.Fatalf("sample dropped without an error")
			}
			return
		}
		m := f.GetMetric()[0]
		got := m.GetGauge().GetValue()
		if labelsOf(m)["process"] != value || !(got == v || math.IsNaN(got) && math.IsNaN(v)) {
			t.Fatalf("sample {process=%q} %v came back as %v %v", value, v, labelsOf(m), got)
		}
	})
}
