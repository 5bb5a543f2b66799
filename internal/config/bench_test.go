package config

import (
	"fmt"
	"strings"
	"testing"
)

// genConfig writes n processes, each with a command, a depends_on on one or
// two earlier processes, and a ready probe.
func genConfig(n int) []byte {
	var b strings.Builder
	b.Grow(n * 120)
	b.WriteString("version: 1\nprocesses:\n")
	for i := range n {
		fmt.Fprintf(&b, "  p%d:\n    command: [/usr/bin/server, --port, \"%d\"]\n", i, 10000+i%50000)
		switch {
		case i >= 3:
			fmt.Fprintf(&b, "    depends_on: [p%d, p%d]\n", i/2, i-1)
		case i >= 1:
			fmt.Fprintf(&b, "    depends_on: [p%d]\n", i-1)
		}
		fmt.Fprintf(&b, "    ready:\n      tcp: 127.0.0.1:%d\n", 10000+i%50000)
	}
	return []byte(b.String())
}

func BenchmarkParse(b *testing.B) {
	for _, n := range []int{1_000, MaxProcesses} {
		data := genConfig(n)
		b.Run(fmt.Sprintf("procs=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				cfg, err := Parse(testFile, data, nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(cfg.Names) != n {
					b.Fatalf("%d processes", len(cfg.Names))
				}
			}
		})
	}
}

// TestGenConfig keeps the benchmark input valid and the right size.
func TestGenConfig(t *testing.T) {
	cfg, err := Parse(testFile, genConfig(50), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Names) != 50 || len(cfg.Processes["p49"].DependsOn) != 2 || cfg.Processes["p49"].Ready == nil {
		t.Errorf("unexpected config: %d processes, p49 %+v", len(cfg.Names), cfg.Processes["p49"])
	}
}
