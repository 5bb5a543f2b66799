package e2e

// Black-box run of a process-compose file that extends another (issue 37):
// the converted setup runs the merged processes as process-compose does.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportProcessComposeExtends: the base file (beside the main one in
// base/) brings a process of its own, which runs in base/ (process-compose
// gives a base's processes its directory); a process both files define
// takes the main file's command and the union of both environments (the
// main file's value winning) and keeps the base's directory, since the
// main file sets none; the global environment merges the same way; ${VAR}
// in the base reads the .env beside the main file, not one beside the base;
// a process that extends another (process-level extends:) gets its merged
// settings under its own.
func TestImportProcessComposeExtends(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	rec := filepath.Join(dir, "bin/record")
	writeFiles(t, dir, map[string]string{
		"bin/record": "#!/bin/sh\nname=$1; shift\n{ printf 'argv=%s\\n' \"$*\"; printf 'pwd=%s\\n' \"$(pwd -P)\"; printf 'env=%s,%s,%s,%s\\n' \"$MODE\" \"$TZ\" \"$LOG\" \"$CACHE\"; } > \"$OUT/$name.tmp\" && mv \"$OUT/$name.tmp\" \"$OUT/$name\"\n" + ev("$name", "start") + "\ntrap 'exit 0' TERM\nwhile :; do sleep 0.1; done\n",
		".env":       "DATA=from-main-env\n",
		"base/.env":  "DATA=from-base-env\n",
		"base/base.yaml": fmt.Sprintf(`version: "0.5"
environment:
  - "MODE=prod"
  - "TZ=UTC"
processes:
  db:
    command: "%[1]s db --data ${DATA}"
  web:
    command: "%[1]s web --old"
    environment:
      - "LOG=info"
      - "CACHE=on"
`, rec),
		"process-compose.yaml": fmt.Sprintf(`version: "0.5"
extends: base/base.yaml
environment:
  - "MODE=dev"
  - "OUT=%[2]s"
processes:
  web:
    command: "%[1]s web --new"
    environment:
      - "LOG=debug"
  worker:
    command: "%[1]s worker"
  admin:
    extends: web
    command: "%[1]s admin"
    environment:
      - "CACHE=off"
`, rec, out),
	})
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	yaml, report := runImport(t, filepath.Join(dir, "process-compose.yaml"))
	if !strings.Contains(report, "extends base/base.yaml (") {
		t.Fatalf("extends not said in the report:\n%s", report)
	}
	// procs.yaml beside the original, where its relative working_dir
	// resolves (the last -c wins over the harness's own copy)
	conf := filepath.Join(dir, "procs.yaml")
	if err := os.WriteFile(conf, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	r := startPodvisor(t, yaml, withArgs("-c", conf))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"db":     "argv=--data from-main-env\npwd=" + filepath.Join(real, "base") + "\nenv=dev,UTC,,\n",
		"web":    "argv=--new\npwd=" + filepath.Join(real, "base") + "\nenv=dev,UTC,debug,on\n",
		"worker": "argv=\npwd=" + real + "\nenv=dev,UTC,,\n",
		"admin":  "argv=\npwd=" + filepath.Join(real, "base") + "\nenv=dev,UTC,debug,off\n",
	}
	checkSeenAsProcessCompose(t, r, out, yaml, want)
	r.Signal(syscall.SIGTERM)
	if code, _ := r.Wait(30 * time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0; stderr:\n%s", code, r.Stderr)
	}
}
