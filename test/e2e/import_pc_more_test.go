package e2e

// Black-box runs of what import now converts from process-compose files it
// refused before (issue 37), checked against what process-compose does:
// {{or "${VAR}" .VAR}}, a process without command, a disabled process, and
// disable_env_expansion.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportProcessComposeOrTemplateNoCommandDisabled: the argv seen by a
// stand-in takes ${VAR} when podvisor's environment sets it and the var
// otherwise (process-compose expands the file, then renders the template);
// a process without command exits 0 at once and counts as done; a disabled
// process is not started until started by hand.
func TestImportProcessComposeOrTemplateNoCommandDisabled(t *testing.T) {
	dir := t.TempDir()
	argv := filepath.Join(dir, "argv")
	writeFiles(t, dir, map[string]string{
		"bin/record": "#!/bin/sh\nname=$1; shift\nprintf '%s\\n' \"$*\" > \"$ARGV.$name\"\n" + ev("$name", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		"process-compose.yaml": fmt.Sprintf(`version: "0.5"
vars:
  PORT: "4222"
  HOST: "localhost"
processes:
  broker:
    command: '%[1]s/bin/record broker --port={{ or "${BROKER_PORT}" .PORT }} --host={{ or "${BROKER_HOST}" .HOST }}'
    environment:
      - "ARGV=%[2]s"
  placeholder:
    compose:
      service: mysql
  after:
    command: "%[1]s/bin/record after"
    environment:
      - "ARGV=%[2]s"
    depends_on:
      placeholder:
        condition: process_completed_successfully
  profiler:
    command: "%[1]s/bin/record profiler"
    environment:
      - "ARGV=%[2]s"
    disabled: true
`, dir, argv),
	})
	yaml, _ := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	if !strings.Contains(yaml, "\nversion: 1\n") {
		t.Fatalf("no version line to put the control socket after:\n%s", yaml)
	}
	yaml = strings.Replace(yaml, "\nversion: 1\n", "\nversion: 1\ncontrol: \"{{dir}}/c.sock\"\n", 1) // for podvisor start
	r := startPodvisor(t, yaml, withHTTP(), withEnv("BROKER_PORT=5555"))
	r.WaitEvent(t, "broker", "start", 10*time.Second)
	r.WaitEvent(t, "after", "start", 10*time.Second) // placeholder completed with exit 0
	if got := strings.TrimSpace(readFile(argv + ".broker")); got != "--port=5555 --host=localhost" {
		t.Errorf("broker argv %q, want the environment's port and the var's host", got)
	}
	ffWaitStatus(t, r, 20*time.Second, func(s ffStatus) bool {
		p := s.proc("placeholder")
		return p.State == "completed" && p.Ready
	}, "placeholder completed and ready")
	if _, err := os.Stat(argv + ".profiler"); err == nil {
		t.Fatalf("the disabled process was started by podvisor run")
	}
	mustCtl(t, r, 0, "start", "profiler")
	r.WaitEvent(t, "profiler", "start", 10*time.Second)
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}

// TestImportProcessComposeDisableEnvExpansion: with expansion off,
// process-compose passes $VAR and ${VAR} to bash -c as written, and the
// shell expands them from the process's environment at run time (here one
// that environment: sets, which load-time expansion would have missed).
func TestImportProcessComposeDisableEnvExpansion(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	writeFiles(t, dir, map[string]string{
		"process-compose.yaml": fmt.Sprintf(`disable_env_expansion: true
processes:
  report:
    command: 'printf "%%s|%%s|%%s\n" "$GREETING" "${GREETING}" "$$" > %[1]s.tmp && mv %[1]s.tmp %[1]s'
    environment:
      - "GREETING=price $10"
`, out),
	})
	yaml, report := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	if !strings.Contains(report, "disable_env_expansion (every $ of the file kept as text") {
		t.Fatalf("disable_env_expansion not said:\n%s", report)
	}
	r := startPodvisor(t, yaml, withHTTP(), withEnv("GREETING=from podvisor"))
	eventually(t, 20*time.Second, func() bool { _, err := os.Stat(out); return err == nil }, "report did not write %s", out)
	got := strings.Split(strings.TrimSpace(readFile(out)), "|")
	if len(got) != 3 || got[0] != "price $10" || got[1] != "price $10" || got[2] == "$$" || got[2] == "" {
		t.Errorf("the shell saw %q, want the process's GREETING twice (its $10 as text) and its own pid for $$", got)
	}
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}
