package health

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestFile(t *testing.T) {
	dir := t.TempDir()
	start := time.Now()
	touch := func(name string, mtime time.Time) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if !mtime.IsZero() {
			if err := os.Chtimes(p, mtime, mtime); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	stale := touch("stale", start.Add(-time.Hour))
	justBefore := touch("just-before", start.Add(-time.Second))
	fresh := touch("fresh", time.Time{}) // written now, right after start
	// A file system with whole-second timestamps: written in the start's
	// own second, or in the second before.
	coarse := touch("coarse", start.Add(time.Millisecond).Truncate(time.Second))
	coarseBefore := touch("coarse-before", start.Truncate(time.Second).Add(-time.Second))
	dangling := filepath.Join(dir, "dangling")
	if err := os.Symlink(filepath.Join(dir, "missing"), dangling); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		since      time.Time
		ok         bool
		detail     string
	}{
		{"fresh", fresh, start, true, "exists"},
		{"stale", stale, start, false, "stale"},
		{"one second before start", justBefore, start, false, "stale"},
		{"whole seconds, the start's second", coarse, start.Add(time.Millisecond), true, "exists"},
		{"whole seconds, the second before", coarseBefore, start, false, "stale"},
		{"missing", filepath.Join(dir, "missing"), start, false, "does not exist"},
		{"dangling symlink", dangling, start, false, "does not exist"},
		{"no start time", stale, time.Time{}, true, "exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := NewFileChecker(tt.path, tt.since)
			if err != nil {
				t.Fatal(err)
			}
			r, _ := attempt(c, time.Second)
			if r.OK != tt.ok || !strings.Contains(r.Detail, tt.detail) {
				t.Errorf("got %+v, want OK=%v with %q", r, tt.ok, tt.detail)
			}
		})
	}
}

// A stale file stops failing once the process rewrites it.
func TestFileRewritten(t *testing.T) {
	p := filepath.Join(t.TempDir(), "ready")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	c, err := NewFileChecker(p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, time.Second); r.OK {
		t.Fatalf("stale file counted: %+v", r)
	}
	if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, time.Second); !r.OK {
		t.Errorf("rewritten file not counted: %+v", r)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if r, _ := attempt(c, time.Second); r.OK {
		t.Errorf("removed file still counted: %+v", r)
	}
}
