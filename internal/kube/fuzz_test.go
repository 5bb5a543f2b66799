package kube

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// FuzzTranslate: whatever bytes a manifest holds, decoding and translating
// it never panics, and a translation that succeeds is a procs.yaml that
// podvisor loads (kube play calls any other outcome its own bug).
func FuzzTranslate(f *testing.F) {
	seeds, _ := filepath.Glob(filepath.Join("..", "..", "test", "kube", "testdata", "*.yaml"))
	for _, s := range seeds {
		if b, err := os.ReadFile(s); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: a, command: [x]}]}\n"))
	f.Add([]byte("kind: List\nitems: [{kind: Pod, metadata: {name: p, uid: x, resourceVersion: '1'}, spec: {containers: [{name: a, command: [sh, -c, 'true']}]}, status: {phase: Running}}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 64<<10 {
			return
		}
		m, err := Decode("pod.yaml", data)
		if err != nil {
			return
		}
		for _, w := range m.Workloads {
			res, err := Translate(m, w, Options{Self: "/usr/bin/podvisor", VolumeDir: "/nonexistent/volumes",
				ImageCommands: map[string]string{"nginx:1.27": "exec nginx"}})
			if err != nil {
				continue
			}
			procs := config.Write(res.Procs)
			if _, err := config.Parse("procs.yaml", procs, nil); err != nil {
				t.Fatalf("the translation of %s %q does not load: %v\nmanifest:\n%s\nprocs.yaml:\n%s", w.Kind, w.Name, err, data, procs)
			}
		}
	})
}
