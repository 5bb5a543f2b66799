package control

import (
	"bufio"
	"context"
	"io"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/logs"
)

// Issue 22 item 9: an attached `podvisor logs -f` made Shutdown wait for
// its whole deadline (podvisor's exit came 1 s after the teardown, past
// shutdown_timeout). Shutdown ends followers at once.
func TestShutdownEndsFollowersAtOnce(t *testing.T) {
	fb := &fakeBackend{tails: logs.NewTails(10, 1<<10)}
	fb.tails.Get("web").Add("stdout", []byte("hello"), time.Now())
	path := filepath.Join(shortDir(t), "c.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(fb, nil)
	go srv.Serve(ln)
	c := newTestClient(path)

	pr, pw := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- c.Logs(context.Background(), pw, "web", -1, true); pw.Close() }()
	pr.SetReadDeadline(time.Now().Add(30 * time.Second))
	br := bufio.NewReader(pr)
	if line, err := br.ReadString('\n'); err != nil || line != "hello\n" {
		t.Fatalf("follower: %q %v", line, err) // attached: it has the tail
	}
	go io.Copy(io.Discard, br)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Shutdown waited for its whole deadline: the follower kept the server open")
	}
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("follower still attached after Shutdown")
	}
}
