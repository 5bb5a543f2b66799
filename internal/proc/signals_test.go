package proc

import (
	"fmt"
	"os"
	"syscall"
	"testing"
	"time"
)

// sigbit is the bit of sig in a /proc/<pid>/status signal mask.
func sigbit(sig syscall.Signal) uint64 { return 1 << (uint(sig) - 1) }

// B19/G4: podvisor started with signals blocked and ignored (the "dirty"
// helper blocks TERM, USR1 and PIPE and ignores HUP, INT and PIPE, then execs
// a mini supervisor) still gives its children an empty mask and default
// dispositions. The same child started by plain os/exec shows the inherited
// state, which proves the harness really made it dirty.
func TestChildrenGetCleanSignalState(t *testing.T) {
	dirtyMask := sigbit(syscall.SIGUSR1) | sigbit(syscall.SIGPIPE) // TERM: the Go runtime unblocks it itself
	dirtyIgn := sigbit(syscall.SIGHUP) | sigbit(syscall.SIGINT)    // PIPE: the runtime installs a handler
	tests := []struct {
		sanitize bool
		wantIgn  uint64 // of our child
	}{
		{sanitize: true, wantIgn: 0},
		{sanitize: false, wantIgn: dirtyIgn}, // why Sanitize exists
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("sanitize=%v", tt.sanitize), func(t *testing.T) {
			r := newReaper(t)
			args := []string{"dirty", "mini"}
			if tt.sanitize {
				args = append(args, "sanitize")
			}
			mini, out := spawnOut(t, r, Spec{Argv: helperArgv(args[0], args[1:]...)})
			line, err := out.ReadString('\n')
			if err != nil {
				t.Fatalf("mini supervisor: %v", err)
			}
			var ours, plain int
			if _, err := fmt.Sscanf(line, "pids %d %d", &ours, &plain); err != nil {
				t.Fatalf("mini supervisor said %q", line)
			}
			ob, oi := masks(t, ours)
			pb, pi := masks(t, plain)
			t.Logf("ours: SigBlk %#x SigIgn %#x; plain os/exec: SigBlk %#x SigIgn %#x", ob, oi, pb, pi)
			if ob != 0 {
				t.Errorf("our child's SigBlk = %#x, want 0", ob)
			}
			// Without Sanitize whatever the test itself inherited (GNU make
			// ignores 32 and 33 for its recipes) shows through as well.
			if tt.sanitize && oi != 0 || !tt.sanitize && oi&tt.wantIgn != tt.wantIgn {
				t.Errorf("our child's SigIgn = %#x, want %#x", oi, tt.wantIgn)
			}
			if pb&dirtyMask != dirtyMask {
				t.Errorf("plain child's SigBlk = %#x: the harness did not block %#x (or Go now clears it)", pb, dirtyMask)
			}
			if !tt.sanitize && pi&dirtyIgn != dirtyIgn {
				t.Errorf("plain child's SigIgn = %#x: the harness did not ignore %#x (or Go now resets it)", pi, dirtyIgn)
			}
			_ = mini.Signal(syscall.SIGKILL) // its children die by their death signal
			wait(t, mini, 5*time.Second)
		})
	}
}

func masks(t *testing.T, pid int) (blocked, ignored uint64) {
	t.Helper()
	var err error
	if blocked, err = statusMask(pid, "SigBlk"); err != nil {
		t.Fatal(err)
	}
	if ignored, err = statusMask(pid, "SigIgn"); err != nil {
		t.Fatal(err)
	}
	return blocked, ignored
}

// D10/G5: after Sanitize a write to a broken stdout fails with EPIPE instead of
// killing the process with SIGPIPE.
func TestSanitizeSurvivesBrokenStdout(t *testing.T) {
	r := newReaper(t)
	for _, tt := range []struct {
		sanitize bool
		want     int
	}{{true, 0}, {false, 128 + int(syscall.SIGPIPE)}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close() // broken before the child writes
		args := []string{}
		if tt.sanitize {
			args = append(args, "sanitize")
		}
		c := spawn(t, r, Spec{Argv: helperArgv("sigpipe", args...), Stdout: pw})
		pw.Close()
		if ex := wait(t, c, 5*time.Second); ex.Code() != tt.want {
			t.Errorf("sanitize=%v: exit %d, want %d", tt.sanitize, ex.Code(), tt.want)
		}
	}
}

func TestSanitizeReportsNothingWhenClean(t *testing.T) {
	ign, err := ignoredSignals()
	if err != nil {
		t.Fatal(err)
	}
	if len(ign) != 0 {
		t.Skipf("test binary started with ignored signals %v", ign)
	}
	reset, err := Sanitize()
	if err != nil || len(reset) != 0 {
		t.Fatalf("Sanitize() = %v, %v; want nothing to reset", reset, err)
	}
}
