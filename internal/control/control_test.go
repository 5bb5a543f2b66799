package control

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/podvisor/podvisor/internal/logs"
)

func TestDefaultPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		uid  int
		env  map[string]string
		want string
	}{
		{0, map[string]string{"XDG_RUNTIME_DIR": "/run/user/0"}, "/run/podvisor/control.sock"},
		{1000, map[string]string{"XDG_RUNTIME_DIR": "/run/user/1000"}, "/run/user/1000/podvisor/control.sock"},
		{1000, map[string]string{"XDG_RUNTIME_DIR": "relative"}, "/tmp/podvisor-1000/control.sock"},
		{1000, nil, "/tmp/podvisor-1000/control.sock"},
		{1000, map[string]string{"TMPDIR": "/var/tmp"}, "/var/tmp/podvisor-1000/control.sock"},
	}
	for _, c := range cases {
		if got := DefaultPath(c.uid, env(c.env)); got != c.want {
			t.Errorf("DefaultPath(%d, %v) = %q, want %q", c.uid, c.env, got, c.want)
		}
	}
}

// shortDir returns a fresh directory with a path short enough for a socket.
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "pvc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func TestListenModeAndRemoval(t *testing.T) {
	path := filepath.Join(shortDir(t), "sub", "c.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want a 0600 socket", fi.Mode())
	}
	if di, _ := os.Stat(filepath.Dir(path)); di.Mode().Perm() != 0o700 {
		t.Fatalf("created directory mode %v, want 0700", di.Mode().Perm())
	}
	ln.Close()
	if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket still there after Close: %v", err)
	}
}

func TestListenReplacesStaleRefusesLive(t *testing.T) {
	path := filepath.Join(shortDir(t), "c.sock")
	// A stale socket: bound, never accepting, its owner gone.
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrUnix{Name: path}); err != nil {
		t.Fatal(err)
	}
	syscall.Close(fd)
	ln, err := Listen(path)
	if err != nil {
		t.Fatalf("stale socket not replaced: %v", err)
	}
	defer ln.Close()

	_, err = Listen(path)
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Fatalf("live socket: err %v, want ErrInUse naming pid %d", err, os.Getpid())
	}
	// The refused attempt must not have removed the live socket.
	c, err := net.Dial("unix", path)
	if err != nil {
		t.Fatalf("live socket damaged by the refused Listen: %v", err)
	}
	c.Close()
}

func TestListenRefusesNonSocket(t *testing.T) {
	path := filepath.Join(shortDir(t), "c.sock")
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Fatalf("err %v, want 'not a socket'", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("a regular file at the socket path was touched")
	}
}

func TestListenRefusesPlantedDirectory(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to chown a directory to another user")
	}
	shared := shortDir(t)
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	planted := filepath.Join(shared, "podvisor-0")
	if err := os.Mkdir(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(planted, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	_, err := Listen(filepath.Join(planted, "control.sock"))
	if err == nil || !strings.Contains(err.Error(), "belongs to uid 65534") {
		t.Fatalf("err %v, want a refusal of a directory planted by uid 65534", err)
	}
	open := filepath.Join(shared, "open")
	if err := os.Mkdir(open, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(open, 0o777)
	if _, err := Listen(filepath.Join(open, "control.sock")); err == nil || !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("err %v, want a refusal of a world-writable directory", err)
	}
}

// fakeBackend records commands and answers from a script.
type fakeBackend struct {
	mu     sync.Mutex
	calls  []string
	block  chan struct{} // when set, Command waits for it or ctx
	ctxErr chan error
	tails  *logs.Tails
}

func (f *fakeBackend) Command(ctx context.Context, op string, req Request) Response {
	f.mu.Lock()
	f.calls = append(f.calls, op+" "+strings.Join(req.Names, ",")+" "+req.Signal+fmt.Sprint(req.DryRun))
	f.mu.Unlock()
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			f.ctxErr <- ctx.Err()
			return Response{Error: "timed out"}
		}
	}
	if len(req.Names) > 0 && req.Names[0] == "wbe" {
		return Response{Error: `unknown process "wbe" (did you mean "web"?)`}
	}
	var rs []Result
	for _, n := range req.Names {
		rs = append(rs, Result{Name: n, OK: true, Message: op + "ed"})
	}
	return Response{OK: true, Results: rs, Plan: []string{"keep web"}, Generation: 2}
}

func (f *fakeBackend) Tail(name string) (*logs.Tail, error) {
	if name != "web" {
		return nil, fmt.Errorf("unknown process %q", name)
	}
	return f.tails.Get(name), nil
}

func (f *fakeBackend) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func serve(t *testing.T, b Backend) (testClient, string) {
	t.Helper()
	path := filepath.Join(shortDir(t), "c.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(b, nil)
	go srv.Serve(ln)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	})
	return newTestClient(path), path
}

func TestCommandsRoundTrip(t *testing.T) {
	fb := &fakeBackend{tails: logs.NewTails(10, 1<<10)}
	c, _ := serve(t, fb)
	ctx := context.Background()
	res, err := c.Do(ctx, "restart", Request{Names: []string{"web", "db"}}, time.Minute)
	if err != nil || !res.OK || len(res.Results) != 2 || res.Results[1].Message != "restarted" {
		t.Fatalf("restart: %+v %v", res, err)
	}
	res, err = c.Do(ctx, "stop", Request{Names: []string{"wbe"}}, time.Minute)
	if err != nil || res.OK || !strings.Contains(res.Error, `did you mean "web"`) {
		t.Fatalf("unknown name: %+v %v", res, err)
	}
	res, err = c.Do(ctx, "reload", Request{DryRun: true}, time.Minute)
	if err != nil || !res.OK || res.Generation != 2 || len(res.Plan) != 1 {
		t.Fatalf("reload: %+v %v", res, err)
	}
	// Malformed requests never reach the backend.
	before := len(fb.Calls())
	for _, bad := range []struct {
		op  string
		req Request
	}{
		{"signal", Request{Names: []string{"web"}}},
		{"signal", Request{Names: []string{"a", "b"}, Signal: "HUP"}},
		{"stop", Request{}},
		{"reload", Request{Names: []string{"x"}, DryRun: true}},
	} {
		res, err := c.Do(ctx, bad.op, bad.req, time.Minute)
		if err != nil || res.OK || res.Error == "" {
			t.Errorf("%s %+v: %+v %v, want a refusal", bad.op, bad.req, res, err)
		}
	}
	if got := fb.Calls(); len(got) != before {
		t.Fatalf("malformed requests reached the backend: %v", got[before:])
	}
}

// A client that goes away mid-command ends the waiting (the backend's ctx),
// not the server; the next client is served.
func TestClientDisconnectCancelsWaitOnly(t *testing.T) {
	fb := &fakeBackend{block: make(chan struct{}), ctxErr: make(chan error, 1), tails: logs.NewTails(10, 1<<10)}
	c, _ := serve(t, fb)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "stop", Request{Names: []string{"web"}}, time.Minute)
		errc <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for len(fb.Calls()) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled client got no error")
	}
	select {
	case err := <-fb.ctxErr:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("backend ctx ended with %v, want Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("backend never saw the client leave")
	}
	close(fb.block)
	if res, err := c.Do(context.Background(), "start", Request{Names: []string{"web"}}, time.Minute); err != nil || !res.OK {
		t.Fatalf("next client: %+v %v", res, err)
	}
}

func TestServerTimeout(t *testing.T) {
	fb := &fakeBackend{block: make(chan struct{}), ctxErr: make(chan error, 1), tails: logs.NewTails(10, 1<<10)}
	c, _ := serve(t, fb)
	res, err := c.Do(context.Background(), "restart", Request{Names: []string{"web"}}, 50*time.Millisecond)
	if err != nil || res.OK {
		t.Fatalf("%+v %v, want a not-ok answer after the timeout", res, err)
	}
	if err := <-fb.ctxErr; !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("backend ctx: %v", err)
	}
}

func TestLogsTailAndFollow(t *testing.T) {
	fb := &fakeBackend{tails: logs.NewTails(10, 1<<10)}
	c, _ := serve(t, fb)
	tl := fb.tails.Get("web")
	for i := range 5 {
		tl.Add("stdout", []byte(fmt.Sprint("line", i)), time.Now())
	}
	var buf bytes.Buffer
	if err := c.Logs(context.Background(), &buf, "web", 2, false); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "line3\nline4\n" {
		t.Fatalf("tail 2: %q", buf.String())
	}
	if err := c.Logs(context.Background(), &buf, "wbe", 2, false); err == nil || !strings.Contains(err.Error(), "unknown process") {
		t.Fatalf("unknown process: %v", err)
	}
	// Follow from the whole tail, so that whether "later" is added before
	// or after the follower starts, it must arrive.
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := net.Pipe()
	done := make(chan error, 1)
	go func() { done <- c.Logs(ctx, pw, "web", -1, true); pw.Close() }()
	tl.Add("stdout", []byte("later"), time.Now())
	pr.SetReadDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(pr)
	var seen []string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatalf("follow: got %q, then %v", seen, err)
		}
		seen = append(seen, line)
		if line == "later\n" {
			break
		}
	}
	if len(seen) != 6 || seen[0] != "line0\n" {
		t.Fatalf("follow: %q, want line0..line4 then later", seen)
	}
	cancel()
	go io.Copy(io.Discard, br)
	if err := <-done; err != nil {
		t.Fatalf("follow ended with %v", err)
	}
}

// A peer that is neither root nor podvisor's uid is refused even when the
// socket's mode would let it connect: the check is SO_PEERCRED.
func TestPeerCredRefusesOtherUser(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a client as another uid")
	}
	curl, err := exec.LookPath("curl")
	if err != nil {
		if os.Getenv("PODVISOR_REQUIRE_TOOLS") != "" {
			t.Fatal("curl is required")
		}
		t.Skip("curl not installed")
	}
	fb := &fakeBackend{tails: logs.NewTails(10, 1<<10)}
	_, path := serve(t, fb)
	os.Chmod(filepath.Dir(path), 0o755)
	os.Chmod(path, 0o666) // as if a mistake opened it up
	cmd := exec.Command(curl, "-s", "--unix-socket", path, "-X", "POST", "-d", `{"names":["web"]}`, "http://podvisor/v1/stop")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("curl as nobody: %v: %s", err, out)
	}
	if !strings.Contains(string(out), "permission denied: uid 65534") {
		t.Fatalf("answer %q, want a permission refusal", out)
	}
	if calls := fb.Calls(); len(calls) != 0 {
		t.Fatalf("refused peer reached the backend: %v", calls)
	}
}

func TestParseSignal(t *testing.T) {
	for in, want := range map[string]syscall.Signal{"HUP": syscall.SIGHUP, "sigusr1": syscall.SIGUSR1, "SIGTERM": syscall.SIGTERM, "9": syscall.SIGKILL} {
		if got, err := ParseSignal(in); err != nil || got != want {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "SIGFOO", "0", "65", "-1"} {
		if _, err := ParseSignal(bad); err == nil {
			t.Errorf("ParseSignal(%q) accepted", bad)
		}
	}
}

// Every reply names the podvisor that answered, and a second Listen on a
// live socket names the first podvisor's pid and config.
func TestRepliesNameWhoAnswered(t *testing.T) {
	path := filepath.Join(shortDir(t), "c.sock")
	ln, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(&fakeBackend{tails: logs.NewTails(10, 1<<10)}, nil)
	srv.Identity = Identity{Pid: os.Getpid(), Config: "/srv/procs.yaml"}
	go srv.Serve(ln)
	defer srv.Shutdown(context.Background())
	c := newTestClient(path)
	res, err := c.Do(context.Background(), "stop", Request{Names: []string{"wbe"}}, time.Minute)
	if err != nil || res.By != srv.Identity {
		t.Errorf("reply by %+v (%v), want %+v", res.By, err, srv.Identity)
	}
	if id, err := c.Identity(context.Background()); err != nil || id != srv.Identity {
		t.Errorf("identity %+v (%v), want %+v", id, err, srv.Identity)
	}
	_, err = Listen(path)
	var inUse *InUseError
	if !errors.As(err, &inUse) || inUse.Pid != os.Getpid() || inUse.Config != "/srv/procs.yaml" ||
		!strings.Contains(err.Error(), "config /srv/procs.yaml") || !strings.Contains(err.Error(), "--control PATH") {
		t.Errorf("second Listen: %v, want an InUseError naming pid %d and its config", err, os.Getpid())
	}
}
