package e2e

// Socket activation (issue 27), black-box: podvisor holds a server's
// listening socket, so a restart, a reload that changes the command and a
// crash of the server refuse no connection under load.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// socketHelperEnv selects the HTTP server helper mode of the test binary:
// after E2E_START_DELAY of start-up work it serves "ok PID" on the socket
// podvisor passed (LISTEN_FDS, LISTEN_PID) or, without one, on E2E_LISTEN
// (with SO_REUSEPORT when E2E_REUSEPORT=1), and prints "serving". SIGTERM: a graceful shutdown
// (in-flight requests finish), exit 0. GET /crash: the same, then exit 3.
const socketHelperEnv = "E2E_SOCKET_HELPER"

func init() {
	if os.Getenv(socketHelperEnv) == "http" {
		socketHTTPHelper()
	}
}

func socketHTTPHelper() {
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	if d, err := time.ParseDuration(os.Getenv("E2E_START_DELAY")); err == nil {
		time.Sleep(d) // stands for a server's start-up work, not a wait on anything
	}
	ln, err := helperListener()
	if err != nil {
		fmt.Fprintln(os.Stderr, "listen:", err)
		os.Exit(1)
	}
	pid := os.Getpid()
	code := make(chan int, 2)
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintf(w, "ok %d\n", pid) })
	mux.HandleFunc("/crash", func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, "crashing\n")
		code <- 3
	})
	var open sync.WaitGroup // accepted connections not yet closed
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			open.Add(1)
		case http.StateClosed, http.StateHijacked:
			open.Done()
		}
	}}
	go func() {
		select {
		case <-term:
			code <- 0
		case c := <-code:
			code <- c
		}
	}()
	served := make(chan struct{})
	go func() { _ = srv.Serve(ln); close(served) }()
	fmt.Println("serving") // for a log readiness check: this incarnation, not another one on the port
	c := <-code
	// The drain: stop accepting, then answer every connection accepted so
	// far. http.Server.Shutdown alone would lose some: a connection
	// accepted while it runs has its request read and then dropped (an
	// EOF for the client). What was not accepted stays in the socket's
	// queue for the next incarnation.
	srv.SetKeepAlivesEnabled(false)
	ln.Close()
	<-served
	drained := make(chan struct{})
	go func() { open.Wait(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(10 * time.Second):
	}
	os.Exit(c)
}

// helperListener takes fd 3 as socket-activation libraries do: only if
// LISTEN_PID is this process (sd_listen_fds(3)).
func helperListener() (net.Listener, error) {
	if os.Getenv("LISTEN_PID") == strconv.Itoa(os.Getpid()) && os.Getenv("LISTEN_FDS") == "1" {
		os.Unsetenv("LISTEN_PID")
		os.Unsetenv("LISTEN_FDS")
		os.Unsetenv("LISTEN_FDNAMES")
		return net.FileListener(os.NewFile(3, "listen"))
	}
	lc := net.ListenConfig{}
	if os.Getenv("E2E_REUSEPORT") == "1" {
		lc.Control = func(_, _ string, c syscall.RawConn) error {
			var serr error
			err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
			return errors.Join(err, serr)
		}
	}
	return lc.Listen(context.Background(), "tcp", os.Getenv("E2E_LISTEN"))
}

// load sends GETs to url from workers goroutines, each on a new connection
// (no keep-alive: every request is a new connection the listener must
// accept), until stop is called. It counts answers and failures and the
// server pids that answered.
type load struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	pids       map[string]int
	firstErr   error
	worst      time.Duration
	took       []time.Duration // of every answer, for percentiles
	stop       func()
	wg         sync.WaitGroup
}

// maxLatencies bounds the memory the load's latencies take.
const maxLatencies = 1 << 20

func startLoad(url string, workers int) *load {
	ctx, cancel := context.WithCancel(context.Background())
	l := &load{pids: map[string]int{}}
	l.stop = func() { cancel(); l.wg.Wait() }
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	for range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for ctx.Err() == nil {
				t0 := time.Now()
				body, err := get(client, url)
				took := time.Since(t0)
				l.mu.Lock()
				switch {
				case err != nil:
					l.failed.Add(1)
					if l.firstErr == nil {
						l.firstErr = err
					}
				default:
					l.ok.Add(1)
					l.pids[strings.TrimSpace(strings.TrimPrefix(body, "ok "))]++
					l.worst = max(l.worst, took)
					if len(l.took) < maxLatencies {
						l.took = append(l.took, took)
					}
				}
				l.mu.Unlock()
			}
		}()
	}
	return l
}

func get(c *http.Client, url string) (string, error) {
	resp, err := c.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != 200 {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// waitRequests waits until the load has n more answers than now: the
// server answers again (a deadline, not a sleep).
func (l *load) waitRequests(t *testing.T, n int64) {
	t.Helper()
	want := l.ok.Load() + n
	eventually(t, 30*time.Second, func() bool { return l.ok.Load() >= want }, "the load got no %d more answers (ok %d, failed %d)", n, l.ok.Load(), l.failed.Load())
}

func TestSockets_NoRequestLostOnRestartReloadAndCrash(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	const conf = `
control: "{{dir}}/c.sock"
processes:
  web:
    command: [%s, %s]
    env: {E2E_SOCKET_HELPER: http, E2E_START_DELAY: 150ms}
    sockets: ["tcp://%s"]
    ready: {http: "http://%s/", start_interval: 20ms}
    restart: {policy: always, backoff: 10ms}
`
	r := startPodvisor(t, fmt.Sprintf(conf, self, "v1", addr, addr), withHTTP())
	eventually(t, 20*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "web"); return st == "running" }, "web not running")
	l := startLoad("http://"+addr+"/", 4)
	defer l.stop()
	l.waitRequests(t, 20)

	for range 3 {
		mustCtl(t, r, 0, "restart", "web")
		l.waitRequests(t, 20)
	}
	v2 := strings.ReplaceAll(fmt.Sprintf(conf, self, "v2", addr, addr), "{{dir}}", r.Dir)
	if err := os.WriteFile(r.Config, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, r, 0, "reload"); !strings.Contains(out, "command changed") {
		t.Fatalf("reload:\n%s", out)
	}
	l.waitRequests(t, 20)
	_, _, before, _ := statusOf(t, r, "web")
	if body, err := get(http.DefaultClient, "http://"+addr+"/crash"); err != nil || body != "crashing\n" {
		t.Fatalf("crash request: %q %v", body, err)
	}
	eventually(t, 20*time.Second, func() bool { st, _, pid, _ := statusOf(t, r, "web"); return st == "running" && pid != before }, "web not restarted after its crash")
	l.waitRequests(t, 20)
	l.stop()

	t.Logf("answered %d, failed %d, incarnations %d, slowest answer %v", l.ok.Load(), l.failed.Load(), len(l.pids), l.worst)
	if n := l.failed.Load(); n != 0 {
		t.Fatalf("%d requests failed (first: %v)\n%s", n, l.firstErr, r.Stdout)
	}
	if len(l.pids) < 6 {
		t.Fatalf("answers came from %d incarnations, want 6 (start, 3 restarts, reload, crash): %v", len(l.pids), l.pids)
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(30 * time.Second)
	wantCode(t, r, code, 0)
}

// A port in use fails the run before anything starts, naming the holder;
// nothing stays bound (the other socket is free again).
func TestSockets_PortInUse(t *testing.T) {
	t.Parallel()
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	free := freeAddr(t)
	conf := fmt.Sprintf(`
processes:
  web:
    command: [sh, -c, "echo started >> {{dir}}/marker"]
    sockets: ["tcp://%s", "tcp://%s"]
`, free, held.Addr())
	r := startPodvisor(t, conf)
	code, _ := r.Wait(10 * time.Second)
	wantCode(t, r, code, 1)
	want := "procs.yaml:5:" // the sockets line, with its column
	if !strings.Contains(r.Stderr.String(), want) || !strings.Contains(r.Stderr.String(), "address already in use (by pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("stderr:\n%s", r.Stderr)
	}
	if _, err := os.Stat(r.Dir + "/marker"); err == nil {
		t.Fatal("web started although a socket could not be bound")
	}
	ln, err := net.Listen("tcp", free)
	if err != nil {
		t.Fatalf("the free socket stayed bound: %v", err)
	}
	ln.Close()
}

// restart: {overlap: true} with podvisor's socket: the old incarnation
// serves until the new one printed its ready line; no request fails across
// restarts and a reload that changes the command.
func TestSockets_OverlapRestartLosesNoRequest(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	const conf = `
control: "{{dir}}/c.sock"
processes:
  web:
    command: [%s, %s]
    env: {E2E_SOCKET_HELPER: http, E2E_START_DELAY: 150ms}
    sockets: ["tcp://%s"]
    ready: {log: "^serving$"}
    restart: {policy: always, backoff: 10ms, overlap: true}
`
	r := startPodvisor(t, fmt.Sprintf(conf, self, "v1", addr), withHTTP())
	eventually(t, 20*time.Second, func() bool { st, _, _, _ := statusOf(t, r, "web"); return st == "running" }, "web not running")
	l := startLoad("http://"+addr+"/", 4)
	defer l.stop()
	l.waitRequests(t, 20)
	for range 3 {
		mustCtl(t, r, 0, "restart", "web")
		l.waitRequests(t, 20)
	}
	v2 := strings.ReplaceAll(fmt.Sprintf(conf, self, "v2", addr), "{{dir}}", r.Dir)
	if err := os.WriteFile(r.Config, []byte(v2), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, r, 0, "reload"); !strings.Contains(out, "command changed") {
		t.Fatalf("reload:\n%s", out)
	}
	l.waitRequests(t, 20)
	l.stop()
	t.Logf("answered %d, failed %d, incarnations %d, slowest answer %v", l.ok.Load(), l.failed.Load(), len(l.pids), l.worst)
	if n := l.failed.Load(); n != 0 {
		t.Fatalf("%d requests failed (first: %v)\n%s", n, l.firstErr, r.Stdout)
	}
	if len(l.pids) < 5 {
		t.Fatalf("answers came from %d incarnations, want 5: %v", len(l.pids), l.pids)
	}
	if !r.Stdout.Contains("old incarnation exited") {
		t.Fatalf("no overlap in the log:\n%s", r.Stdout)
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(30 * time.Second)
	wantCode(t, r, code, 0)
}
