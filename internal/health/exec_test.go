package health

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustExec(t *testing.T, argv ...string) Checker {
	t.Helper()
	c, err := NewExecChecker(reaper, argv, nil, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestExec(t *testing.T) {
	tests := []struct {
		name   string
		argv   []string
		ok     bool
		detail string
	}{
		{"success", []string{"true"}, true, "exit code 0"},
		{"success with output", []string{"sh", "-c", "echo fine"}, true, "exit code 0: fine"},
		{"failure", []string{"false"}, false, "exit code 1"},
		{"failure with output", []string{"sh", "-c", "echo not yet >&2; exit 3"}, false, "exit code 3: not yet"},
		{"not found", []string{"/nonexistent/probe"}, false, "no such file"},
		{"runs in dir", []string{"sh", "-c", "test -d . && pwd"}, true, "exit code 0: /"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := attempt(mustExec(t, tt.argv...), 5*time.Second)
			if r.OK != tt.ok || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %+v, want OK=%v with %q", r, tt.ok, tt.detail)
			}
		})
	}
}

func TestExecDir(t *testing.T) {
	dir := t.TempDir()
	c, err := NewExecChecker(reaper, []string{"pwd"}, nil, dir)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, 5*time.Second); !r.OK || r.Detail != "exit code 0: "+dir {
		t.Errorf("got %+v, want it run in %s", r, dir)
	}
}

func TestExecOutputBounded(t *testing.T) {
	r, _ := attempt(mustExec(t, "sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exit 1"), 5*time.Second)
	if r.OK || !strings.HasPrefix(r.Detail, "exit code 1: xxx") {
		t.Fatalf("got %.60q..., want exit code 1 with the output", r.Detail)
	}
	if len(r.Detail) > maxExecOutput+len("exit code 1: ...") {
		t.Errorf("Detail is %d bytes, want at most ~%d", len(r.Detail), maxExecOutput)
	}
}

// A hanging probe is cut at the timeout and its whole process group dies,
// including a grandchild.
func TestExecTimeoutKillsGroup(t *testing.T) {
	pidFile := filepath.Join(t.TempDir(), "pid")
	c := mustExec(t, "sh", "-c", "sleep 30 & echo $! > "+pidFile+"; wait")
	r, took := attempt(c, 300*time.Millisecond)
	if r.OK || !strings.HasPrefix(r.Detail, "timeout after 300ms") {
		t.Errorf("got %+v, want timeout after 300ms", r)
	}
	if took > 2*time.Second {
		t.Errorf("took %s with a 300ms timeout", took)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 2*time.Second, "the sleep grandchild is gone", func() bool { return gone(pid) })
}

// A probe that exits while a background child holds its output gives its
// result at once, not when the child lets go of the pipe (FAULTS C2).
func TestExecBackgroundChildHoldsOutput(t *testing.T) {
	r, took := attempt(mustExec(t, "sh", "-c", "sleep 30 & exit 1"), 10*time.Second)
	if r.OK || !strings.HasPrefix(r.Detail, "exit code 1") {
		t.Errorf("got %+v, want exit code 1", r)
	}
	if took > 3*time.Second {
		t.Errorf("took %s: the result waited for the background child", took)
	}
}

func TestNewExecCheckerErrors(t *testing.T) {
	if _, err := NewExecChecker(nil, []string{"true"}, nil, ""); err == nil {
		t.Error("accepted a nil runner")
	}
	if _, err := NewExecChecker(reaper, nil, nil, ""); err == nil {
		t.Error("accepted an empty command")
	}
}
