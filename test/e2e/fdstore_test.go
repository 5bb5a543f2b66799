package e2e

// The fd store (issue 27), black-box: a process hands podvisor an fd with
// FDSTORE=1 and gets it back in its next incarnation through LISTEN_FDS.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fdStoreHelperEnv selects the fd store helper mode of the test binary: it
// records "got CONTENT" (what the fd named state that it received holds, or
// "none"), replaces the stored state with a memfd holding "pid-PID"
// (FDSTOREREMOVE=1, then FDSTORE=1 with FDNAME=state), sends READY=1 and
// exits 0 on SIGTERM.
const fdStoreHelperEnv = "E2E_FDSTORE_HELPER"

func init() {
	if os.Getenv(fdStoreHelperEnv) == "1" {
		fdStoreHelper()
	}
}

func fdStoreHelper() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	pid := os.Getpid()
	got := "none"
	if os.Getenv("LISTEN_PID") == strconv.Itoa(pid) {
		for i, name := range strings.Split(os.Getenv("LISTEN_FDNAMES"), ":") {
			if name == "state" {
				b, _ := io.ReadAll(io.NewSectionReader(os.NewFile(uintptr(3+i), name), 0, 64))
				got = string(b)
			}
		}
	}
	if f, err := os.OpenFile(os.Getenv("E2E_EVENTS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
		fmt.Fprintf(f, "web got %d %s\n", time.Now().UnixNano(), got)
		f.Close()
	}
	mem, err := unix.MemfdCreate("state", unix.MFD_CLOEXEC)
	if err != nil {
		os.Exit(1)
	}
	unix.Write(mem, []byte("pid-"+strconv.Itoa(pid)))
	send := notifySender()
	send("FDSTOREREMOVE=1\nFDNAME=state", nil)
	send("FDSTORE=1\nFDNAME=state", unix.UnixRights(mem))
	send("READY=1", nil)
	<-term
	os.Exit(0)
}

func TestFDStore_StateSurvivesRestarts(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`
control: "{{dir}}/c.sock"
processes:
  web:
    command: [%s]
    env: {%s: "1"}
    fd_store_max: 1
    ready: {notify: systemd}
`, self, fdStoreHelperEnv)
	r := startPodvisor(t, conf, withHTTP())
	eventually(t, 20*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "web"); return st == "running" }, "web not running")
	var pids []int
	for range 2 {
		_, _, pid, _ := statusOf(t, r, "web")
		pids = append(pids, pid)
		mustCtl(t, r, 0, "restart", "web")
	}
	evs := filterEvents(r.ReadEvents(t), "web", "got")
	want := []string{"none", fmt.Sprintf("pid-%d", pids[0]), fmt.Sprintf("pid-%d", pids[1])}
	if len(evs) != 3 {
		t.Fatalf("events:\n%s", readFile(r.Events))
	}
	for i, e := range evs {
		if e.Rest != want[i] {
			t.Fatalf("incarnation %d got %q, want %q\n%s", i, e.Rest, want[i], readFile(r.Events))
		}
	}
	var st struct {
		Processes []struct {
			Name      string `json:"name"`
			StoredFDs int    `json:"stored_fds"`
		} `json:"processes"`
	}
	getJSON(t, r, "/status", &st)
	if len(st.Processes) != 1 || st.Processes[0].StoredFDs != 1 {
		t.Fatalf("/status: %+v", st)
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(30 * time.Second)
	wantCode(t, r, code, 0)
}
