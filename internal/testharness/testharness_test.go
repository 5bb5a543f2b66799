package testharness

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Second, time.Millisecond, func() bool { n++; return n == 3 }) {
		t.Fatal("Poll gave up on a condition that came true")
	}
	if n != 3 {
		t.Errorf("cond called %d times, want 3", n)
	}
	start := time.Now()
	if Poll(30*time.Millisecond, 5*time.Millisecond, func() bool { return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if took := time.Since(start); took < 30*time.Millisecond {
		t.Errorf("Poll gave up after %v, before its 30ms deadline", took)
	}
}

func TestSlowdown(t *testing.T) {
	for _, c := range []struct {
		env     string
		want    float64
		wantErr bool
	}{{"", 1, false}, {"2.5", 2.5, false}, {"0.5", 1, true}, {"x", 1, true}} {
		t.Setenv("PODVISOR_TEST_SLOWDOWN", c.env)
		got, err := Slowdown()
		if got != c.want || (err != nil) != c.wantErr {
			t.Errorf("PODVISOR_TEST_SLOWDOWN=%q: %v, %v; want %v, error %v", c.env, got, err, c.want, c.wantErr)
		}
	}
	if got := Scale(time.Second, 2.5); got != 2500*time.Millisecond {
		t.Errorf("Scale(1s, 2.5) = %v", got)
	}
}

func TestEvents(t *testing.T) {
	if got, want := Stamp("E2E_EVENTS", "a", "up"), `echo "a up $(date +%s%N) $$$$" >> "$E2E_EVENTS"`; got != want {
		t.Errorf("Stamp = %s, want %s", got, want)
	}
	evs, err := ParseEvents([]byte("a up 100 42\nb down 200\nhalf li\nc bad x\na up 300 7 more\n"))
	if err == nil || !strings.Contains(err.Error(), "c bad x") {
		t.Errorf("err = %v, want the bad line named", err)
	}
	if len(evs) != 3 {
		t.Fatalf("events %v, want 3", evs)
	}
	if e, ok := FindEvent(evs, "a", "up"); !ok || e.Pid() != 42 || e.At.UnixNano() != 100 {
		t.Errorf("FindEvent a up = %+v, %v", e, ok)
	}
	if got := FilterEvents(evs, "a", "up"); len(got) != 2 || got[1].Rest != "7 more" || got[1].Pid() != 7 {
		t.Errorf("FilterEvents a up = %+v", got)
	}
	if got := FirstTimes(evs); got["a up"] != 100 || got["b down"] != 200 || len(got) != 2 {
		t.Errorf("FirstTimes = %v", got)
	}
	if evs, err := ReadEvents(filepath.Join(t.TempDir(), "none")); evs != nil || err != nil {
		t.Errorf("missing file: %v, %v", evs, err)
	}
}

func TestStampRunsInShell(t *testing.T) {
	path := filepath.Join(t.TempDir(), "events")
	// podvisor turns $$ into $ at load; do the same for sh.
	script := strings.ReplaceAll(Stamp("EV", "sh", "ran"), "$$", "$")
	cmd := exec.Command("sh", "-c", script)
	cmd.Env = append(os.Environ(), "EV="+path)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	evs, err := ReadEvents(path)
	if err != nil {
		t.Fatal(err)
	}
	e, ok := FindEvent(evs, "sh", "ran")
	if !ok || e.Pid() != cmd.Process.Pid || time.Since(e.At) > time.Minute {
		t.Errorf("event %+v, %v; want pid %d and a recent time", e, ok, cmd.Process.Pid)
	}
}

func TestBuffer(t *testing.T) {
	var b Buffer
	b.Write([]byte("one\r\ntwo\nthr"))
	if got := b.Lines(); !slices.Equal(got, []string{"one", "two"}) {
		t.Errorf("Lines = %q", got)
	}
	if !b.Contains("thr") || b.Contains("four") {
		t.Error("Contains")
	}
	var empty Buffer
	if empty.Lines() != nil {
		t.Error("Lines of nothing")
	}
}

func TestEnviron(t *testing.T) {
	t.Setenv("PODVISOR_CONFIG", "/x")
	t.Setenv("TESTHARNESS_KEEP", "1")
	env := Environ([]string{"PODVISOR_CONFIG"}, "A=1")
	if slices.Contains(env, "PODVISOR_CONFIG=/x") || !slices.Contains(env, "TESTHARNESS_KEEP=1") {
		t.Errorf("drop/keep wrong: %v", env)
	}
	if n := len(env); n < 2 || env[n-2] != ControlOff || env[n-1] != "A=1" {
		t.Errorf("tail of env %v, want %s then A=1", env, ControlOff)
	}
}

func TestProcessExitAndProc(t *testing.T) {
	p, err := Start(exec.Command("sh", "-c", "exit 3"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.Wait(10*time.Second) || p.Code() != 3 || p.ExitedAt().IsZero() || p.Err() == nil {
		t.Fatalf("exit: code %d at %v err %v", p.Code(), p.ExitedAt(), p.Err())
	}

	// sh with a child and a grandchild; KillTree takes all three.
	p, err = Start(exec.Command("sh", "-c", "sh -c 'sleep 300 & wait' & wait"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Exited() || p.Code() != -1 {
		t.Fatal("exited at once")
	}
	var tree []int
	if !Poll(10*time.Second, 10*time.Millisecond, func() bool { tree = Descendants(p.Pid()); return len(tree) == 2 }) {
		t.Fatalf("descendants %v, want 2", tree)
	}
	if kids := Children(p.Pid()); len(kids) != 1 || kids[0] != tree[0] {
		t.Errorf("children %v, descendants %v", kids, tree)
	}
	st, err := ReadStat(tree[1])
	if err != nil || st.Comm != "sleep" || st.PPid != tree[0] || st.Start == 0 {
		t.Errorf("stat of sleep: %+v, %v", st, err)
	}
	if got := PidsWithArg("300"); !slices.Contains(got, tree[1]) {
		t.Errorf("PidsWithArg(300) = %v, want %d in it", got, tree[1])
	}
	if v, err := StatusField(tree[1], "Name"); v != "sleep" || err != nil {
		t.Errorf("StatusField Name = %q, %v", v, err)
	}
	if !p.KillTree(10 * time.Second) {
		t.Fatal("KillTree: no exit")
	}
	if p.Code() != 128+int(syscall.SIGKILL) {
		t.Errorf("code %d, want 137", p.Code())
	}
	if !Poll(10*time.Second, 10*time.Millisecond, func() bool {
		_, err := ReadStat(tree[1])
		return err != nil || len(Zombies(tree)) == len(tree)
	}) {
		t.Errorf("grandchild %d survived KillTree", tree[1])
	}
}

func TestProcSelf(t *testing.T) {
	fds, err := OpenFDs(os.Getpid())
	if err != nil || len(fds) < 3 {
		t.Fatalf("OpenFDs: %v, %v", fds, err)
	}
	ns, err := PIDNamespace(os.Getpid())
	if err != nil {
		t.Skip(err)
	}
	if !slices.Contains(NamespaceMembers(ns), os.Getpid()) {
		t.Error("NamespaceMembers misses the test itself")
	}
	if _, err := StatusField(os.Getpid(), "NoSuchKey"); err == nil {
		t.Error("StatusField found a key that is not there")
	}
}

func TestFreePorts(t *testing.T) {
	ports, err := FreePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ports) != 3 || ports[0] == ports[1] || ports[1] == ports[2] || ports[0] == ports[2] {
		t.Errorf("ports %v", ports)
	}
}

// TestBuildCached builds a tiny module twice from two goroutines and once
// more after a change: one build per source, a new one when it changes.
func TestBuildCached(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go build")
	}
	root, cache := t.TempDir(), t.TempDir()
	write := func(rel, body string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/m\n\ngo 1.22\n")
	write("cmd/podvisor/main.go", "package main\n\nimport _ \"example.com/m/lib\"\n\nfunc main() { println(\"one\") }\n")
	write("lib/lib.go", "package lib\n")
	write("other/other.go", "package other\n")
	write("cmd/podvisor/main_test.go", "package main\n")
	write("test/e2e/x.go", "package e2e\n")

	var wg sync.WaitGroup
	bins := make([]string, 2)
	errs := make([]error, 2)
	for i := range bins {
		wg.Go(func() { bins[i], errs[i] = buildCached(root, cache) })
	}
	wg.Wait()
	if errs[0] != nil || errs[1] != nil {
		t.Fatal(errs)
	}
	if bins[0] != bins[1] {
		t.Errorf("two binaries for one source: %v", bins)
	}
	fi, err := os.Stat(filepath.Dir(bins[0]))
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("cache dir mode %v, %v; want 0755", fi.Mode(), err)
	}
	if out, err := exec.Command(bins[0]).CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "one" {
		t.Errorf("binary says %q, %v", out, err)
	}

	// Test files and test/ do not count; source does.
	key, _ := SourceKey(root)
	write("cmd/podvisor/main_test.go", "package main\n\n// changed\n")
	write("test/e2e/x.go", "package e2e\n\n// changed\n")
	write("other/other.go", "package other\n\n// changed\n")
	if k, _ := SourceKey(root); k != key {
		t.Error("a test file or a package podvisor does not import changed the source key")
	}
	write("lib/data.txt", "embedded, say\n")
	if k, _ := SourceKey(root); k == key {
		t.Error("a new file in an imported package left the source key as it was")
	}
	write("cmd/podvisor/main.go", "package main\n\nimport _ \"example.com/m/lib\"\n\nfunc main() { println(\"two\") }\n")
	bin, err := buildCached(root, cache)
	if err != nil {
		t.Fatal(err)
	}
	if bin == bins[0] {
		t.Fatal("a source change reused the old binary")
	}
	if out, _ := exec.Command(bin).CombinedOutput(); strings.TrimSpace(string(out)) != "two" {
		t.Errorf("rebuilt binary says %q", out)
	}
}

func TestSharedTempDir(t *testing.T) {
	var dir string
	t.Run("make", func(t *testing.T) {
		var err error
		if dir, err = SharedTempDir(t, "testharness-", 0o755); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm() != 0o755 {
			t.Errorf("mode %v, %v", fi.Mode(), err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still there after cleanup: %v", dir, err)
	}
}
