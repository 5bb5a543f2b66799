package launch

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/logs"
	"github.com/podvisor/podvisor/internal/proc"
	"github.com/podvisor/podvisor/internal/supervisor"
)

// Every incarnation of a notify: systemd process gets a socket of its own,
// even though sockets are made ahead of need (notifyPool): a
// different path each time, gone once its incarnation has exited, and a
// READY=1 sent to it reaches that incarnation's hook.
func TestNotifySocketPerIncarnation(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	l := testLauncher(t)
	l.RuntimeDir = staticDir(dir)
	out := filepath.Join(t.TempDir(), "sock")
	yml := "processes:\n  p:\n    command: \"printf %s \\\"$$NOTIFY_SOCKET\\\" > " + out + "; exec python3 -c 'import os, socket; s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.sendto(b\\\"READY=1\\\", os.environ[\\\"NOTIFY_SOCKET\\\"])'\"\n    ready: {notify: systemd}\n"
	cfg, err := config.Parse("test.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Processes["p"]
	var paths []string
	for gen := range 3 {
		ready := make(chan string, 1)
		exited := make(chan struct{})
		_, err := l.Launch(p, uint64(gen), supervisor.Hooks{
			Ready:  func(d string) { ready <- d },
			Status: func(string) {},
			Exited: func(proc.Exit) { close(exited) },
		})
		if err != nil {
			t.Fatal(err)
		}
		select {
		case <-ready:
		case <-time.After(20 * time.Second):
			t.Fatalf("incarnation %d: READY=1 never arrived", gen)
		}
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			t.Fatalf("incarnation %d never exited", gen)
		}
		b, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		path := string(b)
		if filepath.Dir(path) != dir {
			t.Fatalf("NOTIFY_SOCKET %q not in the runtime dir %s", path, dir)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Errorf("incarnation %d: socket %s still exists after its exit (err %v)", gen, path, err)
		}
		for _, old := range paths {
			if old == path {
				t.Fatalf("incarnation %d reuses socket %s", gen, path)
			}
		}
		paths = append(paths, path)
	}
	if !strings.HasPrefix(filepath.Base(paths[0]), "notify-") {
		t.Errorf("unexpected socket name %s", paths[0])
	}
}

// staticDir is a RuntimeDir that exists already.
func staticDir(dir string) func() (string, error) {
	return func() (string, error) { return dir, nil }
}

// A Launcher without a logger (benchmarks, tests) survives what it would
// log: a notify fd closed without a newline (it used to dereference nil).
func TestNilLogNotifyFDClosed(t *testing.T) {
	l := testLauncher(t) // no Log
	yml := "processes:\n  p:\n    command: \"exec 3>&-\"\n    ready: {notify: \"fd:3\"}\n"
	cfg, err := config.Parse("test.yaml", []byte(yml), func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	ready := make(chan string, 1)
	if _, err := l.Launch(cfg.Processes["p"], 1, supervisor.Hooks{
		Ready:  func(d string) { ready <- d },
		Status: func(string) {},
		Exited: func(proc.Exit) { close(exited) },
	}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		t.Fatal("the child never exited")
	}
	select {
	case d := <-ready:
		t.Fatalf("a closed fd counted as readiness: %q", d)
	default:
	}
}

// testLauncher is a Launcher over a reaper and a sink of its own, without a
// logger or a runtime directory; both end with the test.
func testLauncher(t *testing.T) *Launcher {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	r := proc.NewReaper(nil)
	go r.Run(ctx)
	sink := logs.NewSink(io.Discard, logs.Options{})
	t.Cleanup(func() { sink.Close(context.Background()) })
	return &Launcher{Reaper: r, Sink: sink, BaseEnv: os.Environ()}
}
