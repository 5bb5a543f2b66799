package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// podvisor exec -it: a shell in a process's context on the caller's
// terminal (tmux's), in raw mode: what is typed reaches it, its terminal
// follows the window's size, Ctrl-C reaches its foreground job and not
// podvisor exec, and exec exits with the shell's code.
func TestExecTTY(t *testing.T) {
	tools := need(t, "tmux")
	p := start(t, "")
	// tmux runs the line with sh -c; the shell writes exec's exit status
	// down, since tmux can mark the pane dead on its terminal's end and
	// never show the status (pane_dead_status stayed empty in 1 run of 10).
	status := filepath.Join(t.TempDir(), "status")
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "exec", "--control", p.Control, "-it", "api", "--", "sh",
		";", "echo", `"exit:$?"`, ">", status+".tmp", ";", "mv", status+".tmp", status)
	// capture-pane drops the prompt's trailing space.
	prompt := regexp.MustCompile(`(?m)^[#$]$`)
	x.waitFor(10*time.Second, "the shell's prompt", prompt.MatchString)
	x.keys("echo typed-$((6*7))", "Enter")
	x.waitFor(10*time.Second, "the typed line and its output", func(s string) bool {
		return strings.Contains(s, "echo typed-$((6*7))") && strings.Contains(s, "\ntyped-42")
	})
	x.keys("stty size", "Enter")
	x.waitFor(10*time.Second, "stty size 24 80", contains("\n24 80"))
	x.run("resize-window", "-t", "ui", "-x", "90", "-y", "30")
	x.keys("stty size", "Enter")
	x.waitFor(10*time.Second, "stty size 30 90 after the resize", contains("\n30 90"))
	x.keys("sleep 100000", "Enter")
	x.keys("C-c")
	x.keys("echo still-$((1+1))", "Enter")
	x.waitFor(10*time.Second, "the shell after Ctrl-C stopped its job", contains("\nstill-2"))
	if dead := strings.TrimSpace(x.run("display-message", "-p", "-t", "ui", "#{pane_dead}")); dead == "1" {
		t.Fatalf("Ctrl-C ended podvisor exec:\n%s", x.screen())
	}
	x.keys("exit 7", "Enter")
	var got string
	eventually(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(status)
		got = strings.TrimSpace(string(b))
		return got != ""
	}, func() string { return x.screen() + "\npodvisor's log:\n" + p.Out.String() }, "podvisor exec's exit status")
	if got != "exit:7" {
		t.Errorf("podvisor exec -it ended with %q, want the shell's exit:7:\n%s", got, x.screen())
	}
}
