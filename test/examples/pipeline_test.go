package examples

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPipelineJob runs examples/pipeline-job three times: on a good commit
// podvisor exits 0, on a broken one with the test step's code (3 failed
// tests), and stopped by SIGTERM while the test step runs, with 0 after
// stopping the step before the shipper. Each time the steps run in order,
// the shipper is stopped only after the job has exited, and everything the
// steps wrote reaches the "collector".
func TestPipelineJob(t *testing.T) {
	needPrograms(t, "git", "git")
	needPrograms(t, "python3", "python3")
	for _, tc := range []struct {
		name      string
		env       []string
		interrupt bool   // SIGTERM once the first test passed
		code      int    // podvisor's exit code
		jobEnd    string // podvisor's message when the job ended
		last      string // the test step's last line
	}{
		{name: "passing", code: 0, jobEnd: "completed", last: "0 of 4 tests failed"},
		{name: "failing", env: []string{"PIPELINE_BUG=1"}, code: 3, jobEnd: "fatal failure", last: "3 of 4 tests failed"},
		{name: "interrupted", env: []string{"TEST_PAUSE=60"}, interrupt: true, code: 0, jobEnd: "exited", last: "stopped by podvisor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// A ship interval longer than the run: everything must go out in
			// the flush after SIGTERM, which is what is under test.
			r := startExample(t, "pipeline-job", nil, append(tc.env, "SHIP_INTERVAL=3600")...)
			if tc.interrupt {
				r.WaitIndex("test", "ok 1 - ", 30*time.Second)
				r.Signal(syscall.SIGTERM)
			}
			if code := r.Wait(60 * time.Second); code != tc.code {
				t.Fatalf("exit code %d, want %d", code, tc.code)
			}

			// Start order: each step only after the one before completed,
			// and all of them after the shipper was ready.
			r.Before(r.mustEvent("ready", "shipper"), r.Index("setup", ""), "shipper ready before setup")
			steps := []string{"setup", "clone", "build", "test"}
			for i := 1; i < len(steps); i++ {
				r.Before(r.mustEvent("completed", steps[i-1]), r.Index(steps[i], ""), steps[i-1]+" completed before "+steps[i]+" starts")
			}

			// The shipper is stopped after the job ended, and flushes then.
			jobEnd := r.mustEvent(tc.jobEnd, "test")
			r.Before(jobEnd, r.Index("shipper", "SIGTERM: shipping what is left"), "job ends before the shipper gets SIGTERM")
			flush := r.Index("shipper", "SIGTERM: flushed")
			if flush < 0 {
				t.Fatal("the shipper never flushed")
			}
			r.Before(jobEnd, flush, "job ends before the shipper is stopped")
			shipperExit, f := r.Event("exited", "shipper")
			r.Before(flush, shipperExit, "shipper flushes before it exits")
			if f["code"] != "0" {
				t.Errorf("shipper exit code %q, want 0", f["code"])
			}

			// Nothing lost: the collector got the spool byte for byte, and
			// the spool holds every line each step printed, in step order.
			spool := readFile(t, filepath.Join(r.State, "logs", "pipeline.log"))
			shipped := readFile(t, filepath.Join(r.State, "shipped.log"))
			if shipped != spool {
				t.Errorf("shipped log differs from the spool\nshipped:\n%s\nspool:\n%s", shipped, spool)
			}
			spoolLines := strings.Split(strings.TrimSuffix(spool, "\n"), "\n")
			if want := fmt.Sprintf("%d lines in 1 batches", len(spoolLines)); !strings.Contains(r.Lines()[flush].Text, want) {
				t.Errorf("shipper says %q, want %q", r.Lines()[flush].Text, want)
			}
			var want []string
			for _, s := range steps {
				for _, l := range r.Lines() {
					if l.Proc == s {
						want = append(want, s+" | "+l.Text)
					}
				}
			}
			if !slices.Equal(spoolLines, want) {
				t.Errorf("spool lines:\n%s\nwant (the steps' output in order):\n%s", strings.Join(spoolLines, "\n"), strings.Join(want, "\n"))
			}
			if !strings.HasSuffix(shipped, "test | "+tc.last+"\n") {
				t.Errorf("the test step's last line %q was not shipped last", tc.last)
			}
			r.CheckCleanTeardown()
			r.CheckGone()
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
