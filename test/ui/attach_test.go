package ui

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/control"
)

// repl is a process with a terminal that echoes each line typed, says its
// pid, answers "size" with the terminal's size (stty size), and colours
// its prompt (an escape sequence the log must not show).
const repl = `
  repl:
    command: ["sh", "-c", "echo repl pid $$$$; while printf '\\033[1mrepl>\\033[0m '; read -r line; do echo \"you said: $line\"; [ \"$line\" = size ] && stty size; done"]
    tty: true
`

// attachIn runs `podvisor attach ARGS` in a tmux window of w x h.
func attachIn(t *testing.T, p *Podvisor, w, h int, args ...string) *tmux {
	tools := need(t, "tmux")
	argv := append([]string{podvisorBin, "attach", "--control", p.Control}, args...)
	return newTmux(t, tools["tmux"], w, h, nil, argv...)
}

func TestAttachREPL(t *testing.T) {
	p := start(t, "", repl)
	x := attachIn(t, p, 80, 24, "repl")
	// The replay shows the prompt written before anyone attached.
	s := x.waitFor(10*time.Second, "the replayed prompt", contains("repl>"))
	m := regexp.MustCompile(`repl pid (\d+)`).FindStringSubmatch(s + p.Out.String())
	if m == nil {
		t.Fatalf("no pid line:\n%s", s)
	}
	pid, _ := strconv.Atoi(m[1])
	x.keys("hello there", "Enter")
	x.waitFor(10*time.Second, "the echo", contains("you said: hello there"))
	// The log has the same line, without the prompt's escape sequences.
	logged := regexp.MustCompile(`(?m)^repl +\| you said: hello there$`)
	eventually(t, 10*time.Second, func() bool { return logged.MatchString(p.Out.String()) }, p.Out.String, "the echo in the log")
	if strings.Contains(p.Out.String(), "\x1b[") {
		t.Errorf("the log holds escape sequences:\n%q", p.Out.String())
	}
	// The window size follows tmux's.
	x.keys("size", "Enter")
	x.waitFor(10*time.Second, "stty size 24 80", contains("\n24 80"))
	x.run("resize-window", "-t", "ui", "-x", "90", "-y", "30")
	x.keys("size", "Enter")
	x.waitFor(10*time.Second, "stty size 30 90 after the resize", contains("\n30 90"))
	// Ctrl-P Ctrl-Q detaches; the process keeps running.
	x.keys("C-p", "C-q")
	x.waitFor(10*time.Second, "the detach", func(s string) bool {
		return strings.Contains(s, "detached from repl") && strings.Contains(x.run("display-message", "-p", "-t", "ui", "#{pane_dead}"), "1")
	})
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("repl (pid %d) after the detach: %v", pid, err)
	}
	// Attached again: the same process, still answering.
	y := attachIn(t, p, 80, 24, "repl")
	y.keys("again", "Enter")
	y.waitFor(10*time.Second, "the echo after re-attaching", contains("you said: again"))
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("repl (pid %d) replaced: %v", pid, err)
	}
}

func TestAttachTwoAttachers(t *testing.T) {
	p := start(t, "", repl)
	a := attachIn(t, p, 80, 24, "repl")
	a.waitFor(10*time.Second, "the first attacher's prompt", contains("repl>"))
	b := attachIn(t, p, 80, 24, "repl")
	b.waitFor(10*time.Second, "the second attacher told it is read-only", contains("read-only: another attacher is the writer"))
	b.keys("from-b", "Enter")
	b.waitFor(10*time.Second, "the refusal of the read-only attacher's input", func(s string) bool {
		return strings.Count(s, "read-only") >= 2
	})
	a.keys("from-a", "Enter")
	b.waitFor(10*time.Second, "the writer's echo seen by the reader", contains("you said: from-a"))
	if s := a.screen(); strings.Contains(s, "from-b") {
		t.Errorf("the read-only attacher's input reached the process:\n%s", s)
	}
}

// vi draws its screen through the attach: the file's first line on the
// first row, "~" rows below it, and its own status line.
func TestAttachVi(t *testing.T) {
	vi := need(t, "vi")["vi"]
	dir := t.TempDir()
	file := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(file, []byte("first line of the notes\nsecond line\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := start(t, "", fmt.Sprintf("\n  editor:\n    command: [%q, %q]\n    tty: true\n", vi, file))
	x := attachIn(t, p, 80, 24, "editor")
	s := x.waitFor(10*time.Second, "vi's screen", func(s string) bool {
		rows := strings.Split(s, "\n")
		return len(rows) > 3 && rows[0] == "first line of the notes" && rows[1] == "second line" && strings.HasPrefix(rows[2], "~")
	})
	x.keys("Gothird line", "Escape")
	x.waitFor(10*time.Second, "the typed line drawn", func(s string) bool {
		return strings.Split(s, "\n")[2] == "third line"
	})
	if rows := strings.Split(strings.TrimRight(s, "\n"), "\n"); len(rows) != 24 || !strings.HasSuffix(rows[23], "All") {
		t.Errorf("not 24 rows with vi's ruler on the last:\n%s", s)
	}
}

// A process that reads stdin without a terminal gets what attach reads.
func TestAttachStdin(t *testing.T) {
	p := start(t, "", "\n  feed:\n    command: [\"sh\", \"-c\", \"while read -r l; do echo got $l; done\"]\n    stdin: true\n")
	out, err := execIn(p, "one\ntwo\n", "attach", "feed")
	if err != nil {
		t.Fatalf("attach feed: %v\n%s", err, out)
	}
	eventually(t, 10*time.Second, func() bool {
		return regexp.MustCompile(`(?m)^feed +\| got one$`).MatchString(p.Out.String()) && regexp.MustCompile(`(?m)^feed +\| got two$`).MatchString(p.Out.String())
	}, p.Out.String, "the lines fed through attach in the log")
}

// A flood of output to an attacher that does not read: the process goes
// on, another process's log lines keep coming, and the attacher, when it
// reads at last, is told what it missed.
func TestAttachFloodSlowAttacher(t *testing.T) {
	p := start(t, "", `
  flood:
    command: ["sh", "-c", "i=0; while :; do i=$((i+1)); echo \"flood line $i xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"; [ $((i % 2000)) = 0 ] && echo $i > flood.count; done"]
    tty: true
    log: {stdout: off}
  ticker:
    command: ["sh", "-c", "i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.01; done"]
`)
	conn := rawAttach(t, p, "flood")
	defer conn.Close()
	count := func() int {
		b, _ := os.ReadFile(filepath.Join(p.Dir, "flood.count"))
		n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		return n
	}
	ticks := func() int {
		return len(regexp.MustCompile(`(?m)^ticker +\| tick `).FindAllStringIndex(p.Out.String(), -1))
	}
	// 200,000 lines of 80 bytes: 16 MB, far beyond the socket's buffers
	// and the attacher's queue.
	from, ticksFrom := count(), ticks()
	eventually(t, 60*time.Second, func() bool { return count() >= from+200000 }, func() string { return strconv.Itoa(count()) }, "the flood going on while its attacher does not read")
	eventually(t, 10*time.Second, func() bool { return ticks() >= ticksFrom+50 }, p.Out.String, "the other process's lines flowing meanwhile")
	buf := make([]byte, 64<<10)
	var seen strings.Builder
	_ = conn.SetReadDeadline(time.Now().Add(scaled(20 * time.Second)))
	for !strings.Contains(seen.String(), "output dropped") {
		n, err := conn.Read(buf)
		if err != nil {
			t.Fatalf("reading the attach after the flood: %v (no drop marker in %d bytes)", err, seen.Len())
		}
		seen.Write(buf[:n])
		if seen.Len() > 64<<20 {
			t.Fatalf("64 MB read without a drop marker")
		}
	}
}

// rawAttach opens an attach on the socket and reads nothing.
func rawAttach(t *testing.T, p *Podvisor, name string) net.Conn {
	t.Helper()
	conn, err := net.Dial("unix", p.Control)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodGet, "http://podvisor/v1/attach?name="+name, nil)
	req.Header.Set("Connection", "Upgrade")
	req.Header.Set("Upgrade", control.AttachProtocol)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	return conn
}

// execIn runs podvisor ARGS on p's socket with input as its stdin.
func execIn(p *Podvisor, input string, args ...string) (string, error) {
	cmd := exec.Command(podvisorBin, append(args, "--control", p.Control)...)
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// The terminal UI marks the process with a terminal and attaches to it
// with a: the UI gives way to the REPL and comes back on detach.
func TestTUIAttach(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "", repl)
	x := newTmux(t, tools["tmux"], 100, 24, nil, podvisorBin, "ui", "--control", p.Control)
	x.waitFor(10*time.Second, "the repl row marked [tty]", func(s string) bool {
		f := row(s, "repl")
		return f != nil && strings.Contains(strings.Join(f, " "), "[tty]")
	})
	x.keys("/", "repl", "Enter")
	x.waitFor(5*time.Second, "the filtered table", contains(">repl"))
	x.keys("a")
	x.waitFor(10*time.Second, "the REPL's prompt in place of the UI", func(s string) bool {
		return strings.Contains(s, "repl>") && !tableShown(s)
	})
	x.keys("from-ui", "Enter")
	x.waitFor(10*time.Second, "the echo", contains("you said: from-ui"))
	x.keys("C-p", "C-q")
	x.waitFor(10*time.Second, "the UI back after the detach", func(s string) bool {
		return tableShown(s) && strings.Contains(s, "attach repl: detached")
	})
}

// A process with a terminal is supervised as any other: its readiness
// comes from its (stripped) output, a restart gives it a fresh terminal,
// and an attacher stays attached across the restart.
func TestAttachAcrossRestart(t *testing.T) {
	p := start(t, "", repl+"    ready: {log: \"repl pid\"}\n")
	x := attachIn(t, p, 80, 24, "repl")
	s := x.waitFor(10*time.Second, "the prompt", contains("repl>"))
	pids := regexp.MustCompile(`repl pid (\d+)`)
	first := pids.FindStringSubmatch(s)
	if first == nil {
		t.Fatalf("no pid:\n%s", s)
	}
	tty := func(pid string) string {
		l, _ := os.Readlink("/proc/" + pid + "/fd/0")
		return l
	}
	firstTTY := tty(first[1])
	p.Operate(t, "restart", "repl")
	s = x.waitFor(10*time.Second, "the next incarnation's output in the same session", func(s string) bool {
		m := pids.FindAllStringSubmatch(s, -1)
		return strings.Contains(s, "repl ended") && len(m) >= 2 && m[len(m)-1][1] != first[1]
	})
	m := pids.FindAllStringSubmatch(s, -1)
	second := m[len(m)-1][1]
	// The number may be the first one's again: the kernel reuses a
	// closed pty's number.
	if secondTTY := tty(second); !strings.HasPrefix(secondTTY, "/dev/pts/") || !strings.HasPrefix(firstTTY, "/dev/pts/") {
		t.Errorf("terminals %q then %q: want a /dev/pts/N each", firstTTY, secondTTY)
	}
	x.keys("still here", "Enter")
	x.waitFor(10*time.Second, "the new incarnation answering", contains("you said: still here"))
}
