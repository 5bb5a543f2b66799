package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMakeRuntimeDir(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	dir, err := makeRuntimeDir()
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil || filepath.Dir(dir) != tmp || fi.Mode().Perm() != 0o711 {
		t.Fatalf("runtime dir %s (%v, %v): want a 0711 directory in TMPDIR %s", dir, fi.Mode(), err, tmp)
	}
}

// TestMakeRuntimeDirUnwritable: with no writable TMPDIR (a read-only root
// filesystem; here a path that is not a directory, which fails for root
// too) the error names the setting that fixes it.
func TestMakeRuntimeDirUnwritable(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TMPDIR", file)
	_, err := makeRuntimeDir()
	if err == nil {
		t.Fatal("no error with TMPDIR on a regular file")
	}
	for _, want := range []string{file, "notify sockets", "set TMPDIR", "read-only root filesystem"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
