package config

import "testing"

// restart.during_termination is read, compared, and written back.
func TestRestartDuringTermination(t *testing.T) {
	src := "processes:\n  side: {command: x, sidecar: true, restart: {policy: always, during_termination: true}}\n"
	cfg, err := Parse(testFile, []byte(src), env(nil))
	if err != nil || !cfg.Processes["side"].Restart.DuringTermination {
		t.Fatalf("during_termination: %v", err)
	}
	p := cfg.Processes["side"]
	q := *p
	q.Restart.DuringTermination = false
	if sameRestart(p.Restart, q.Restart) {
		t.Error("a changed during_termination compares equal")
	}
	p.Notes().Restart = true // as kube play writes it
	out := Write(&Document{Processes: []*Process{p}})
	back, err := Parse(testFile, out, env(nil))
	if err != nil || !back.Processes["side"].Restart.DuringTermination {
		t.Fatalf("written back: %v\n%s", err, out)
	}
	if _, err := Parse(testFile, []byte("processes:\n  side: {command: x, restart: {during_termination: yes please}}\n"), env(nil)); err == nil {
		t.Error("a non-boolean during_termination is accepted")
	}
}
