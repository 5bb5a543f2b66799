package config

import (
	"strings"
	"testing"
)

func TestSockets(t *testing.T) {
	src := `processes:
  web:
    command: x
    sockets:
      - "tcp://0.0.0.0:8080"
      - {listen: "unix:///run/app.sock", name: admin, mode: "0660", backlog: 64}
      - {listen: "udp://127.0.0.1:5353", reuse_port: true}
`
	cfg, err := Parse(testFile, []byte(src), env(nil))
	if err != nil {
		t.Fatal(err)
	}
	s := cfg.Processes["web"].Sockets
	if len(s) != 3 || s[0].Network != "tcp" || s[0].Address != "0.0.0.0:8080" || s[0].Name != "web" ||
		s[1].Network != "unix" || s[1].Name != "admin" || s[1].Mode != 0o660 || s[1].Backlog != 64 ||
		!s[2].ReusePort || s[2].Network != "udp" {
		t.Fatalf("sockets %+v", s)
	}
	if s[0].Pos.Line != 5 || s[1].Pos.Line != 6 {
		t.Fatalf("positions %v %v", s[0].Pos, s[1].Pos)
	}
}

func TestSocketErrors(t *testing.T) {
	tests := []struct{ sockets, want string }{
		{`["http://x:1"]`, `:4:15 processes.web.sockets[0].listen: invalid socket address "http://x:1": unknown scheme "http"`},
		{`["tcp://x:0"]`, "out of range 1-65535"},
		{`["unix://run/a.sock"]`, "must be absolute"},
		{`[{listen: "tcp://:1", mode: "0600"}]`, "mode applies to unix sockets only"},
		{`[{listen: "unix:///a.sock", reuse_port: true}]`, "reuse_port applies to tcp and udp"},
		{`[{listen: "udp://:1", backlog: 5}]`, "stream sockets only"},
		{`[{listen: "tcp://:1", name: "a:b"}]`, "invalid socket name"},
		{`[{name: a}]`, "listen is required"},
		{`["tcp://:1", "tcp://:1"]`, `tcp://:1 is also a socket of "web"`},
		{`{listen: "tcp://:1"}`, "expected a list of sockets"},
	}
	for _, tt := range tests {
		src := "processes:\n  web:\n    command: x\n    sockets: " + tt.sockets + "\n"
		_, err := Parse(testFile, []byte(src), env(nil))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err %v, want %q", tt.sockets, err, tt.want)
		}
	}
	src := "processes:\n  web:\n    command: x\n    ready: {notify: \"fd:3\"}\n    sockets: [\"tcp://:1\"]\n"
	if _, err := Parse(testFile, []byte(src), env(nil)); err == nil || !strings.Contains(err.Error(), "notify fd 3 is taken by a socket or stored fd") {
		t.Errorf("notify fd on a socket: %v", err)
	}
}

func TestSocketsChangeRestarts(t *testing.T) {
	a := &Process{Sockets: []Socket{{Network: "tcp", Address: ":1", Name: "a"}}}
	b := &Process{Sockets: []Socket{{Network: "tcp", Address: ":2", Name: "a"}}}
	if SpawnDiff(a, b) != "sockets changed" || SpawnDiff(a, a) != "" {
		t.Fatal("SpawnDiff ignores sockets")
	}
}

func TestRestartOverlap(t *testing.T) {
	cfg, err := Parse(testFile, []byte("processes:\n  web: {command: x, restart: {overlap: true}}\n"), env(nil))
	if err != nil || !cfg.Processes["web"].Restart.Overlap {
		t.Fatalf("overlap: %v", err)
	}
	_, err = Parse(testFile, []byte("processes:\n  init: {command: x, type: oneshot, restart: {overlap: true}}\n"), env(nil))
	if err == nil || !strings.Contains(err.Error(), "overlap applies to services only") {
		t.Fatalf("oneshot: %v", err)
	}
}
