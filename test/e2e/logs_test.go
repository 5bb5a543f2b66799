package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Issue 29's "done when": with --log-format json every line of a mixed run
// (podvisor's own messages, a restart, both streams, control bytes and
// invalid UTF-8, a line longer than 64 KiB) parses with jq, children's
// lines carry process, stream, incarnation and line; a process whose log
// goes to a file writes JSON lines there, and none of them to stdout.
func TestLogsJSONMixedRunParsesWithJQ(t *testing.T) {
	jq, err := exec.LookPath("jq")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("jq is required")
		}
		t.Skip("jq not installed")
	}
	r := startPodvisor(t, `
log:
  file: logs/{name}.log
processes:
  garbage:
    type: job
    command: 'printf "esc \033[31mred\033[0m nul \000 bad \377\376 cr\r\n"; head -c 70000 /dev/zero | tr "\0" x; echo; echo err >&2'
  twice:
    type: job
    command: 'echo run; test -e {{dir}}/again || { touch {{dir}}/again; exit 1; }'
    restart: {policy: on-failure, backoff: 10ms}
  tofile:
    type: job
    command: 'echo to the file; echo also >&2'
    log: {stdout: file, stderr: file, format: json}
`, withArgs("--log-format", "json"))
	code, _ := r.Wait(20 * time.Second)
	wantCode(t, r, code, 0)
	out := strings.Join(r.Stdout.Lines(), "\n") + "\n"
	cmd := exec.Command(jq, "-c", `select(.stream) | [.process, .stream, .incarnation, (.line | length)]`)
	cmd.Stdin = strings.NewReader(out)
	var jqOut, jqErr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &jqOut, &jqErr
	if err := cmd.Run(); err != nil {
		t.Fatalf("jq: %v: %s\ninput:\n%.2000s", err, jqErr.String(), out)
	}
	got := jqOut.String()
	for _, want := range []string{`["garbage","stdout",1,`, `["garbage","stderr",1,3]`, `["twice","stdout",1,3]`, `["twice","stdout",2,3]`} {
		if !strings.Contains(got, want) {
			t.Errorf("jq output lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, `"tofile"`) {
		t.Errorf("tofile's lines reached stdout:\n%s", got)
	}
	data, err := os.ReadFile(filepath.Join(r.Dir, "logs", "tofile.log"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var rec struct{ Process, Stream, Line string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Process != "tofile" {
			t.Fatalf("tofile.log line %q: %v", l, err)
		}
		lines = append(lines, rec.Stream+":"+rec.Line)
	}
	if len(lines) != 2 || !strings.Contains(strings.Join(lines, " "), "stdout:to the file") || !strings.Contains(strings.Join(lines, " "), "stderr:also") {
		t.Errorf("tofile.log: %v", lines)
	}
}

// An external logrotate renames a process's log file and sends SIGUSR1:
// podvisor opens the name again for the next lines, and still forwards the
// signal to the process.
func TestLogsReopenOnSIGUSR1(t *testing.T) {
	r := startPodvisor(t, `
processes:
  ticker:
    command: 'trap "echo got-usr1" USR1; i=0; while :; do i=$((i+1)); echo tick $i; sleep 0.02; done'
    log: {stdout: file, file: ticker.log}
`)
	path := filepath.Join(r.Dir, "ticker.log")
	has := func(name, s string) bool {
		b, err := os.ReadFile(name)
		return err == nil && strings.Contains(string(b), s)
	}
	eventually(t, 5*time.Second, func() bool { return has(path, "tick 3\n") }, "no ticks in %s", path)
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	r.Signal(syscall.SIGUSR1)
	eventually(t, 5*time.Second, func() bool { return has(path, "tick") }, "no new %s after SIGUSR1", path)
	eventually(t, 5*time.Second, func() bool { return has(path, "got-usr1\n") || has(path+".1", "got-usr1\n") }, "SIGUSR1 not forwarded to ticker")
	old, _ := os.ReadFile(path + ".1")
	cur, _ := os.ReadFile(path)
	if !strings.HasSuffix(string(old), "\n") || !strings.HasPrefix(string(cur), "tick ") && !strings.HasPrefix(string(cur), "got-usr1") {
		t.Errorf("lines torn across the reopen: old ends %q, new starts %q", old[max(0, len(old)-20):], cur[:min(len(cur), 20)])
	}
	r.Signal(syscall.SIGTERM)
	code, _ := r.Wait(10 * time.Second)
	wantCode(t, r, code, 0)
}
