// The effect benchmarks' rig: stamps the children write, a tracing launcher,
// free ports and the chain configs.

package supervisor_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/testproc"

	. "github.com/podvisor/podvisor/internal/supervisor"
)

func stampChildPath(b *testing.B) string {
	return testproc.StampChild(b, func(argv ...string) ([]byte, error) {
		return exec.Command(argv[0], argv[1:]...).CombinedOutput()
	})
}

// stamps maps "NAME KIND" to the instant the child recorded.
type stamps testproc.Stamps

func readStamps(b *testing.B, path string) stamps {
	b.Helper()
	st, err := testproc.ReadStamps(path)
	if err != nil {
		b.Fatal(err)
	}
	return stamps(st)
}

func (st stamps) at(b *testing.B, name, kind string) time.Time {
	b.Helper()
	t, ok := st[name+" "+kind]
	if !ok {
		b.Fatalf("no %q stamp of %s", kind, name)
	}
	return t
}

func waitLines(b *testing.B, path string, n int, limit time.Duration) {
	b.Helper()
	testproc.WaitLines(b, path, n, limit)
}

// traceLauncher notes, per process name, when the loop called Launch, when
// Launch returned, when the readiness hook fired, when the exit hook fired
// (and the reaper's wait4 instant) and when SIGTERM was sent.
type traceLauncher struct {
	Launcher
	mu sync.Mutex
	t  map[string]time.Time
}

func (l *traceLauncher) note(key string, t time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.t[key]; !ok {
		l.t[key] = t
	}
}

func (l *traceLauncher) get(key string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, ok := l.t[key]
	return t, ok
}

func (l *traceLauncher) Launch(p *config.Process, gen uint64, h Hooks) (Child, error) {
	name := p.Name
	l.note(name+" launch", time.Now())
	ready, exited := h.Ready, h.Exited
	h.Ready = func(d string) { l.note(name+" readyhook", time.Now()); ready(d) }
	h.Exited = func(ex proc.Exit) {
		l.note(name+" reaped", ex.At)
		l.note(name+" exithook", time.Now())
		exited(ex)
	}
	c, err := l.Launcher.Launch(p, gen, h)
	l.note(name+" launched", time.Now())
	if err != nil {
		return nil, err
	}
	return &traceChild{Child: c, l: l, name: name}, nil
}

type traceChild struct {
	Child
	l    *traceLauncher
	name string
}

func (c *traceChild) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGTERM {
		c.l.note(c.name+" sigterm", time.Now())
	}
	return c.Child.Signal(sig)
}

// segments collects named durations and reports their medians.
type segments map[string][]time.Duration

func (s segments) add(name string, d time.Duration) { s[name] = append(s[name], d) }

func (s segments) report(b *testing.B) {
	for name, ds := range s {
		b.ReportMetric(float64(median(ds).Nanoseconds())/1e6, name)
	}
}

// runTraced runs yml until every process is up (and every child stamped
// "exec"), sends SIGTERM, waits for the outcome and returns the stamps and
// the trace.
func runTraced(b *testing.B, rig *realRig, yml, file string, children int) (stamps, *traceLauncher) {
	b.Helper()
	var tl *traceLauncher
	sup := rig.wrapped(b, yml, func(l Launcher) Launcher {
		tl = &traceLauncher{Launcher: l, t: map[string]time.Time{}}
		return tl
	})
	sigs := make(chan os.Signal, 1)
	done := make(chan Outcome, 1)
	go func() { done <- sup.Run(context.Background(), sigs) }()
	if !waitFor(sup, func(s Snapshot) bool { return s.Ready }, 60*time.Second) {
		b.Fatalf("not ready: %v", sup.Snapshot().NotReady)
	}
	waitLines(b, file, children, 30*time.Second)
	sigs <- syscall.SIGTERM
	select {
	case o := <-done:
		if o.ExitCode() != 0 {
			b.Fatalf("exit %d: %+v", o.ExitCode(), o)
		}
	case <-time.After(60 * time.Second):
		b.Fatal("teardown did not end")
	}
	return readStamps(b, file), tl
}

// freePorts returns n TCP ports on 127.0.0.1 that were free a moment ago.
func freePorts(b *testing.B, n int) []int {
	b.Helper()
	var ports []int
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	for _, ln := range lns {
		ln.Close()
	}
	return ports
}

// effectChainYAML: links h0..h9, each depending on the previous one being
// started (kind "started") or ready (any other kind).
func effectChainYAML(child, file, kind string, ports []int) string {
	var sb strings.Builder
	sb.WriteString("shutdown_timeout: 30s\nprocesses:\n")
	for i := range 10 {
		mode, addr := kind, ""
		if kind == "started" {
			mode = "none"
		}
		if ports != nil {
			addr = fmt.Sprintf("127.0.0.1:%d", ports[i])
		}
		fmt.Fprintf(&sb, "  h%d:\n    command: [%q, %q, h%d, %s, %q]\n", i, child, file, i, mode, addr)
		sb.WriteString(readyLine(kind, addr))
		if i > 0 {
			cond := "ready"
			if kind == "started" {
				cond = "started"
			}
			fmt.Fprintf(&sb, "    depends_on: {h%d: %s}\n", i-1, cond)
		}
	}
	return sb.String()
}
