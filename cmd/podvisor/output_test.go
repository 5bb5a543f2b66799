package main

// -o json (docs/api.md): every command that has it prints JSON that
// validates against its component of schema/openapi.json, with the exit
// code of the text output; -o takes text or json only.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/schema/openapitest"
)

func TestOutputJSON(t *testing.T) {
	doc, err := openapitest.New()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("processes:\n  db:\n    command: sleep 1\n  web:\n    command: sleep 1\n    depends_on: [db]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("processes:\n  web:\n    command: sleep 1\n    depends_on: [dbb]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(shortDir(t), "c.sock")
	ln, err := control.Listen(sock)
	if err != nil {
		t.Fatal(err)
	}
	tails := logs.NewTails(10, 1<<10)
	tails.Get("web").Add("stdout", []byte("web | up"), time.Now()) // a " | " of its own
	tails.Get("web").Add("stderr", []byte("second"), time.Now())
	srv := control.NewServer(cliBackend{tails}, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := startStatusServer(t)
	procfile := filepath.Join(dir, "Procfile")
	if err := os.WriteFile(procfile, []byte("web: sleep 1000\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	imported := filepath.Join(dir, "imported.yaml")

	cases := []struct {
		args      []string
		code      int
		component string
		check     func(v map[string]any) bool // what the JSON must say (of the first line)
		lines     int                         // lines of JSON; 0 means 1
	}{
		{[]string{"version", "-o", "json"}, 0, "Version", func(v map[string]any) bool { return v["version"] == version }, 0},
		{[]string{"check", "-o", "json", "-c", good}, 0, "CheckReport", func(v map[string]any) bool { return v["ok"] == true && v["processes"] == 2.0 && v["levels"] == 2.0 }, 0},
		{[]string{"check", "-o", "json", "-c", bad}, 2, "CheckReport", func(v map[string]any) bool {
			errs, _ := v["errors"].([]any)
			return v["ok"] == false && len(errs) == 1 && strings.Contains(errs[0].(string), `unknown process "dbb"`)
		}, 0},
		{[]string{"graph", "-o", "json", "-c", good}, 0, "Graph", func(v map[string]any) bool {
			edges, _ := v["edges"].([]any)
			return len(edges) == 1 && edges[0].(map[string]any)["from"] == "web" && len(v["levels"].([]any)) == 2
		}, 0},
		{[]string{"status", "-o", "json", "--addr", addr}, 0, "Status", func(v map[string]any) bool { return v["phase"] == "running" }, 0},
		{[]string{"restart", "web", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true && len(v["results"].([]any)) == 1 }, 0},
		{[]string{"stop", "-o", "json", "wbe", "--control", sock}, 1, "CommandResponse", func(v map[string]any) bool {
			return v["ok"] == false && strings.Contains(v["error"].(string), "did you mean")
		}, 0},
		{[]string{"start", "web", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true }, 0},
		{[]string{"signal", "web", "HUP", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true }, 0},
		{[]string{"reload", "--dry-run", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return len(v["plan"].([]any)) == 1 }, 0},
		{[]string{"reload", "-o", "json", "--control", sock}, 1, "CommandResponse", func(v map[string]any) bool { return len(v["errors"].([]any)) == 1 }, 0},
		{[]string{"logs", "web", "-o", "json", "--control", sock}, 0, "LogLine", func(v map[string]any) bool { return v["process"] == "web" && v["line"] == "web | up" }, 2},
		{[]string{"logs", "web", "--grep", "sec", "-o", "json", "--control", sock}, 0, "LogLine", func(v map[string]any) bool { return v["line"] == "second" }, 0},
		{[]string{"logs", "--reopen", "-o", "json", "--control", sock}, 1, "CommandResponse", func(v map[string]any) bool { return v["ok"] == false && v["error"] != "" }, 0},
		{[]string{"wait", "--file", good, "-o", "json"}, 0, "WaitOutcome", func(v map[string]any) bool { return v["ok"] == true && v["target"] == good && v["want"] == "ready" }, 0},
		{[]string{"wait", "--file", good + ".none", "--once", "-o", "json"}, 1, "WaitOutcome", func(v map[string]any) bool { return v["ok"] == false && v["timed_out"] == false }, 0},
		{[]string{"wait", "--gone", "--file", good + ".none", "-o", "json"}, 0, "WaitOutcome", func(v map[string]any) bool { return v["ok"] == true && v["want"] == "gone" }, 0},
		{[]string{"import", procfile, "-o", "json"}, 0, "ImportReport", func(v map[string]any) bool {
			return v["ok"] == true && v["format"] == "procfile" && v["processes"] == 1.0 && strings.Contains(v["config"].(string), "sleep 1000")
		}, 0},
		{[]string{"import", "--output-format", "json", procfile, "-o", imported}, 0, "ImportReport", func(v map[string]any) bool {
			_, err := os.Stat(imported)
			return v["output"] == imported && v["config"] == nil && err == nil
		}, 0},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := realMain(c.args, &out, &errOut)
		name := "podvisor " + strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, c.code, errOut.String())
		}
		lines := strings.SplitAfter(out.String(), "\n")
		if want := max(c.lines, 1); len(lines) != want+1 || lines[want] != "" {
			t.Errorf("%s: want %d lines of JSON: %q", name, want, out.String())
			continue
		}
		for _, l := range lines[:len(lines)-1] {
			if err := doc.JSON(c.component, []byte(l)); err != nil {
				t.Errorf("%s: %v", name, err)
			}
		}
		jqParses(t, name, out.Bytes())
		var v map[string]any
		if err := json.Unmarshal([]byte(lines[0]), &v); err != nil || !c.check(v) {
			t.Errorf("%s: %v %s", name, err, out.String())
		}
	}
}

// jqParses checks that jq reads every line (docs/api.md promises jq works
// on -o json); it needs jq, from Debian (the Makefile's TEST_DEBS).
func jqParses(t *testing.T, name string, out []byte) {
	t.Helper()
	jq, err := exec.LookPath("jq")
	if err != nil {
		return // TestJQPresent says so once
	}
	cmd := exec.Command(jq, "-e", "type == \"object\"")
	cmd.Stdin = bytes.NewReader(out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s: jq: %v: %s", name, err, b)
	}
}

func TestJQPresent(t *testing.T) {
	if _, err := exec.LookPath("jq"); err != nil {
		t.Skip("jq is not installed (apt-get install jq): -o json outputs were not checked with jq")
	}
}

func TestOutputFlagRefusesOtherFormats(t *testing.T) {
	for _, args := range [][]string{{"version", "-o", "yaml"}, {"status", "-o=xml"}, {"restart", "web", "-o", "JSON"}} {
		code, out, errOut := runMain(args...)
		if code != exitUsage || out != "" || !strings.Contains(errOut, "for -o: want text or json, such as -o json") {
			t.Errorf("podvisor %s: exit %d, stdout %q, stderr %q; want exit 2 naming text or json", strings.Join(args, " "), code, out, errOut)
		}
	}
}

// shortDir is a temporary directory whose path fits a unix socket's.
func shortDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "pvo")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
