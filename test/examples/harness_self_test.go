package examples

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHarnessSeesZombiesAndSurvivors shows that the checks the example tests
// rely on can fail: a PID 1 that never reaps leaves a zombie that zombies()
// sees, and survivors() finds both the namespace's members and a process
// outside it that inherited STATE_DIR.
func TestHarnessSeesZombiesAndSurvivors(t *testing.T) {
	needPIDNamespace(t)
	// sh forks `true`, then becomes sleep, which never reaps it.
	r := startInNamespace(t, []string{"sh", "-c", "true & exec sleep 300"})
	eventually(t, 5*time.Second, func() bool { return len(r.zombies()) == 1 }, func() string {
		return fmt.Sprintf("zombies %v, want the one sleep never reaps", r.zombies())
	})

	outsider := exec.Command("sleep", "300")
	outsider.Env = append(os.Environ(), "STATE_DIR="+r.State)
	if err := outsider.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = outsider.Process.Kill()
		_ = outsider.Wait()
	}()
	pids := func() []string {
		var ps []string
		for _, s := range r.survivors() {
			ps = append(ps, strings.Fields(s)[0])
		}
		return ps
	}
	if got := pids(); !slices.Contains(got, strconv.Itoa(r.Pid)) || !slices.Contains(got, strconv.Itoa(outsider.Process.Pid)) {
		t.Errorf("survivors %v: want PID 1 (%d) and the outsider (%d)", got, r.Pid, outsider.Process.Pid)
	}

	// The exit code is unshare's own after its child's SIGKILL (1), not 137.
	r.Signal(syscall.SIGKILL)
	r.Wait(10 * time.Second)
	if got := pids(); !slices.Equal(got, []string{strconv.Itoa(outsider.Process.Pid)}) {
		t.Errorf("survivors after the namespace died: %v, want only the outsider %d", got, outsider.Process.Pid)
	}
}
