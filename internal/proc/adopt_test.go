package proc

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestAdoptRefuses: init, podvisor itself, a pid registered already (a
// spawned child) and a pid that is gone cannot be adopted.
func TestAdoptRefuses(t *testing.T) {
	r := newReaper(t)
	c, err := Spawn(r, Spec{Argv: []string{"/bin/sleep", "1000"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{1, os.Getpid(), c.Pid()} {
		if _, err := r.Adopt(pid, nil); err == nil {
			t.Errorf("Adopt(%d) accepted", pid)
		}
	}
	c.Signal(SIGKILL)
	wait(t, c, 10*time.Second)
	if _, err := r.Adopt(c.Pid(), nil); err == nil || !strings.Contains(err.Error(), "process already finished") {
		t.Errorf("Adopt of a reaped pid: %v", err)
	}
}

// TestReadInfo: the test's own parent and uid.
func TestReadInfo(t *testing.T) {
	info, err := ReadInfo(os.Getpid())
	if err != nil || info.PPid != os.Getppid() || info.UID != os.Getuid() {
		t.Fatalf("ReadInfo(self) = %+v, %v", info, err)
	}
}
