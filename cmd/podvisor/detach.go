package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/podvisor/podvisor/internal/config"
	"github.com/podvisor/podvisor/internal/control"
	"github.com/podvisor/podvisor/internal/proc"
)

// detachEnv tells the background podvisor of `run -d` the fd on which it
// says "ready" to the podvisor that started it (docs/operate.md#in-the-background).
const detachEnv = "PODVISOR_DETACHED_FD"

// logTail is how much of the background run's log run -d prints when the
// run ended before it was ready.
const logTail = 4 << 10

// detachedChild reports whether this is the background podvisor of a run -d.
func detachedChild() bool { return os.Getenv(detachEnv) != "" }

// tellStarter takes the fd of detachEnv (out of the environment, so no
// child inherits it) and returns the function that writes "ready" on it.
// When the run ends before, the fd closes with podvisor's exit.
func tellStarter() func() {
	fd, err := strconv.Atoi(os.Getenv(detachEnv))
	os.Unsetenv(detachEnv)
	if err != nil || fd < 3 {
		return func() {}
	}
	syscall.CloseOnExec(fd)
	f := os.NewFile(uintptr(fd), "run -d")
	return func() {
		_, _ = f.WriteString("ready\n")
		f.Close()
	}
}

// detachedSocket is the control socket of a run -d: as run chooses it,
// except that the default is the project's socket, derived from the
// config's absolute path, so two projects never meet.
func detachedSocket(flagPath string, cfg *config.Config) string {
	switch {
	case flagPath != "":
		return flagPath
	case cfg.Control != "":
		return cfg.Control
	case os.Getenv("PODVISOR_CONTROL") != "":
		return os.Getenv("PODVISOR_CONTROL")
	}
	abs, _ := filepath.Abs(cfg.File)
	return control.ProjectPath(os.Geteuid(), os.Getenv, abs)
}

// runDetached starts this run again in the background, in a session of its
// own with its output in a log file beside its socket, and returns once it
// is ready (0) or ended (its exit code, with the end of its log).
func runDetached(args []string, o runOpts, sel config.Selection, stdout, stderr io.Writer) int {
	cfg, err := loadSelected(*o.path, sel)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	sock := detachedSocket(*o.control, cfg)
	if sock == control.Off {
		fmt.Fprintln(stderr, "podvisor run -d: a run in the background needs its control socket (podvisor down and status reach it there); drop control: off / --control off")
		return exitUsage
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	id, err := controlClient(sock).Identity(ctx)
	cancel()
	if err == nil {
		fmt.Fprintf(stderr, "podvisor run -d: a podvisor already runs on %s (pid %d, config %s); podvisor down stops it\n", sock, id.Pid, id.Config)
		return exitFail
	}
	logPath := control.LogPath(sock)
	if err := control.PrepareDir(logPath); err != nil {
		fmt.Fprintf(stderr, "podvisor run -d: %v\n", err)
		return exitFail
	}
	logFile, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor run -d: log file: %v\n", err)
		return exitFail
	}
	defer logFile.Close()
	if *o.listen == "" && cfg.Listen == config.DefaultListen && portTaken(cfg.Listen) {
		// Another project's run (or a pod with --listen) holds the default
		// port: this one still runs, reached through its own socket.
		fmt.Fprintf(stderr, "podvisor run -d: %s is taken (another podvisor?), so this run serves no HTTP port; status, logs and down reach it through its control socket (set listen: in %s to pick a port)\n", cfg.Listen, cfg.File)
		args = append([]string{"--listen", "off"}, args...)
	}
	code, err := startDetached(args, sock, logFile, logPath, stdout, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "podvisor run -d: %v\n", err)
	}
	return code
}

// startDetached starts the background podvisor and waits for its word.
func startDetached(args []string, sock string, logFile *os.File, logPath string, stdout, stderr io.Writer) (int, error) {
	exe, err := os.Executable()
	if err != nil {
		return exitFail, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return exitFail, err
	}
	defer pr.Close()
	argv := append([]string{exe, "run", "--control", sock}, args...)
	env := append(os.Environ(), detachEnv+"=3")
	d, err := proc.StartDetached(argv, env, "", logFile, []*os.File{pw})
	pw.Close() // the background podvisor holds the only write end now
	if err != nil {
		return exitFail, err
	}
	line, _ := bufio.NewReader(pr).ReadString('\n')
	if line == "ready\n" {
		fmt.Fprintf(stdout, "podvisor: running in the background (pid %d); control socket %s; log %s\n", d.Pid(), sock, logPath)
		return exitOK, nil
	}
	code := d.Wait()
	if b, err := os.ReadFile(logPath); err == nil {
		if len(b) > logTail {
			b = b[len(b)-logTail:]
			b = b[bytes.IndexByte(b, '\n')+1:]
		}
		_, _ = stderr.Write(b)
	}
	fmt.Fprintf(stderr, "podvisor run -d: the run ended before it was ready, with exit code %d (log: %s)\n", code, logPath)
	return code, nil
}

// portTaken reports whether something accepts connections on the local end
// of addr (":9464" is 127.0.0.1:9464).
func portTaken(addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	conn, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), time.Second)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
