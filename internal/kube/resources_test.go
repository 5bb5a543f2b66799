package kube

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// TestContainerResources: limits.memory and limits.cpu become memory max
// and cpu max, requests.cpu the cgroup v2 weight the kubelet would give
// (shares = milliCPU*1024/1000, mapped linearly onto 1..10000); a missing
// request takes the limit, as the API server defaults it. The expected
// numbers come from apimachinery's own reading of the same manifest.
func TestContainerResources(t *testing.T) {
	const manifest = `apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: web
    command: [web]
    resources: {limits: {cpu: 1500m, memory: 64Mi}, requests: {cpu: 250m, memory: 32Mi}}
  - name: batch
    command: [batch]
    resources: {limits: {cpu: "2"}}
  - name: free
    command: [free]
`
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict([]byte(manifest), &pod); err != nil {
		t.Fatal(err)
	}
	res := play(t, manifest, Options{})
	byName := map[string]int{}
	for i, p := range res.Procs.Processes {
		byName[p.Name] = i
	}
	for _, c := range pod.Spec.Containers {
		p := res.Procs.Processes[byName[c.Name]]
		lim, req := c.Resources.Limits, c.Resources.Requests
		if len(lim) == 0 {
			if p.Resources != nil {
				t.Errorf("%s: resources %+v, want none", c.Name, p.Resources)
			}
			continue
		}
		if p.Resources == nil || p.Resources.CPU == nil {
			t.Fatalf("%s: no cpu resources", c.Name)
		}
		if got, want := p.Resources.CPU.Max, lim.Cpu().MilliValue(); got != want {
			t.Errorf("%s: cpu max %dm, want %dm", c.Name, got, want)
		}
		request := lim.Cpu().MilliValue()
		if q, ok := req[corev1.ResourceCPU]; ok {
			request = q.MilliValue()
		}
		shares := request * 1024 / 1000
		if got, want := p.Resources.CPU.Weight, 1+(shares-2)*9999/262142; got != want {
			t.Errorf("%s: cpu weight %d, want %d (shares %d)", c.Name, got, want, shares)
		}
		if m, ok := lim[corev1.ResourceMemory]; ok && (p.Resources.Memory == nil || p.Resources.Memory.Max != m.Value()) {
			t.Errorf("%s: memory %+v, want max %d", c.Name, p.Resources.Memory, m.Value())
		}
	}
	if w := cpuWeight(1); w != 1 {
		t.Errorf("the least request gives weight %d, want 1 (shares clamp at 2)", w)
	}
	if w := cpuWeight(1 << 40); w != 10000 {
		t.Errorf("a huge request gives weight %d, want 10000", w)
	}
}

// TestGenerateResourcesRoundTrip: kube generate writes a process's
// resources as its container's, and kube play reads them back the same:
// memory and cpu max exactly, the weight through the CPU request whose
// weight it is; limits, which the API cannot hold, are warned about.
func TestGenerateResourcesRoundTrip(t *testing.T) {
	cfg, raw := genConfig(t, "processes:\n  app:\n    command: [app]\n    limits: {nofile: 1024}\n    resources: {memory: {max: 300Mi}, cpu: {max: 750m, weight: 333}}\n")
	g, err := Generate(cfg, GenerateOptions{Name: "web", Shape: "sidecars", Raw: raw})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(g.Warnings, func(w string) bool { return strings.Contains(w, "limits") }) {
		t.Errorf("no warning about limits in %q", g.Warnings)
	}
	m, err := Decode("gen.yaml", g.Manifest)
	if err != nil {
		t.Fatalf("%v\n%s", err, g.Manifest)
	}
	w, _ := m.Pick("")
	res, err := Translate(m, w, Options{VolumeDir: "/v"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.Procs.Processes[0].Resources
	if r == nil || r.Memory == nil || r.Memory.Max != 300<<20 || r.CPU == nil || r.CPU.Max != 750 || r.CPU.Weight != 333 {
		t.Errorf("played back %+v %+v from\n%s", r.Memory, r.CPU, g.Manifest)
	}
	for w := int64(1); w <= 10000; w += 37 {
		if got := cpuWeight(weightMilliCPU(w)); got != w {
			t.Fatalf("weight %d: request %dm gives weight %d", w, weightMilliCPU(w), got)
		}
	}
}
