package config

// terminal reads tty: and stdin: (docs/configuration.md, "Interactive
// processes"). A tty process has one output stream: the terminal merges
// what the child writes to fds 1 and 2, so its log is all "stdout".
func (l *loader) terminal(f fieldSet, p *Process, path *keyPath) {
	if v, ok := f.get("tty"); ok {
		p.TTY, _ = l.boolean(v.val, path.field("tty"))
	}
	if v, ok := f.get("stdin"); ok {
		p.Stdin, _ = l.boolean(v.val, path.field("stdin"))
	}
}

// Attachable reports whether `podvisor attach` can reach p: it has a
// terminal or a stdin pipe.
func (p *Process) Attachable() bool { return p.TTY || p.Stdin }
