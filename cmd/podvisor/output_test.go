package main

// -o json (docs/api.md): every command that has it prints JSON that
// validates against its component of schema/openapi.json, with the exit
// code of the text output; -o takes text or json only.

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	srv := control.NewServer(cliBackend{logs.NewTails(10, 1<<10)}, nil)
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Shutdown(context.Background()) })
	addr := startStatusServer(t)

	cases := []struct {
		args      []string
		code      int
		component string
		check     func(v map[string]any) bool // what the JSON must say
	}{
		{[]string{"version", "-o", "json"}, 0, "Version", func(v map[string]any) bool { return v["version"] == version }},
		{[]string{"check", "-o", "json", "-c", good}, 0, "CheckReport", func(v map[string]any) bool { return v["ok"] == true && v["processes"] == 2.0 && v["levels"] == 2.0 }},
		{[]string{"check", "-o", "json", "-c", bad}, 2, "CheckReport", func(v map[string]any) bool {
			errs, _ := v["errors"].([]any)
			return v["ok"] == false && len(errs) == 1 && strings.Contains(errs[0].(string), `unknown process "dbb"`)
		}},
		{[]string{"graph", "-o", "json", "-c", good}, 0, "Graph", func(v map[string]any) bool {
			edges, _ := v["edges"].([]any)
			return len(edges) == 1 && edges[0].(map[string]any)["from"] == "web" && len(v["levels"].([]any)) == 2
		}},
		{[]string{"status", "-o", "json", "--addr", addr}, 0, "Status", func(v map[string]any) bool { return v["phase"] == "running" }},
		{[]string{"restart", "web", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true && len(v["results"].([]any)) == 1 }},
		{[]string{"stop", "-o", "json", "wbe", "--control", sock}, 1, "CommandResponse", func(v map[string]any) bool {
			return v["ok"] == false && strings.Contains(v["error"].(string), "did you mean")
		}},
		{[]string{"start", "web", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true }},
		{[]string{"signal", "web", "HUP", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return v["ok"] == true }},
		{[]string{"reload", "--dry-run", "-o", "json", "--control", sock}, 0, "CommandResponse", func(v map[string]any) bool { return len(v["plan"].([]any)) == 1 }},
		{[]string{"reload", "-o", "json", "--control", sock}, 1, "CommandResponse", func(v map[string]any) bool { return len(v["errors"].([]any)) == 1 }},
	}
	for _, c := range cases {
		var out, errOut bytes.Buffer
		code := realMain(c.args, &out, &errOut)
		name := "podvisor " + strings.Join(c.args, " ")
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %q", name, code, c.code, errOut.String())
		}
		if n := strings.Count(out.String(), "\n"); n != 1 || !strings.HasSuffix(out.String(), "\n") {
			t.Errorf("%s: want one line of JSON, got %d lines: %q", name, n, out.String())
		}
		if err := doc.JSON(c.component, out.Bytes()); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || !c.check(v) {
			t.Errorf("%s: %v %s", name, err, out.String())
		}
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
