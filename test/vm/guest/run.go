package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/api"
	"golang.org/x/sys/unix"
)

const (
	cgroupRoot = "/sys/fs/cgroup"
	work       = "/tmp/vm"
)

// syncBuffer collects a podvisor's output (os/exec's copy goroutine
// writes, the scenario reads), each line stamped with the guest's
// milliseconds since the run began (podvisor's own lines have no time).
type syncBuffer struct {
	mu    sync.Mutex // guards b and begun
	b     bytes.Buffer
	begun time.Time
	mid   bool // the last write ended inside a line
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := time.Since(s.begun).Milliseconds()
	for line := range bytes.Lines(p) {
		if !s.mid {
			fmt.Fprintf(&s.b, "[+%dms] ", ms)
		}
		s.b.Write(line)
		s.mid = !bytes.HasSuffix(line, []byte("\n"))
	}
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// run is a podvisor the guest started in a cgroup of its own.
type run struct {
	name string
	dir  string // its cgroup, /sys/fs/cgroup/vm-NAME
	port int
	sock string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed when it has exited; then err is set
	err  error
}

// newCgroup makes /sys/fs/cgroup/vm-NAME (as a container runtime makes a
// container's cgroup) and returns it.
func newCgroup(name string) (string, error) {
	dir := filepath.Join(cgroupRoot, "vm-"+name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", err
	}
	return dir, nil
}

// startIn starts argv with its first instruction inside the cgroup dir
// (CLONE_INTO_CGROUP).
func startIn(dir string, cmd *exec.Cmd) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: fd}
	return cmd.Start()
}

// startRun launches a podvisor and waits until /livez answers.
func startRun(name, dir string, port int, config string) (*run, error) {
	r, err := launch(name, dir, port, config)
	if err != nil {
		return nil, err
	}
	if !eventually(60*time.Second, func() bool {
		code, _, _ := r.get("/livez")
		return code == 200 || r.exited()
	}) || r.exited() {
		r.kill()
		return nil, fmt.Errorf("podvisor %s never answered /livez: %v\n%s", name, r.err, r.out)
	}
	return r, nil
}

// launch writes procs.yaml for a podvisor (config plus its listen address
// and control socket) and starts it in the cgroup dir.
func launch(name, dir string, port int, config string) (*run, error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, err
	}
	r := &run{name: name, dir: dir, port: port, sock: filepath.Join(work, name+".sock"), out: &syncBuffer{begun: time.Now()}, done: make(chan struct{})}
	cfg := filepath.Join(work, name+".yaml")
	full := fmt.Sprintf("listen: \"127.0.0.1:%d\"\ncontrol: %s\n%s", port, r.sock, config)
	if err := os.WriteFile(cfg, []byte(full), 0o644); err != nil {
		return nil, err
	}
	r.cmd = exec.Command("/bin/podvisor", "run", "-c", cfg)
	r.cmd.Stdout, r.cmd.Stderr = r.out, r.out
	if err := startIn(dir, r.cmd); err != nil {
		return nil, fmt.Errorf("start podvisor in %s: %w", dir, err)
	}
	go func() {
		r.err = r.cmd.Wait()
		close(r.done)
	}()
	return r, nil
}

func (r *run) exited() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

func (r *run) get(path string) (int, []byte, error) { return get(r.port, path) }

func get(port int, path string) (int, []byte, error) {
	// A request that takes longer than this is a failure whatever it answers.
	c := http.Client{Timeout: 10 * time.Second}
	resp, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d%s", port, path))
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// status reads /status of the podvisor on port.
func status(port int) (api.Status, error) {
	var st api.Status
	code, b, err := get(port, "/status")
	if err != nil {
		return st, err
	}
	if code != 200 {
		return st, fmt.Errorf("/status answered %d: %s", code, b)
	}
	return st, json.Unmarshal(b, &st)
}

// process is name's entry in the /status of the podvisor on port.
func process(port int, name string) (api.ProcessStatus, error) {
	st, err := status(port)
	if err != nil {
		return api.ProcessStatus{}, err
	}
	for _, p := range st.Processes {
		if p.Name == name {
			return p, nil
		}
	}
	return api.ProcessStatus{}, fmt.Errorf("no process %s in /status", name)
}

// running waits until every name runs, and returns their pids.
func (r *run) running(names ...string) (map[string]int, error) {
	pids := map[string]int{}
	var last error
	ok := eventually(60*time.Second, func() bool {
		for _, n := range names {
			p, err := process(r.port, n)
			if err != nil || p.State != "running" || p.Pid == 0 {
				last = fmt.Errorf("%s: %+v %v", n, p, err)
				return false
			}
			pids[n] = p.Pid
		}
		return true
	})
	if !ok {
		return nil, fmt.Errorf("not running: %v", last)
	}
	return pids, nil
}

// stop sends podvisor SIGTERM and waits for its exit; it returns how long
// that took.
func (r *run) stop(timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	fmt.Fprintf(r.out, "(guest: SIGTERM)\n")
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil && !r.exited() {
		return 0, err
	}
	select {
	case <-r.done:
		return time.Since(start), r.err
	case <-time.After(timeout):
		r.kill()
		return time.Since(start), fmt.Errorf("podvisor %s still running %v after SIGTERM", r.name, timeout)
	}
}

func (r *run) kill() {
	_ = r.cmd.Process.Kill()
	<-r.done
}

// clean removes the run's cgroup after its podvisor exited: podvisor's
// leaf, then the directory. A process cgroup podvisor left behind is an
// error.
func (r *run) clean() error {
	left, _ := filepath.Glob(filepath.Join(r.dir, "p-*"))
	_ = os.Remove(filepath.Join(r.dir, "podvisor"))
	if err := os.Remove(r.dir); err != nil {
		return fmt.Errorf("remove %s: %v (left: %v)", r.dir, err, left)
	}
	if len(left) > 0 {
		return fmt.Errorf("podvisor left process cgroups: %v", left)
	}
	return nil
}

// ctl runs `podvisor ARGS --control SOCK` against the run.
func (r *run) ctl(args ...string) (string, error) {
	out, err := exec.Command("/bin/podvisor", append(args, "--control", r.sock)...).CombinedOutput()
	return string(out), err
}

// eventually polls cond every 20 ms until it holds or timeout passes.
func eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond) // the poll period
	}
	return true
}

// read is a cgroup or /proc file's contents, trimmed.
func read(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return strings.TrimSpace(string(b))
}

// key is the number after k in a flat keyed file ("usage_usec 123").
func key(path, k string) (int64, error) {
	for line := range strings.Lines(read(path)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == k {
			return strconv.ParseInt(f[1], 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no %s in %q", path, k, read(path))
}

// want compares a file's trimmed contents.
func want(path, value string) error {
	if got := read(path); got != value {
		return fmt.Errorf("%s is %q, want %q", path, got, value)
	}
	return nil
}

// ownCgroup is the v2 cgroup of pid, from /proc/PID/cgroup.
func ownCgroup(pid int) string {
	return strings.TrimPrefix(read(fmt.Sprintf("/proc/%d/cgroup", pid)), "0::")
}

// pidsWith lists the processes with arg among their arguments.
func pidsWith(arg string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		for a := range strings.SplitSeq(string(b), "\x00") {
			if a == arg && alive(pid) {
				out = append(out, pid)
				break
			}
		}
	}
	return out
}

// alive is true while pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}

// onePid waits for exactly one process with arg and returns it.
func onePid(arg string) (int, error) {
	var pids []int
	if !eventually(30*time.Second, func() bool { pids = pidsWith(arg); return len(pids) == 1 }) {
		return 0, fmt.Errorf("processes with argument %s: %v, want one", arg, pids)
	}
	return pids[0], nil
}

// stat is field n (1-based, as proc(5) numbers them) of /proc/PID/stat.
func stat(pid, n int) (int, error) {
	s := read(fmt.Sprintf("/proc/%d/stat", pid))
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, errors.New(s)
	}
	f := strings.Fields(s[i+1:])
	if n-3 >= len(f) || n < 3 {
		return 0, fmt.Errorf("/proc/%d/stat: no field %d", pid, n)
	}
	return strconv.Atoi(f[n-3])
}
