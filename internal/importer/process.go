package importer

import (
	"strings"
	"time"

	"github.com/podvisor/podvisor/internal/config"
)

// The helpers below build config.Process values as the converters need
// them: every process has its Written annotation (origin, comments, keys
// written as given), and a command is an argv or, given as a string,
// ["/bin/sh", "-c", s] with Shell set (config.Process).

// newProcess starts the process name, defined at origin (file:line, or a
// path), written as a comment above it.
func newProcess(name, origin string) *Process {
	return &Process{Name: name, Written: &config.Written{Origin: origin}}
}

// shellForm is the argv of a command given as the string s.
func shellForm(s string) []string { return []string{"/bin/sh", "-c", s} }

// setShell gives a command the string form s, unless it holds an argv: an
// argv wins over a string whatever their order (systemd's several ExecStop=,
// process-compose's entrypoint and command). An empty s is no command.
func setShell(cmd *[]string, shell *bool, s string) {
	if *cmd != nil && !*shell {
		return
	}
	*cmd, *shell = nil, false
	if s != "" {
		*cmd, *shell = shellForm(s), true
	}
}

// setArgv gives a command the argv words.
func setArgv(cmd *[]string, shell *bool, words []string) {
	*cmd, *shell = words, false
}

// emptyCommand reports whether a command runs nothing: no argv, a blank
// program, or a blank string.
func emptyCommand(cmd []string, shell bool) bool {
	if shell && len(cmd) == 3 {
		return strings.TrimSpace(cmd[2]) == ""
	}
	return len(cmd) == 0 || strings.TrimSpace(cmd[0]) == ""
}

// envEntry is one environment entry as config.Process holds it.
func envEntry(key, value string) string { return key + "=" + value }

// user is the user: spec s; nil when s is empty (podvisor's own user).
func user(s string) *config.User {
	if s == "" {
		return nil
	}
	return &config.User{Spec: s}
}

// userSpec is p's user: as written, "" when none.
func userSpec(p *Process) string {
	if p.User == nil {
		return ""
	}
	return p.User.Spec
}

// setRestart writes the restart policy pol.
func setRestart(p *Process, pol config.Policy) {
	p.Restart = config.Restart{Policy: pol}
	p.Written.Restart = true
}

// setStopTimeout writes stop.timeout d (0s: SIGKILL at once).
func setStopTimeout(p *Process, d time.Duration) {
	p.Stop.Timeout = d
	p.Written.StopTimeout = true
}

// setComment puts the comment how beside key, replacing one there.
func setComment(p *Process, key, how string) {
	if p.Written.Comments == nil {
		p.Written.Comments = map[string]string{}
	}
	p.Written.Comments[key] = how
}
