package e2e

// The web page's token file (issue 34 items 14 and 16): `podvisor run` and
// `podvisor check` judge ui.token_file alike, with one message, and neither
// ever waits on what stands at that path.

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

const tokenConfig = `ui:
  actions: true
  token_file: tok
processes:
  a:
    command: ` + ffMarkerCmd + `
`

// badTokens are token files run refuses: how to make each, and what the
// refusal must say besides the path.
func badTokens() []struct {
	name string
	make func(t *testing.T, path string)
	want string
} {
	write := func(mode os.FileMode, body string) func(*testing.T, string) {
		return func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(body), mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(p, mode); err != nil {
				t.Fatal(err)
			}
		}
	}
	return []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"fifo", func(t *testing.T, p string) {
			if err := unix.Mkfifo(p, 0o600); err != nil {
				t.Fatal(err)
			}
		}, "named pipe"},
		{"mode 0644", write(0o644, "0123456789abcdef0123\n"), "chmod 600"},
		{"short", write(0o600, "short\n"), "at least 16"},
		{"too big", write(0o600, strings.Repeat("a", 5000)), "at most 4096 bytes"},
		{"directory", func(t *testing.T, p string) {
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		}, "directory"},
		{"missing", func(*testing.T, string) {}, "no such file"},
	}
}

// Item 14: a FIFO as ui.token_file hung `podvisor run` at start (open
// waited for a writer) and SIGTERM did not end it. Item 16: `podvisor
// check` said ok for every token file run refuses. Each bad file: run exits
// 1 before starting anything, check exits 2, both with the same message
// naming the file and the fix.
func TestUITokenFileRunAndCheckAgree(t *testing.T) {
	for _, tc := range badTokens() {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "procs.yaml")
			if err := os.WriteFile(cfg, []byte(tokenConfig), 0o644); err != nil {
				t.Fatal(err)
			}
			tok := filepath.Join(dir, "tok")
			tc.make(t, tok)

			check := ffRunCLI(t, dir, 10*time.Second, "check", "-c", cfg)
			if check.Code != 2 || !strings.Contains(check.Stderr, tok) || !strings.Contains(check.Stderr, tc.want) {
				t.Errorf("check: exit %d, stderr %q; want 2 naming %s and %q", check.Code, check.Stderr, tok, tc.want)
			}
			run := ffRunCLI(t, dir, 10*time.Second, "run", "-c", cfg, "--listen", "off")
			out := run.Stdout + run.Stderr
			if run.Code != 1 || !strings.Contains(out, tok) || !strings.Contains(out, tc.want) {
				t.Errorf("run: exit %d, output %q; want 1 naming %s and %q", run.Code, out, tok, tc.want)
			}
			if _, err := os.Stat(filepath.Join(dir, "spawned")); err == nil {
				t.Error("run started a process despite the bad token file")
			}
			// One message: the line check prints is in run's output too.
			msg := strings.TrimSpace(check.Stderr)
			if i := strings.Index(msg, "ui token file"); i >= 0 {
				msg = msg[i:]
			}
			if !strings.Contains(strings.ReplaceAll(out, `\"`, `"`), msg) {
				t.Errorf("run and check word it differently:\ncheck: %s\nrun:   %s", check.Stderr, out)
			}
		})
	}
	// A good token file passes both.
	dir := t.TempDir()
	cfg := filepath.Join(dir, "procs.yaml")
	if err := os.WriteFile(cfg, []byte(tokenConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tok"), []byte("0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := ffRunCLI(t, dir, 10*time.Second, "check", "-c", cfg); res.Code != 0 {
		t.Errorf("check with a good token file: exit %d: %s", res.Code, res.Stderr)
	}
}
