package config

import (
	"syscall"

	"go.yaml.in/yaml/v3"
)

var reloadKeys = []string{"signal", "command"}

// Reload is `reload:` on a process: what `podvisor reload NAME` does to
// it (a signal, or a command run in its environment); the process is
// "reloading" until it is done, or, with ready: {notify: systemd}, until
// it says READY=1 again (docs/reference.md).
type Reload struct {
	Signal  syscall.Signal // 0: Command runs instead
	Command []string
	Shell   bool // Command was written as a string (run by /bin/sh -c)
}

func (l *loader) reload(n *yaml.Node, path *keyPath) *Reload {
	f, ok := l.fields(n, path, reloadKeys)
	if !ok {
		return nil
	}
	sigNode, hasSig := f.get("signal")
	cmdNode, hasCmd := f.get("command")
	if hasSig == hasCmd {
		l.errorf(n, path, "reload needs exactly one of signal and command").Hint = "reload: {signal: HUP} or reload: {command: [nginx, -s, reload]}"
		return nil
	}
	if hasSig {
		s, ok := l.text(sigNode.val, path.field("signal"))
		if !ok {
			return nil
		}
		sig, msg, hint := parseStopSignal(s)
		if msg != "" {
			l.errorf(sigNode.val, path.field("signal"), "%s", msg).Hint = hint
			return nil
		}
		return &Reload{Signal: sig}
	}
	argv, shell, ok := l.command(cmdNode.val, path.field("command"))
	if !ok {
		return nil
	}
	return &Reload{Command: argv, Shell: shell}
}
