package e2e

// Reload defects of issue 22, black-box: the real binary, a real port.

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"
)

// reloadHelperEnv selects the listener helper mode of the test binary (as
// ffHelperEnv does): it records "start", listens on $E2E_LISTEN (recording
// "listening", or "bind-failed" and exiting 1), and on SIGTERM records
// "term", keeps the port for 1 s more, records "exit" and exits 143.
const reloadHelperEnv = "E2E_RELOAD_HELPER"

func init() {
	if os.Getenv(reloadHelperEnv) == "listen" {
		reloadListenHelper()
	}
}

func reloadListenHelper() {
	name := os.Getenv("E2E_NAME")
	event := func(what string) {
		f, err := os.OpenFile(os.Getenv("E2E_EVENTS"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			fmt.Fprintf(f, "%s %s %d %d\n", name, what, time.Now().UnixNano(), os.Getpid())
			f.Close()
		}
	}
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM)
	event("start")
	ln, err := net.Listen("tcp", os.Getenv("E2E_LISTEN"))
	if err != nil {
		event("bind-failed")
		fmt.Println(err)
		os.Exit(1)
	}
	event("listening")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	<-term
	event("term")
	time.Sleep(time.Second)
	event("exit")
	os.Exit(143)
}

// Issue 22 item 3: renamed web -> web2 (a slow exit, a port, a tcp
// readiness check) and reloaded, web2 must start only once web is gone: it
// was spawned at once, its check answered by web, then it died with
// "address already in use".
func TestReload_RenameWaitsForTheOldProcess(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	const conf = `
control: "{{dir}}/c.sock"
processes:
  PNAME:
    command: [%s]
    env: {E2E_RELOAD_HELPER: listen, E2E_NAME: PNAME, E2E_LISTEN: "%s"}
    ready: {tcp: "%s", start_interval: 50ms}
    restart: {policy: on-failure, backoff: 100ms}
`
	src := fmt.Sprintf(conf, self, addr, addr)
	r := startPodvisor(t, strings.ReplaceAll(src, "PNAME", "web"), withHTTP())
	r.WaitEvent(t, "web", "listening", scaled(10*time.Second))
	eventually(t, scaled(10*time.Second), func() bool { st, _, _, _ := statusOf(t, r, "web"); return st == "running" }, "web not running")

	if err := os.WriteFile(r.Config, []byte(strings.ReplaceAll(src, "PNAME", "web2")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustCtl(t, r, 0, "reload")
	if !strings.Contains(out, "web2: started: added to the config") {
		t.Fatalf("reload:\n%s", out)
	}
	evs := r.ReadEvents(t)
	if _, failed := findEvent(evs, "web2", "bind-failed"); failed {
		t.Fatalf("web2 found its port taken:\n%s\n%s", readFile(r.Events), r.Stdout)
	}
	exit, ok1 := findEvent(evs, "web", "exit")
	start, ok2 := findEvent(evs, "web2", "start")
	if !ok1 || !ok2 || start.At.Before(exit.At) {
		t.Fatalf("web2 started before web exited:\n%s", readFile(r.Events))
	}
	if st, _, _, _ := statusOf(t, r, "web2"); st != "running" {
		t.Fatalf("web2 %s after the reload:\n%s", st, r.Stdout)
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(scaled(30 * time.Second))
	wantCode(t, r, code, 0)
}

// Issue 22 item 4: a completed oneshot that a reload makes a service is
// started; /readyz turns 200.
func TestReload_CompletedOneshotBecomesService(t *testing.T) {
	t.Parallel()
	src := `
control: "{{dir}}/c.sock"
processes:
  init:
    type: oneshot
    command: ` + shq(ev("init", "start")+"; sleep 0.2") + `
`
	r := startPodvisor(t, src, withHTTP())
	eventually(t, scaled(10*time.Second), func() bool { st, _, _, _ := statusOf(t, r, "init"); return st == "completed" }, "init did not complete")
	svc := strings.Replace(strings.Replace(src, "oneshot", "service", 1), "sleep 0.2", "while :; do sleep 0.05; done", 1)
	if err := os.WriteFile(r.Config, []byte(strings.ReplaceAll(svc, "{{dir}}", r.Dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustCtl(t, r, 0, "reload"); !strings.Contains(out, "init: restarted: ") {
		t.Fatalf("reload:\n%s", out)
	}
	if st, _, pid, _ := statusOf(t, r, "init"); st != "running" || pid == 0 {
		t.Fatalf("init %s (pid %d) after the reload", st, pid)
	}
	if code, body := r.Get(t, "/readyz"); code != 200 {
		t.Fatalf("/readyz %d: %s", code, body)
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(scaled(30 * time.Second))
	wantCode(t, r, code, 0)
}

// Issue 22 item 14: a reload refused over the control socket is in
// podvisor's own log, with its errors.
func TestReload_RefusedReloadIsLogged(t *testing.T) {
	t.Parallel()
	src := `
control: "{{dir}}/c.sock"
processes:
  a:
    command: ` + shq("while :; do sleep 0.05; done") + `
`
	r := startPodvisor(t, src)
	r.Stdout.WaitFor(t, `msg="all processes ready"`, scaled(10*time.Second))
	if err := os.WriteFile(r.Config, []byte(strings.ReplaceAll(src, "{{dir}}", r.Dir)+"    depends_on: [nope]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mustCtl(t, r, 1, "reload")
	r.Stdout.WaitFor(t, `level=ERROR msg="reload \(podvisor reload\) refused"`, scaled(10*time.Second))
	r.Stdout.WaitFor(t, `level=ERROR msg=config .*unknown process`, scaled(10*time.Second))
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(scaled(30 * time.Second))
	wantCode(t, r, code, 0)
}

// Issue 22 item 8: a teardown begun by a spawn failure in the first wave
// still reports the processes of that wave, and the one that could not
// start.
func TestReload_ShutdownReportAfterSpawnFailure(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  a: {command: ["sleep", "1071"]}
  b: {command: ["/nonexistent/podvisor-e2e"]}
  c: {command: ["sleep", "1072"]}
`)
	code, _ := r.Wait(scaled(30 * time.Second))
	wantCode(t, r, code, 1)
	var block []string
	for _, l := range r.Stdout.Lines() {
		if strings.Contains(l, `msg="shutdown report" process=`) {
			block = append(block, l)
		}
	}
	for _, want := range []string{"process=a ended_by=signal", "process=b ended_by=\"spawn failed\"", "process=c ended_by=signal"} {
		found := false
		for _, l := range block {
			found = found || strings.Contains(l, want)
		}
		if !found {
			t.Errorf("shutdown report lacks %q:\n%s", want, r.Stdout)
		}
	}
}
