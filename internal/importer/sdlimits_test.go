package importer

import (
	"bufio"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/proc"
)

// TestImportedLimitsRun: a unit's Limit*= and UMask=, imported and loaded
// back from the written procs.yaml, are what its program starts with, read
// from the program's own /proc/self/limits and /proc/self/status (the
// spawn's real path: the test binary is the exec shim).
func TestImportedLimitsRun(t *testing.T) {
	p, out := importUnit(t, "[Service]\nExecStart=/bin/sh -c 'cat /proc/self/limits /proc/self/status'\nLimitNOFILE=1000:2000\nLimitCORE=0\nLimitCPU=2min\nUMask=0077\n", "x")
	spec := proc.Spec{Argv: p.Command}
	for _, l := range p.Limits {
		res, _ := proc.RlimitResource(l.Name)
		spec.Rlimits = append(spec.Rlimits, proc.Rlimit{Name: l.Name, Resource: res, Soft: l.Soft, Hard: l.Hard})
	}
	spec.Umask = p.Umask
	r := proc.NewReaper(nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go r.Run(ctx)
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	spec.Stdout = pw
	c, err := proc.Spawn(r, spec)
	pw.Close()
	if err != nil {
		t.Fatalf("spawn: %v\n%s", err, out)
	}
	got := map[string]bool{}
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		got[strings.Join(strings.Fields(sc.Text()), " ")] = true
	}
	select {
	case <-c.Done():
	case <-time.After(time.Minute):
		t.Fatal("the imported process did not exit")
	}
	for _, want := range []string{"Max open files 1000 2000 files", "Max core file size 0 0 bytes", "Max cpu time 120 120 seconds", "Umask: 0077"} {
		if !got[want] {
			t.Errorf("the imported process did not start with %q\n--- procs.yaml\n%s", want, out)
		}
	}
}
