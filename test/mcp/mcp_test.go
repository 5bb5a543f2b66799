// Package mcp tests `podvisor mcp` with the official MCP TypeScript SDK
// client (client.mjs, @modelcontextprotocol/sdk from package-lock.json),
// against a running podvisor with real processes. It needs node and the
// packages `npm ci` installs here (the Makefile's test-npm does both).
package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/testharness"
)

// needNode returns node's path, or skips when node or the packages are
// truly absent (fails instead under PODVISOR_REQUIRE_TOOLS=1, as in CI).
func needNode(t *testing.T) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err == nil {
		if _, err = os.Stat("node_modules/@modelcontextprotocol/sdk/package.json"); err != nil {
			err = fmt.Errorf("no @modelcontextprotocol/sdk: run npm ci in test/mcp (make test-npm): %w", err)
		}
	}
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return node
}

func TestMCPWithTypeScriptSDK(t *testing.T) {
	node := needNode(t)
	bin, err := testharness.Binary()
	if err != nil {
		t.Fatal(err)
	}
	for _, actions := range []bool{false, true} {
		t.Run(fmt.Sprintf("actions=%v", actions), func(t *testing.T) {
			dir, err := os.MkdirTemp("", "pvmcp")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(dir) })
			sock := filepath.Join(dir, "c.sock")
			cfg := fmt.Sprintf(`control: %s
listen: "off"
mcp: {actions: %v}
processes:
  web:
    command: ["/bin/sh", "-c", "for i in 1 2 3 4 5; do echo line $i; done; exec sleep 1000"]
  idle:
    command: ["sleep", "1000"]
`, sock, actions)
			path := filepath.Join(dir, "procs.yaml")
			if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
				t.Fatal(err)
			}
			var out testharness.Buffer
			run := exec.Command(bin, "run", "-c", path)
			run.Stdout, run.Stderr = &out, &out
			p, err := testharness.Start(run)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { p.KillTree(30 * time.Second) })
			// Ready when web has printed its lines and the socket answers.
			if !testharness.Poll(60*time.Second, 20*time.Millisecond, func() bool {
				_, err := os.Stat(sock)
				return err == nil && out.Contains("line 5")
			}) {
				t.Fatalf("podvisor did not come up:\n%s", out.String())
			}
			cmd := exec.Command(node, "client.mjs")
			cmd.Env = append(os.Environ(), "PODVISOR_BIN="+bin, "PODVISOR_CONTROL="+sock, "EXPECT_ACTIONS="+map[bool]string{true: "1", false: "0"}[actions])
			var res testharness.Buffer
			cmd.Stdout, cmd.Stderr = &res, &res
			c, err := testharness.Start(cmd)
			if err != nil {
				t.Fatal(err)
			}
			if !c.Wait(2 * time.Minute) {
				c.KillTree(5 * time.Second)
				t.Fatalf("client.mjs did not finish:\n%s", res.String())
			}
			if c.Code() != 0 || !strings.Contains(res.String(), " passed, 0 failed") {
				t.Errorf("client.mjs exit %d:\n%s\npodvisor:\n%s", c.Code(), res.String(), out.String())
			}
		})
	}
}
