package config

import (
	"math"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
)

func TestResources(t *testing.T) {
	cfg := mustParse(t, `processes:
  db:
    command: x
    resources:
      memory: {max: 512Mi, high: 400M}
      cpu: {max: 500m, weight: 200}
      pids: {max: 64}
  web: {command: x, resources: {cpu: {max: 0.25}, memory: {max: 1G}}}
  plain: {command: x}
  empty: {command: x, resources: {}}
`, nil)
	db := cfg.Processes["db"].Resources
	want := Resources{Memory: &MemoryResources{Max: 512 << 20, High: 400e6}, CPU: &CPUResources{Max: 500, Weight: 200}, Pids: &PidsResources{Max: 64}}
	if db == nil || *db.Memory != *want.Memory || *db.CPU != *want.CPU || *db.Pids != *want.Pids {
		t.Fatalf("db resources = %+v", db)
	}
	web := cfg.Processes["web"].Resources
	if web == nil || web.CPU.Max != 250 || web.Memory.Max != 1e9 || web.Pids != nil {
		t.Errorf("web resources = %+v", web)
	}
	for _, name := range []string{"plain", "empty"} {
		if r := cfg.Processes[name].Resources; r != nil {
			t.Errorf("%s resources = %+v, want nil (no cgroup)", name, r)
		}
	}
	runErrCases(t, []errCase{
		{name: "MB", src: "processes:\n  a: {command: x, resources: {memory: {max: 512MB}}}\n",
			pos: "procs.yaml:2:45", path: "processes.a.resources.memory.max", msg: `invalid quantity "512MB": unknown suffix "MB": Kubernetes writes Mi (1024s) or M (1000s)`, hint: "512Mi"},
		{name: "plain bytes", src: "processes:\n  a: {command: x, resources: {memory: {max: 512}}}\n",
			pos: "procs.yaml:2:45", path: "processes.a.resources.memory.max", msg: "below the least of 1Mi", hint: "did you mean 512Mi?"},
		{name: "high above max", src: "processes:\n  a: {command: x, resources: {memory: {max: 1Gi, high: 2Gi}}}\n",
			pos: "procs.yaml:2:56", path: "processes.a.resources.memory.high", msg: "memory.high 2Gi is above memory.max 1Gi", hint: "below max"},
		{name: "negative", src: "processes:\n  a: {command: x, resources: {cpu: {max: -1}}}\n",
			pos: "procs.yaml:2:42", path: "processes.a.resources.cpu.max", msg: "negative"},
		{name: "zero cpu", src: "processes:\n  a: {command: x, resources: {cpu: {max: 0}}}\n",
			pos: "procs.yaml:2:42", path: "processes.a.resources.cpu.max", msg: "cpu max 0 is zero"},
		{name: "weight", src: "processes:\n  a: {command: x, resources: {cpu: {weight: 0}}}\n",
			pos: "procs.yaml:2:45", path: "processes.a.resources.cpu.weight", msg: "cpu weight 0 is out of range 1..10000"},
		{name: "pids", src: "processes:\n  a: {command: x, resources: {pids: {max: 0}}}\n",
			pos: "procs.yaml:2:43", path: "processes.a.resources.pids.max", msg: "pids max 0 is out of range"},
		{name: "unknown key", src: "processes:\n  a: {command: x, resources: {memroy: {max: 1Gi}}}\n",
			pos: "procs.yaml:2:31", path: "processes.a.resources", msg: `unknown key "memroy"`, hint: "memory"},
		{name: "a list", src: "processes:\n  a: {command: x, resources: {memory: {max: [1]}}}\n",
			pos: "procs.yaml:2:45", path: "processes.a.resources.memory.max", msg: "expected a memory size such as 512Mi, got a list"},
	})
}

func TestParseQuantity(t *testing.T) {
	for _, c := range []struct {
		in            string
		bytes, millis int64
	}{
		{"512Mi", 512 << 20, 512 << 20 * 1000}, {"1G", 1e9, 1e12}, {"500m", 1, 500}, {"0.5", 1, 500},
		{".5", 1, 500}, {"5.", 5, 5000}, {"+2", 2, 2000}, {"1e3", 1000, 1e6}, {"1E-3", 1, 1},
		{"1.5Gi", 3 << 29, 3 << 29 * 1000}, {"100n", 1, 1}, {"0", 0, 0}, {"2k", 2000, 2e6}, {"8Ei", 0, 0},
	} {
		b, err := ParseBytes(c.in)
		if c.in == "8Ei" {
			if err == nil || !strings.Contains(err.Error(), "too large") {
				t.Errorf("ParseBytes(8Ei) = %d, %v; want too large", b, err)
			}
			continue
		}
		m, err2 := ParseMillicores(c.in)
		if err != nil || err2 != nil || b != c.bytes || m != c.millis {
			t.Errorf("%q: bytes %d, %v; millis %d, %v; want %d, %d", c.in, b, err, m, err2, c.bytes, c.millis)
		}
	}
	for _, in := range []string{"", "-1", "1K", "1 Mi", "Mi", ".", "1e", "1e3.5", "1Mi5", "0x10", strings.Repeat("1", 65)} {
		if v, err := ParseBytes(in); err == nil {
			t.Errorf("ParseBytes(%q) = %d, want an error", in, v)
		}
	}
}

func TestFormatQuantity(t *testing.T) {
	for v, want := range map[int64]string{512 << 20: "512Mi", 1e9: "1G", 1500: "1500", 3 << 29: "1536Mi", 1 << 60: "1Ei"} {
		if got := FormatBytes(v); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", v, got, want)
		}
		if back, err := ParseBytes(want); err != nil || back != v {
			t.Errorf("ParseBytes(FormatBytes(%d)) = %d, %v", v, back, err)
		}
	}
	for v, want := range map[int64]string{500: "500m", 2000: "2", 1: "1m"} {
		if got := FormatMillicores(v); got != want {
			t.Errorf("FormatMillicores(%d) = %q, want %q", v, got, want)
		}
	}
}

// FuzzQuantity checks the parser against Kubernetes' own
// (k8s.io/apimachinery's resource.ParseQuantity, used here only): where
// both accept a non-negative amount that fits, they agree on its value in
// bytes and in millicores, both rounded up.
func FuzzQuantity(f *testing.F) {
	for _, s := range []string{"512Mi", "1G", "500m", "0.5", ".5", "5.", "+2", "1e3", "1E-3", "1.5Gi", "100n", "0", "1K", "12u", "3E", "1e+2", "0.0001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b, errB := ParseBytes(s)
		m, errM := ParseMillicores(s)
		if errB == nil && b < 0 || errM == nil && m < 0 {
			t.Fatalf("%q: negative %d / %d", s, b, m)
		}
		if errB != nil && !strings.HasPrefix(errB.Error(), "invalid quantity ") {
			t.Fatalf("%q: error %q does not say what it is", s, errB)
		}
		q, err := resource.ParseQuantity(s)
		if err != nil || q.Sign() < 0 || strings.HasPrefix(s, "-") {
			if errB == nil && err != nil {
				t.Fatalf("%q: accepted (%d bytes), Kubernetes refuses it: %v", s, b, err)
			}
			return
		}
		if q.Cmp(*resource.NewQuantity(math.MaxInt64/1024, resource.DecimalSI)) > 0 {
			return // near int64's end the two may differ on overflow
		}
		if errB != nil && !q.IsZero() { // Kubernetes reads "+" and "." as 0; no limit may be 0 anyway
			t.Fatalf("%q: refused (%v), Kubernetes reads %s", s, errB, q.String())
		}
		if errB == nil && b != q.Value() {
			t.Fatalf("%q: %d bytes, Kubernetes %d", s, b, q.Value())
		}
		if errM == nil && m != q.MilliValue() && q.Cmp(*resource.NewQuantity(math.MaxInt64/1_000_000, resource.DecimalSI)) < 0 {
			t.Fatalf("%q: %d millicores, Kubernetes %d", s, m, q.MilliValue())
		}
	})
}

// TestWriteResources: what Write makes of resources loads back the same.
func TestWriteResources(t *testing.T) {
	r := &Resources{Memory: &MemoryResources{Max: 3 << 29, High: 1e9}, CPU: &CPUResources{Max: 250, Weight: 50}, Pids: &PidsResources{Max: 100}}
	doc := &Document{Processes: []*Process{{Name: "a", Command: []string{"x"}, Resources: r}, {Name: "b", Command: []string{"y"}, Resources: &Resources{CPU: &CPUResources{Weight: 7}}}}}
	out := Write(doc)
	if !strings.Contains(string(out), "memory: {max: 1536Mi, high: 1G}") {
		t.Errorf("written:\n%s", out)
	}
	cfg := mustParse(t, string(out), nil)
	got := cfg.Processes["a"].Resources
	if got == nil || *got.Memory != *r.Memory || *got.CPU != *r.CPU || *got.Pids != *r.Pids {
		t.Errorf("loaded back %+v from\n%s", got, out)
	}
	if got := cfg.Processes["b"].Resources; got == nil || got.Memory != nil || got.CPU.Weight != 7 {
		t.Errorf("b loaded back %+v", got)
	}
}
