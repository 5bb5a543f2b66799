package proc

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

func TestExitCodeFromStatus(t *testing.T) {
	// Raw wait statuses as the kernel encodes them: exit code in bits 8-15,
	// terminating signal in bits 0-6, core dump flag 0x80.
	tests := []struct {
		status syscall.WaitStatus
		code   int
		sig    syscall.Signal
	}{
		{0, 0, 0},
		{1 << 8, 1, 0},
		{255 << 8, 255, 0},
		{syscall.WaitStatus(syscall.SIGKILL), 137, syscall.SIGKILL},
		{syscall.WaitStatus(syscall.SIGTERM), 143, syscall.SIGTERM},
		{syscall.WaitStatus(syscall.SIGSEGV) | 0x80, 139, syscall.SIGSEGV},
	}
	for _, tt := range tests {
		ex := Exit{Status: tt.status}
		if got := ex.Code(); got != tt.code {
			t.Errorf("status %#x: Code() = %d, want %d", uint32(tt.status), got, tt.code)
		}
		if got := ex.Signal(); got != tt.sig {
			t.Errorf("status %#x: Signal() = %v, want %v", uint32(tt.status), got, tt.sig)
		}
	}
}

func TestExitCodesOfRealProcesses(t *testing.T) {
	r := newReaper(t)
	type tc struct {
		script string
		want   int
	}
	var tests []tc
	for _, code := range []int{0, 1, 2, 42, 126, 127, 128, 200, 254, 255} {
		tests = append(tests, tc{fmt.Sprintf("exit %d", code), code})
	}
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGTERM, syscall.SIGSEGV, syscall.SIGABRT, syscall.SIGINT} {
		tests = append(tests, tc{fmt.Sprintf("kill -%d $$", int(sig)), 128 + int(sig)})
	}
	for _, tt := range tests {
		c := spawn(t, r, Spec{Argv: []string{"/bin/sh", "-c", tt.script}})
		ex := wait(t, c, 5*time.Second)
		if ex.Code() != tt.want || ex.Pid != c.Pid() {
			t.Errorf("%q: exit pid %d code %d (status %#x), want pid %d code %d",
				tt.script, ex.Pid, ex.Code(), uint32(ex.Status), c.Pid(), tt.want)
		}
	}
}
