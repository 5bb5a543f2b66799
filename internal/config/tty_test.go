package config

import (
	"strings"
	"testing"
)

func TestTerminalKeys(t *testing.T) {
	cfg := mustParse(t, "processes:\n  repl: {command: sh, tty: true}\n  feed: {command: cat, stdin: true}\n  plain: {command: x}\n", nil)
	for name, want := range map[string][2]bool{"repl": {true, false}, "feed": {false, true}, "plain": {false, false}} {
		p := cfg.Processes[name]
		if p.TTY != want[0] || p.Stdin != want[1] || p.Attachable() != (want[0] || want[1]) {
			t.Errorf("%s: tty %v stdin %v attachable %v; want %v", name, p.TTY, p.Stdin, p.Attachable(), want)
		}
	}
	_, err := Parse("procs.yaml", []byte("processes:\n  repl:\n    command: sh\n    tty: yes please\n"), nil)
	if err == nil || !strings.Contains(err.Error(), "procs.yaml:4:10 processes.repl.tty: expected true or false") {
		t.Errorf("bad tty: %v", err)
	}
}
