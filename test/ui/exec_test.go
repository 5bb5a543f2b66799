package ui

import (
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
	x := newTmux(t, tools["tmux"], 80, 24, nil, podvisorBin, "exec", "--control", p.Control, "-it", "api", "--", "sh")
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
	// tmux may see the pane's end (EOF) before it has the exit status.
	var code string
	x.waitFor(10*time.Second, "podvisor exec's exit status", func(string) bool {
		code = strings.TrimSpace(x.run("display-message", "-p", "-t", "ui", "#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}"))
		return strings.HasPrefix(code, "1:") && code != "1::"
	})
	if code != "1:7:" {
		t.Errorf("podvisor exec -it ended as %q (dead:status:signal), want the shell's 7:\n%s", code, x.screen())
	}
}
