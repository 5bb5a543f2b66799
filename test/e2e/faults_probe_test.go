package e2e

// FAULTS §3.C (probe faults) against the real binary. HTTP, TCP and file
// semantics are covered at the unit level in internal/health and by the
// readiness tests of health_http_test.go; these tests cover what only shows
// from outside: probe processes in /proc, pipe ends held by podvisor, and
// timings in /status.

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestFault_C1_HangingExecProbe: an exec probe that hangs (with a background
// member in its group) is killed at its timeout with its whole process
// group; at most one attempt is in flight at any time, and the failure says
// it timed out.
func TestFault_C1_HangingExecProbe(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	const timeout = 300 * time.Millisecond
	r := ffStartHTTP(t, `
processes:
  svc:
    command: `+ffq(ev("svc", "start")+"; exec sleep 1000")+`
    ready: {exec: "sleep `+m+` & exec sleep `+m+`", timeout: 300ms, start_interval: 100ms}
`)
	r.WaitEvent(t, "svc", "start", 5*time.Second)
	firstSeen := map[int]time.Time{}
	end := time.Now().Add(scaled(2 * time.Second))
	for time.Now().Before(end) {
		pids := pidsWithArg(m)
		var alive []int
		for _, p := range pids {
			if !ffGone(p) {
				alive = append(alive, p)
			}
		}
		if len(alive) > 2 { // one attempt: the shell's background sleep and its exec'd sleep
			t.Fatalf("%d probe processes alive at once: %v (more than one attempt in flight)", len(alive), alive)
		}
		now := time.Now()
		for _, p := range alive {
			if _, ok := firstSeen[p]; !ok {
				firstSeen[p] = now
			}
			if age := now.Sub(firstSeen[p]); age > timeout+eps() {
				t.Fatalf("probe process %d alive %v, beyond timeout %v + %v", p, age, timeout, eps())
			}
		}
		time.Sleep(20 * time.Millisecond) // sampling period
	}
	if len(firstSeen) < 4 {
		t.Errorf("only %d probe processes seen in 2 s: attempts not repeated?", len(firstSeen))
	}
	if f, _ := ffMetric(t, r, `podvisor_probe_failures_total{probe="ready",process="svc"}`); f < 3 {
		t.Errorf("ready probe failures of svc = %v, want >= 3", f)
	}
	if p := ffGetStatus(t, r).proc("svc"); p.State != "starting" || p.Restarts != 0 {
		t.Errorf("svc %+v, want starting, never restarted", p)
	}
	ffStopClean(t, r, 10*time.Second)
	for p := range firstSeen {
		if !ffGone(p) {
			t.Errorf("probe process %d outlived podvisor", p)
		}
	}
}

// TestFault_C2_ExecProbeBackgroundChild: a probe that exits at once but
// leaves a background child holding its output gives its result at once,
// and the leftover is killed with the probe's group.
func TestFault_C2_ExecProbeBackgroundChild(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	r := ffStartHTTP(t, `
processes:
  svc:
    command: `+ffq(ev("svc", "start")+"; exec sleep 1000")+`
    ready: {exec: "sleep `+m+` & exit 0", timeout: 5s, start_interval: 100ms}
`)
	st := ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return s.proc("svc").Ready }, "svc never ready")
	p := st.proc("svc")
	if d := p.ReadyAt.Sub(*p.StartedAt); d > eps() {
		t.Errorf("ready %v after start: the probe waited for its background child (timeout 5s)", d)
	}
	eventually(t, time.Second, func() bool {
		for _, pid := range pidsWithArg(m) {
			if !ffGone(pid) {
				return false
			}
		}
		return true
	}, "the probe's background child outlived it: %v", ffLazy(func() string { return fmt.Sprint(pidsWithArg(m)) }))
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_C3_ProbeCommandNotFound: a readiness probe whose command does not
// exist is a failing probe, with the reason logged; the process keeps
// running and is not restarted.
func TestFault_C3_ProbeCommandNotFound(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  svc:
    command: `+ffq(ev("svc", "start")+"; exec sleep 1000")+`
    ready: {exec: ["ff-no-such-probe"], start_interval: 50ms}
`)
	pid := r.WaitEvent(t, "svc", "start", 5*time.Second).Pid()
	eventually(t, 5*time.Second, func() bool {
		f, _ := ffMetric(t, r, `podvisor_probe_failures_total{probe="ready",process="svc"}`)
		return f >= 3
	}, "no failed ready probes counted")
	st := ffGetStatus(t, r)
	if p := st.proc("svc"); p.State != "starting" || p.Ready || p.Pid != pid || p.Restarts != 0 {
		t.Errorf("svc %+v, want still starting with pid %d and no restart", p, pid)
	}
	if code, _ := r.Get(t, "/readyz"); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz %d, want 503", code)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_C1_C3_ProbeFailureReasonReported: why a starting process is not
// ready (a probe timing out, a probe command not found) must be visible: the
// start-timeout warning and the every-10s "still waiting" line carry the last
// probe result in "last".
func TestFault_C1_C3_ProbeFailureReasonReported(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, probe, want string }{
		{"not found", `["ff-no-such-probe"]`, "not found"},
		{"timeout", `"sleep 1000"`, "time"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := startPodvisor(t, `
processes:
  svc:
    command: ['sleep', '1000']
    ready: {exec: `+c.probe+`, timeout: 200ms, start_interval: 50ms}
    start_timeout: 1s
    restart: never
`)
			if code, _ := r.Wait(10 * time.Second); code != 1 {
				t.Fatalf("exit %d, want 1 (start timeout)", code)
			}
			line := r.Stdout.WaitFor(t, `msg="start timeout"`, time.Second)
			if !strings.Contains(line, c.want) {
				t.Errorf("start timeout line does not say why: %s", line)
			}
		})
	}
}

// TestFault_C10_NoWriteEndOfNotifyPipe: podvisor keeps only the read end of a
// process's notify pipe, so EOF arrives when the child closes its end.
func TestFault_C10_NoWriteEndOfNotifyPipe(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	r := startPodvisor(t, `
processes:
  svc:
    command: ['sleep', '`+m+`']
    ready: {notify: "fd:3"}
`)
	child := ffPidOf(t, m, 5*time.Second)
	fds, err := openFDs(child)
	if err != nil {
		t.Fatal(err)
	}
	pipe := fds[3]
	if !strings.HasPrefix(pipe, "pipe:") {
		t.Fatalf("child fd 3 is %q, want a pipe", pipe)
	}
	pvFDs, err := openFDs(r.Pid())
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for fd, target := range pvFDs {
		if target != pipe {
			continue
		}
		held++
		w, err := ffWriteFlags(r.Pid(), fd)
		if err != nil {
			t.Fatal(err)
		}
		if w {
			t.Errorf("podvisor holds the write end of the notify pipe on fd %d", fd)
		}
	}
	if held != 1 {
		t.Errorf("podvisor holds %d ends of the notify pipe, want 1 (the read end)", held)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_C11_PendingDependentWaitsForReadinessAgain: app depends on a and
// b; a becomes ready and then not ready before b is ready: app must wait for
// a to be ready again, and start then (not be skipped or started early).
func TestFault_C11_PendingDependentWaitsForReadinessAgain(t *testing.T) {
	t.Parallel()
	r := ffStartHTTP(t, `
processes:
  a:
    command: 'exec sleep 1000'
    ready: {file: "{{dir}}/a", start_interval: 50ms, interval: 50ms, failure_threshold: 1}
  b:
    command: 'exec sleep 1000'
    ready: {file: "{{dir}}/b", start_interval: 50ms}
  app:
    depends_on: [a, b]
    command: `+ffq(ev("app", "start")+"; exec sleep 1000")+`
`)
	a := filepath.Join(r.Dir, "a")
	ffWrite(t, r.Dir, "a", nil, 0o644)
	ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return s.proc("a").Ready }, "a never ready")
	if err := os.Remove(a); err != nil {
		t.Fatal(err)
	}
	ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return !s.proc("a").Ready }, "a still ready")
	ffWrite(t, r.Dir, "b", nil, 0o644)
	st := ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return s.proc("b").Ready }, "b never ready")
	if p := st.proc("app"); p.State != "pending" || len(p.WaitingFor) != 1 || p.WaitingFor[0] != "a: ready" {
		t.Fatalf("app %+v, want pending on a: ready", p)
	}
	// b's readiness is settled: app must not start while a is not ready.
	hold := time.Now().Add(300 * time.Millisecond)
	for time.Now().Before(hold) {
		if _, ok := findEvent(r.ReadEvents(t), "app", "start"); ok {
			t.Fatal("app started while a was not ready")
		}
		time.Sleep(20 * time.Millisecond) // sampling period of a negative check
	}
	readyAgain := time.Now()
	if err := os.WriteFile(a, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	start := r.WaitEvent(t, "app", "start", 5*time.Second)
	if start.At.Before(readyAgain) {
		t.Errorf("app started %v before a was ready again", readyAgain.Sub(start.At))
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_C13_NoLivenessRestartDuringShutdown: a liveness check that starts
// failing once teardown began (the child removes its health file on SIGTERM
// and takes a while to exit) never restarts anything.
func TestFault_C13_NoLivenessRestartDuringShutdown(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  svc:
    command: `+ffq(`trap 'touch "$E2E_DIR/dead"; `+ev("svc", "term")+`; sleep 0.8; exit 0' TERM; `+ev("svc", "start")+`; while :; do sleep 0.05; done`)+`
    live: {exec: 'test ! -e "$E2E_DIR/dead"', interval: 50ms, timeout: 1s, failure_threshold: 1}
    restart: {policy: always, backoff: 10ms}
    stop: {timeout: 5s}
`)
	r.WaitEvent(t, "svc", "start", 5*time.Second)
	r.Stdout.WaitFor(t, `all processes ready`, 5*time.Second)
	r.Signal(syscall.SIGTERM)
	signalled := time.Now()
	code, took := r.Wait(10 * time.Second)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stdout)
	}
	if took < 800*time.Millisecond {
		t.Errorf("teardown took %v: svc was killed instead of left to exit", took)
	}
	for _, s := range filterEvents(r.ReadEvents(t), "svc", "start") {
		if s.At.After(signalled) {
			t.Errorf("svc started again %v after SIGTERM", s.At.Sub(signalled))
		}
	}
	if regexp.MustCompile(`liveness check failed`).MatchString(r.Stdout.String()) {
		t.Errorf("a liveness failure was acted on during teardown:\n%s", r.Stdout)
	}
}

// TestFault_C14_InitialDelayHonoured: a process whose readiness file exists
// at once is not ready before initial_delay.
func TestFault_C14_InitialDelayHonoured(t *testing.T) {
	t.Parallel()
	const delay = 700 * time.Millisecond
	r := ffStartHTTP(t, `
processes:
  svc:
    command: 'touch "$E2E_DIR/ready"; exec sleep 1000'
    ready: {file: "{{dir}}/ready", initial_delay: 700ms, start_interval: 50ms}
`)
	st := ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return s.proc("svc").Ready }, "svc never ready")
	p := st.proc("svc")
	if d := p.ReadyAt.Sub(*p.StartedAt); d < delay-50*time.Millisecond || d > delay+eps() {
		t.Errorf("ready %v after start, want about initial_delay %v", d, delay)
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_C15_ExecProbesAtScale: 50 processes with an exec liveness check
// every second cost podvisor little CPU, and SIGTERM is still honoured at
// once.
func TestFault_C15_ExecProbesAtScale(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("processes:\n")
	for i := range 50 {
		fmt.Fprintf(&b, "  p%d:\n    command: ['sleep', '1000']\n    live: {exec: ['true'], interval: 1s}\n", i)
	}
	r := ffStartHTTP(t, b.String())
	ffWaitStatus(t, r, 10*time.Second, func(s ffStatus) bool { return s.Ready }, "not everything ready")
	pv := r.Pid()
	cpu0, t0 := ffCPU(t, pv), time.Now()
	// A measurement window of three probe rounds, with no HTTP requests in
	// it (scrapes cost podvisor CPU too).
	for time.Since(t0) < 3*time.Second {
		time.Sleep(100 * time.Millisecond) // measurement window, not synchronisation
	}
	cpu, wall := ffCPU(t, pv)-cpu0, time.Since(t0)
	if v, _ := ffMetric(t, r, `podvisor_probe_duration_seconds_count{probe="live",process="p49"}`); v < 2 {
		t.Fatalf("%v liveness probes of p49 in %v, want >= 2", v, wall)
	}
	if frac := float64(cpu) / float64(wall); frac > 0.15 {
		t.Errorf("podvisor used %v of CPU in %v (%.0f%%) for 50 probes/s", cpu, wall, 100*frac)
	}
	if took := ffStopClean(t, r, 10*time.Second); took > eps() {
		t.Errorf("teardown of 50 processes took %v, want <= %v", took, eps())
	}
}

// TestFault_C6_TricklingAndTLSMismatch: an HTTP endpoint that answers 200
// but trickles its body forever, and a plaintext probe against a TLS port:
// every attempt ends by the probe timeout, the first as a success (its
// status is 200), the second as a failure. (The config accepts http://
// probes only.)
func TestFault_C6_TricklingAndTLSMismatch(t *testing.T) {
	t.Parallel()
	stop := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		w.WriteHeader(http.StatusOK)
		for {
			if _, err := w.Write([]byte("x")); err != nil {
				return
			}
			w.(http.Flusher).Flush()
			select {
			case <-stop:
				return
			case <-req.Context().Done():
				return
			case <-time.After(50 * time.Millisecond): // the trickle's pace
			}
		}
	}))
	defer srv.Close()
	defer close(stop)
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // each probe is a handshake error
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	tlsHost := strings.TrimPrefix(tlsSrv.URL, "https://")
	r := ffStartHTTP(t, `
processes:
  trickle:
    command: ['sleep', '1000']
    ready: {http: "http://`+host+`/", timeout: 300ms, start_interval: 100ms, interval: 100ms}
  tls:
    command: ['sleep', '1000']
    ready: {http: "http://`+tlsHost+`/", timeout: 300ms, start_interval: 100ms}
`)
	for _, name := range []string{"trickle", "tls"} {
		count := fmt.Sprintf(`podvisor_probe_duration_seconds_count{probe="ready",process=%q}`, name)
		eventually(t, 10*time.Second, func() bool { n, _ := ffMetric(t, r, count); return n >= 3 }, "fewer than 3 probes of %s", name)
		n, _ := ffMetric(t, r, count)
		sum, _ := ffMetric(t, r, fmt.Sprintf(`podvisor_probe_duration_seconds_sum{probe="ready",process=%q}`, name))
		if avg := time.Duration(sum / n * float64(time.Second)); avg > 300*time.Millisecond+eps() {
			t.Errorf("%s: probe attempts take %v on average, beyond the 300ms timeout", name, avg)
		}
	}
	// The status code decides (docs/reliability.md): the trickling 200 is a
	// success once its body read is cut at the timeout; the TLS port never
	// answers HTTP.
	st := ffGetStatus(t, r)
	if !st.proc("trickle").Ready {
		t.Errorf("trickle (HTTP 200) not ready: %s", st.Raw)
	}
	if st.proc("tls").Ready {
		t.Errorf("tls became ready: %s", st.Raw)
	}
	if f, _ := ffMetric(t, r, `podvisor_probe_failures_total{probe="ready",process="tls"}`); f < 3 {
		t.Errorf("tls: %v failed probes, want >= 3", f)
	}
	ffStopClean(t, r, 10*time.Second)
}
