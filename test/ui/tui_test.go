package ui

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// tmux is one tmux server of the test's own (-L), so that nothing of the
// user's is touched, running `podvisor ui` in a window of a given size.
type tmux struct {
	t    *testing.T
	bin  string
	sock string
}

func newTmux(t *testing.T, bin string, w, h int, env []string, argv ...string) *tmux {
	t.Helper()
	x := &tmux{t: t, bin: bin, sock: fmt.Sprintf("podvisor-ui-%d-%d", os.Getpid(), time.Now().UnixNano())}
	args := []string{"new-session", "-d", "-s", "ui", "-x", fmt.Sprint(w), "-y", fmt.Sprint(h)}
	for _, kv := range env {
		args = append(args, "-e", kv)
	}
	// remain-on-exit keeps the pane after the UI quits, so that the test
	// can tell it quit (pane_dead) rather than lose the session.
	args = append(args, strings.Join(argv, " "), ";", "set-option", "-t", "ui", "remain-on-exit", "on")
	x.run(args...)
	t.Cleanup(func() { _ = exec.Command(bin, "-L", x.sock, "kill-server").Run() })
	return x
}

func (x *tmux) run(args ...string) string {
	x.t.Helper()
	out, err := exec.Command(x.bin, append([]string{"-L", x.sock, "-f", "/dev/null"}, args...)...).CombinedOutput()
	if err != nil {
		x.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (x *tmux) keys(keys ...string) { x.run(append([]string{"send-keys", "-t", "ui"}, keys...)...) }

// escape sends Esc alone and waits until the screen shows want: an Esc
// followed at once by a key reads as Alt+key.
func (x *tmux) escape(want func(string) bool) {
	x.t.Helper()
	x.keys("Escape")
	x.waitFor(2*time.Second, "the screen after Esc", want)
}

func tableShown(s string) bool { return strings.Contains(s, "r restart") }

func unfiltered(s string) bool { return tableShown(s) && !strings.Contains(s, ", filter ") }

// screen is the pane's text, one string per row.
func (x *tmux) screen() string { return x.run("capture-pane", "-p", "-t", "ui") }

func (x *tmux) waitFor(timeout time.Duration, what string, cond func(string) bool) string {
	x.t.Helper()
	var s string
	eventually(x.t, timeout, func() bool { s = x.screen(); return cond(s) }, func() string { return s }, "%s", what)
	return s
}

func contains(sub string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, sub) }
}

// row returns the table row of process name, split into fields.
func row(screen, name string) []string {
	for _, l := range strings.Split(screen, "\n") {
		f := strings.Fields(strings.TrimPrefix(l, ">"))
		if len(f) > 5 && f[0] == name {
			return f
		}
	}
	return nil
}

// restarts reads the RST column of name's row ("" if absent).
func restarts(screen, name string) string {
	f := row(screen, name)
	if f == nil {
		return ""
	}
	return f[5]
}

func checkSane(t *testing.T, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(screen, "\n"), "\n")
	if len(lines) != h {
		t.Errorf("%d rows on a %dx%d screen:\n%s", len(lines), w, h, screen)
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > w {
			t.Errorf("row of %d columns on a %d-column screen: %q", n, w, l)
		}
	}
	if !regexp.MustCompile(`(?m)^podvisor running, ready, 4 processes`).MatchString(screen) {
		t.Errorf("no title line:\n%s", screen)
	}
	if !strings.Contains(screen, "r restart") {
		t.Errorf("no key line:\n%s", screen)
	}
}

func TestTerminalUI(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "")
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "ui", "--control", p.Control)

	s := x.waitFor(10*time.Second, "all four processes in the table", func(s string) bool {
		return row(s, "api") != nil && row(s, "db") != nil && row(s, "worker") != nil && row(s, "init") != nil &&
			strings.Contains(s, "ready, 4 processes")
	})
	checkSane(t, s, 80, 24)
	if f := row(s, "init"); f[1] != "completed" {
		t.Errorf("init row %v, want completed", f)
	}
	if f := row(s, "api"); f[1] != "running" || f[2] != "yes" || f[5] != "0" {
		t.Errorf("api row %v, want running, ready, 0 restarts", f)
	}

	// A restart made elsewhere shows within a second.
	p.Operate(t, "restart", "api")
	began := time.Now()
	x.waitFor(time.Second, "api's restart in the table within a second", func(s string) bool { return restarts(s, "api") == "1" })
	t.Logf("the restart showed after %v", time.Since(began).Round(time.Millisecond))

	// Keys act: select api by filter, restart it, confirm.
	x.keys("/", "api", "Enter")
	x.waitFor(2*time.Second, "the filter keeps api only", func(s string) bool { return row(s, "api") != nil && row(s, "db") == nil })
	x.keys("r")
	x.waitFor(2*time.Second, "a confirmation question", contains("restart api? (y/n)"))
	x.keys("n")
	x.waitFor(2*time.Second, "the cancel", contains("restart api: cancelled"))
	x.keys("r")
	x.waitFor(2*time.Second, "a confirmation question", contains("restart api? (y/n)"))
	x.keys("y")
	x.waitFor(5*time.Second, "the outcome and the second restart", func(s string) bool {
		return strings.Contains(s, "restart api: done api: restarted (pid") && restarts(s, "api") == "2"
	})

	// The output pane follows api.
	x.keys("l")
	x.waitFor(3*time.Second, "api's output", func(s string) bool {
		return strings.Contains(s, "output of api") && strings.Count(s, "hello from api") >= 2
	})
	x.escape(func(s string) bool { return !strings.Contains(s, "output of api") }) // stop following
	x.escape(unfiltered)

	// The dependency view says what each waits on.
	x.keys("d")
	x.waitFor(3*time.Second, "the dependency view", contains("api [running]  ← ✓ db: ready"))
	x.escape(tableShown)
	x.keys("t")
	x.waitFor(3*time.Second, "the timeline", contains("critical chain"))
	x.escape(tableShown)

	// Stop and start db, which takes api and worker with it.
	x.keys("/", "db", "Enter", "S", "y")
	x.waitFor(5*time.Second, "db stopped", func(s string) bool {
		f := row(s, "db")
		return f != nil && f[1] == "stopped" && strings.Contains(s, ", filter db")
	})
	x.escape(unfiltered)
	x.keys("/", "api", "Enter")
	// The filter must show before the next Esc: an Esc read together with
	// the next key is Alt+key.
	x.waitFor(3*time.Second, "api stopped with db", func(s string) bool {
		f := row(s, "api")
		return f != nil && f[1] == "stopped" && row(s, "db") == nil && strings.Contains(s, ", filter api")
	})
	x.escape(unfiltered)
	x.keys("/", "db", "Enter", "s", "y")
	x.waitFor(5*time.Second, "db running again", func(s string) bool {
		f := row(s, "db")
		return f != nil && f[1] == "running" && strings.Contains(s, ", filter db")
	})
	x.escape(unfiltered)

	// Resizing redraws at the new size.
	x.run("resize-window", "-t", "ui", "-x", "120", "-y", "40")
	s = x.waitFor(3*time.Second, "the 120x40 layout", func(s string) bool {
		return len(strings.Split(strings.TrimSuffix(s, "\n"), "\n")) == 40 && strings.Contains(s, "WAITING FOR / REASON") && row(s, "worker") != nil &&
			strings.Contains(s, "ready, 4 processes") && strings.Contains(s, "r restart") // the key line: the redraw is whole
	})
	checkSane(t, s, 120, 40)
	x.run("resize-window", "-t", "ui", "-x", "80", "-y", "24")
	s = x.waitFor(3*time.Second, "back to 80x24", func(s string) bool {
		return len(strings.Split(strings.TrimSuffix(s, "\n"), "\n")) == 24 && row(s, "worker") != nil && strings.Contains(s, "ready, 4 processes") &&
			strings.Contains(s, "r restart") // tmux can show a redraw half done
	})
	checkSane(t, s, 80, 24)

	x.keys("q")
	x.waitFor(3*time.Second, "the UI to quit", func(string) bool {
		return strings.TrimSpace(x.run("display-message", "-p", "-t", "ui", "#{pane_dead}")) == "1"
	})
}

func TestTerminalUINoColor(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "")
	x := newTmux(t, tools["tmux"], 80, 24, []string{"NO_COLOR=1"}, podvisorBin, "ui", "--control", p.Control)
	x.waitFor(10*time.Second, "the table", func(s string) bool { return row(s, "worker") != nil })
	// capture-pane -e keeps the escape sequences: no colour (SGR 30-37)
	// may be among them.
	s := x.run("capture-pane", "-p", "-e", "-t", "ui")
	if m := regexp.MustCompile(`\x1b\[[0-9;]*3[0-7][0-9;]*m`).FindString(s); m != "" {
		t.Errorf("NO_COLOR=1, and the screen has the colour %q:\n%s", m, s)
	}
	x.keys("q")
}

// TestTerminalUIOverHTTP watches a podvisor through its HTTP port, as
// under kubectl port-forward: the table is live, and without a token an
// action is refused and changes nothing.
func TestTerminalUIOverHTTP(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "")
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "ui", "--http", "http://"+p.Addr)
	x.waitFor(10*time.Second, "the table", func(s string) bool { return row(s, "worker") != nil && strings.Contains(s, "ready, 4 processes") })
	p.Operate(t, "restart", "worker")
	x.waitFor(time.Second, "worker's restart within a second", func(s string) bool { return restarts(s, "worker") == "1" })
	x.keys("/", "api", "Enter")
	x.waitFor(2*time.Second, "the filter", func(s string) bool { return row(s, "db") == nil && strings.Contains(s, ", filter api") })
	x.keys("r", "y")
	s := x.waitFor(5*time.Second, "the refusal", contains("restart api: refused actions are disabled"))
	if got := restarts(s, "api"); got != "0" {
		t.Errorf("api restarted by a refused action: restarts %s", got)
	}
	x.keys("l")
	x.waitFor(3*time.Second, "why output is not shown", contains("ui.logs"))
	x.keys("q")
}

// TestTerminalUIShowsWhyItWaits: a process held back by a dependency that
// is not ready yet says so in its row, and starts as soon as it is.
func TestTerminalUIShowsWhyItWaits(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "", `  cache:
    command: ["sh", "-c", "echo cache warming; exec sleep 100000"]
    ready: {file: "{{dir}}/cache-warm", start_interval: 50ms}
  web:
    command: ["sh", "-c", "echo web up; exec sleep 100000"]
    depends_on: [api, cache]
`)
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "ui", "--control", p.Control)
	s := x.waitFor(10*time.Second, "web pending on cache", func(s string) bool {
		f := row(s, "web")
		return f != nil && f[1] == "pending" && strings.Contains(s, "cache: ready") && row(s, "worker") != nil
	})
	if f := row(s, "cache"); f == nil || f[1] != "starting" || f[2] != "no" {
		t.Errorf("cache row %v, want starting, not ready", f)
	}
	if dir := os.Getenv("PODVISOR_UI_SCREENSHOTS"); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, "ui-tui.txt"), []byte(s), 0o644); err != nil {
			t.Error(err)
		}
	}
	if err := os.WriteFile(filepath.Join(p.Dir, "cache-warm"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	x.waitFor(3*time.Second, "web running once cache is ready", func(s string) bool {
		f := row(s, "web")
		return f != nil && f[1] == "running" && strings.Contains(s, "podvisor running, ready, 6 processes")
	})
	x.keys("q")
}
