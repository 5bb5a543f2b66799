package launch

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestReadPidFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	if pid, err := readPidFile(write("ok", " 4242\n")); err != nil || pid != 4242 {
		t.Errorf("ok: %d, %v", pid, err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(write("target", "4242\n"), link); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ path, want string }{
		{write("long", strings.Repeat("1", 65)), "longer than 64 bytes"},
		{write("word", "nginx\n"), `holds "nginx"`},
		{write("one", "1\n"), `holds "1"`},
		{write("neg", "-5"), `holds "-5"`},
		{write("empty", ""), `holds ""`},
		{link, "is a symlink"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "none"), "no such file"},
	} {
		if _, err := readPidFile(tc.path); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.path, err, tc.want)
		}
	}
}

func FuzzParsePid(f *testing.F) {
	for _, s := range []string{"4242\n", " 7 ", "1", "0", "-5", "+5", "4194304", "4194305", "99999999999999999999", "12 34", "0x10", ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		pid, ok := parsePid(b)
		if !ok {
			return
		}
		if pid <= 1 || pid > 1<<22 || strings.TrimLeft(strings.TrimSpace(string(b)), "0") != strconv.Itoa(pid) {
			t.Fatalf("parsePid(%q) = %d", b, pid)
		}
	})
}
