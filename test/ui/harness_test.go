// Package ui tests podvisor's two user interfaces end to end against a real
// podvisor: `podvisor ui` driven in tmux (send-keys, capture-pane) and the
// web page in headless Chromium (chromedp). Both tools come from Debian
// (tmux, chromium, chromium-driver: the Makefile's TEST_DEBS). Without them
// the tests skip with a message, unless PODVISOR_REQUIRE_TOOLS=1 (CI),
// where they fail.
//
// PODVISOR_UI_SCREENSHOTS=DIR writes the screenshots docs/ui.md shows
// (ui-web.png, ui-web-shutdown.png, ui-tui.txt) to DIR.
package ui

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	podvisorBin string
	slowdown    = 1.0
)

func TestMain(m *testing.M) { os.Exit(testMain(m)) }

func testMain(m *testing.M) int {
	if s := os.Getenv("PODVISOR_TEST_SLOWDOWN"); s != "" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f < 1 {
			fmt.Fprintf(os.Stderr, "ui: PODVISOR_TEST_SLOWDOWN=%q: want a number >= 1\n", s)
			return 2
		}
		slowdown = f
	}
	dir, err := os.MkdirTemp("", "podvisor-ui-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "ui:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	podvisorBin = filepath.Join(dir, "podvisor")
	gobin, err := exec.LookPath("go")
	if err != nil && os.Getenv("GOROOT") != "" {
		gobin, err = filepath.Join(os.Getenv("GOROOT"), "bin", "go"), nil
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "ui: no go command in PATH or $GOROOT/bin to build podvisor with")
		return 2
	}
	build := exec.Command(gobin, "build", "-o", podvisorBin, "github.com/podvisor/podvisor/cmd/podvisor")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "ui: build podvisor:", err)
		return 2
	}
	return m.Run()
}

func scaled(d time.Duration) time.Duration { return time.Duration(float64(d) * slowdown) }

// need skips the test when a tool is missing, or fails it under
// PODVISOR_REQUIRE_TOOLS=1.
func need(t *testing.T, tools ...string) map[string]string {
	t.Helper()
	paths := map[string]string{}
	for _, tool := range tools {
		p, err := exec.LookPath(tool)
		if err != nil {
			msg := fmt.Sprintf("%s not found (Debian package in the Makefile's TEST_DEBS; make test installs it)", tool)
			if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
				t.Fatal(msg + " and PODVISOR_REQUIRE_TOOLS=1")
			}
			t.Skip(msg)
		}
		paths[tool] = p
	}
	return paths
}

// eventually polls cond until it holds, failing the test after
// scaled(timeout) with what last says.
func eventually(t *testing.T, timeout time.Duration, cond func() bool, last func() string, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(scaled(timeout))
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v: %s\nlast seen:\n%s", scaled(timeout), fmt.Sprintf(format, args...), last())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Podvisor is one `podvisor run`.
type Podvisor struct {
	Dir     string
	Addr    string // HTTP host:port
	Control string // control socket path
	Out     *syncBuffer
	cmd     *exec.Cmd
	done    chan struct{}
}

// config has api depend on db, and a oneshot init before both.
const config = `
listen: 127.0.0.1:0
control: {{dir}}/ctl.sock
%s
processes:
  init:
    type: oneshot
    command: ["sh", "-c", "echo init done"]
  db:
    command: ["sh", "-c", "echo db listening; exec sleep 100000"]
    depends_on: {init: completed}
  api:
    command: ["sh", "-c", "echo hello from api; exec sleep 100000"]
    depends_on: [db]
  worker:
    command: ["sh", "-c", "echo worker up; exec sleep 100000"]
    depends_on: {db: started}
%s`

// start runs podvisor on config with extra top-level keys (ui: ...) and,
// if given, more processes (YAML lines under processes:).
func start(t *testing.T, extra string, procs ...string) *Podvisor {
	t.Helper()
	dir := t.TempDir()
	p := &Podvisor{Dir: dir, Control: filepath.Join(dir, "ctl.sock"), Out: &syncBuffer{}, done: make(chan struct{})}
	cfg := strings.ReplaceAll(fmt.Sprintf(config, extra, strings.Join(procs, "")), "{{dir}}", dir)
	if err := os.WriteFile(filepath.Join(dir, "procs.yaml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cmd = exec.Command(podvisorBin, "run", "-c", filepath.Join(dir, "procs.yaml"))
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = p.Out, p.Out
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(scaled(15 * time.Second)):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	addr := regexp.MustCompile(`msg="serving [^"]*" addr=(\S+)`)
	eventually(t, 10*time.Second, func() bool {
		m := addr.FindStringSubmatch(p.Out.String())
		if m != nil {
			p.Addr = m[1]
		}
		return m != nil && strings.Contains(p.Out.String(), "control socket ready")
	}, p.Out.String, "podvisor serving HTTP and the control socket")
	eventually(t, 10*time.Second, func() bool {
		out := p.Out.String()
		return strings.Contains(out, "api      | hello from api") && strings.Contains(out, "worker   | worker up")
	}, p.Out.String, "every process started")
	return p
}

// Operate runs a podvisor operate verb (restart NAME...) on p's socket.
func (p *Podvisor) Operate(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(podvisorBin, append(args, "--control", p.Control)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("podvisor %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
