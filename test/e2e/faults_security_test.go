package e2e

// FAULTS §3.E (security): listeners, credentials, environment, secrets in
// HTTP answers and logs, the runtime directory.

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ffListeners returns the local addresses of the TCP sockets pid listens on,
// found by matching its socket inodes against /proc/net/tcp{,6}.
func ffListeners(t testing.TB, pid int) []string {
	t.Helper()
	fds, err := openFDs(pid)
	if err != nil {
		t.Fatal(err)
	}
	inodes := map[string]bool{}
	for _, target := range fds {
		if in, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(in, "]")] = true
		}
	}
	var out []string
	for _, table := range []string{"tcp", "tcp6"} {
		for i, line := range strings.Split(readFile(fmt.Sprintf("/proc/%d/net/%s", pid, table)), "\n") {
			f := strings.Fields(line)
			if i == 0 || len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
				continue
			}
			out = append(out, ffDecodeAddr(t, f[1]))
		}
	}
	return out
}

// ffDecodeAddr turns /proc/net/tcp's "0100007F:1F90" into "127.0.0.1:8080".
func ffDecodeAddr(t testing.TB, s string) string {
	t.Helper()
	hexIP, hexPort, _ := strings.Cut(s, ":")
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		t.Fatal(err)
	}
	var ip net.IP
	for i := 0; i+8 <= len(hexIP); i += 8 { // each 32-bit word in host (little-endian) order
		w, err := strconv.ParseUint(hexIP[i:i+8], 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		ip = append(ip, byte(w), byte(w>>8), byte(w>>16), byte(w>>24))
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(int(port)))
}

// TestFault_E1_OnlyTheConfiguredListener: podvisor listens on exactly the
// configured address, and on nothing with listen off.
func TestFault_E1_OnlyTheConfiguredListener(t *testing.T) {
	t.Parallel()
	m := ffMarker()
	yaml := `
processes:
  svc:
    command: ['sleep', '` + m + `']
    ready: {notify: systemd}
`
	r := ffStartHTTP(t, yaml)
	if got := ffListeners(t, r.Pid()); !slices.Equal(got, []string{r.Addr}) {
		t.Errorf("podvisor listens on %v, want exactly [%s]", got, r.Addr)
	}
	ffStopClean(t, r, 10*time.Second)

	off := startPodvisor(t, yaml)
	ffPidOf(t, m, 5*time.Second)
	if got := ffListeners(t, off.Pid()); len(got) != 0 {
		t.Errorf("with listen off podvisor listens on %v", got)
	}
	ffStopClean(t, off, 10*time.Second)
}

// TestFault_E3_ChildCredentials: a child configured with a user runs with
// exactly that uid and gid (real, effective, saved, fs), its supplementary
// groups from the group database (none for an unknown uid, never root's),
// and no capabilities.
func TestFault_E3_ChildCredentials(t *testing.T) {
	t.Parallel()
	ffRequireRoot(t)
	m1, m2 := ffMarker(), ffMarker()
	r := startPodvisor(t, `
processes:
  nobody:
    user: nobody
    working_dir: /
    command: ['sleep', '`+m1+`']
  numeric:
    user: "12345:23456"
    working_dir: /
    command: ['sleep', '`+m2+`']
`)
	for _, c := range []struct {
		marker, uid, gid string
		groups           func(string) bool
	}{
		{m1, "65534", "65534", func(g string) bool { return !slices.Contains(strings.Fields(g), "0") }},
		{m2, "12345", "23456", func(g string) bool { return g == "" }},
	} {
		pid := ffPidOf(t, c.marker, 5*time.Second)
		want := map[string]string{
			"Uid":        strings.Repeat(c.uid+"\t", 3) + c.uid,
			"Gid":        strings.Repeat(c.gid+"\t", 3) + c.gid,
			"CapEff":     "0000000000000000",
			"CapPrm":     "0000000000000000",
			"NoNewPrivs": "0",
		}
		for key, w := range want {
			if got, err := statusField(pid, key); err != nil || got != w {
				t.Errorf("child %s: %s = %q, want %q (%v)", c.marker, key, got, w, err)
			}
		}
		if g, err := statusField(pid, "Groups"); err != nil || !c.groups(g) {
			t.Errorf("child %s: Groups %q (%v)", c.marker, g, err)
		}
	}
	ffStopClean(t, r, 10*time.Second)
}

// ffEnviron reads /proc/PID/environ into a map.
func ffEnviron(t testing.TB, pid int) map[string]string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, kv := range bytes.Split(b, []byte{0}) {
		if k, v, ok := strings.Cut(string(kv), "="); ok {
			env[k] = v
		}
	}
	return env
}

// TestFault_E5_EnvIsolation: each child's environment is exactly podvisor's
// own (less what belongs to podvisor's parent: NOTIFY_SOCKET, LISTEN_*,
// WATCHDOG_*), plus the global env and its own env; never another
// process's.
func TestFault_E5_EnvIsolation(t *testing.T) {
	t.Parallel()
	m1, m2 := ffMarker(), ffMarker()
	r := startPodvisor(t, `
env:
  GLOBAL_X: g
processes:
  a:
    env: {A_ONLY: a, GLOBAL_X: overridden}
    command: ['sleep', '`+m1+`']
  b:
    env: {B_ONLY: b}
    command: ['sleep', '`+m2+`']
`, withEnv("NOTIFY_SOCKET=/run/parent.sock", "LISTEN_FDS=2", "LISTEN_PID=1", "WATCHDOG_USEC=1000", "FF_INHERITED=yes"))
	// Read once podvisor runs its children: before its exec, /proc shows the
	// forking test's environment.
	p1, p2 := ffPidOf(t, m1, 5*time.Second), ffPidOf(t, m2, 5*time.Second)
	base := ffEnviron(t, r.Pid())
	if base["FF_INHERITED"] != "yes" {
		t.Fatalf("podvisor's own environment lacks FF_INHERITED: %v", base)
	}
	for _, k := range []string{"NOTIFY_SOCKET", "LISTEN_FDS", "LISTEN_PID", "WATCHDOG_USEC"} {
		delete(base, k)
	}
	for _, c := range []struct {
		marker string
		pid    int
		extra  map[string]string
	}{
		{m1, p1, map[string]string{"GLOBAL_X": "overridden", "A_ONLY": "a"}},
		{m2, p2, map[string]string{"GLOBAL_X": "g", "B_ONLY": "b"}},
	} {
		want := map[string]string{}
		for k, v := range base {
			want[k] = v
		}
		for k, v := range c.extra {
			want[k] = v
		}
		got := ffEnviron(t, c.pid)
		for k, v := range want {
			if g, ok := got[k]; !ok || g != v {
				t.Errorf("child %s: %s=%q (present %v), want %q", c.marker, k, g, ok, v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("child %s has unexpected %s=%q", c.marker, k, v)
			}
		}
	}
	ffStopClean(t, r, 10*time.Second)
}

// TestFault_E7_E11_NothingSecretServed: a file probe on a secret file never
// serves its content, and an argument on a command line never shows in any
// HTTP answer or in podvisor's own log lines.
func TestFault_E7_E11_NothingSecretServed(t *testing.T) {
	t.Parallel()
	canary := fmt.Sprintf("ff-canary-%d-%d", os.Getpid(), time.Now().UnixNano())
	secret := ffWrite(t, t.TempDir(), "shadow", []byte(canary+"-content\n"), 0o600)
	r := ffStartHTTP(t, `
processes:
  svc:
    command: ['sh', '-c', 'exec sleep 1000', '`+canary+`-argv']
    ready: {file: "`+secret+`", start_interval: 50ms}
  crashy:
    command: ['sh', '-c', 'exit 3', '`+canary+`-argv2']
    restart: {policy: always, backoff: 100ms}
`)
	ffWaitStatus(t, r, 5*time.Second, func(s ffStatus) bool { return s.proc("crashy").Restarts >= 2 }, "crashy not restarted")
	var texts []string
	for _, path := range []string{"/status", "/metrics", "/readyz", "/livez", "/nope"} {
		_, body := r.Get(t, path)
		texts = append(texts, body)
	}
	ffStopClean(t, r, 10*time.Second)
	for _, l := range r.Stdout.Lines() {
		if strings.HasPrefix(l, "podvisor ") {
			texts = append(texts, l)
		}
	}
	texts = append(texts, r.Stderr.String())
	for _, s := range texts {
		if strings.Contains(s, canary) {
			t.Errorf("secret leaked: %.300s", s)
		}
	}
}

// TestFault_E10_RuntimeDirPrivate: podvisor's only runtime directory (for
// notify sockets) is created fresh, owned by podvisor, neither readable nor
// writable by others, and removed at exit.
func TestFault_E10_RuntimeDirPrivate(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	if err := os.Chmod(tmp, 0o1777); err != nil { // like /tmp
		t.Fatal(err)
	}
	r := startPodvisor(t, `
processes:
  svc:
    command: 'echo "$$NOTIFY_SOCKET" > "$E2E_DIR/sock"; exec sleep 1000'
    ready: {notify: systemd}
`, withEnv("TMPDIR="+tmp))
	var sock string
	eventually(t, 5*time.Second, func() bool {
		sock = strings.TrimSpace(readFile(filepath.Join(r.Dir, "sock")))
		return sock != ""
	}, "no NOTIFY_SOCKET recorded")
	dir := filepath.Dir(sock)
	if filepath.Dir(dir) != tmp {
		t.Fatalf("notify socket %s not in a directory of its own under TMPDIR %s", sock, tmp)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	// 0711 by design (internal/app/rundir.go): children running as another
	// user must reach their socket by its unguessable name, but nobody else
	// may list or create anything there.
	if perm := fi.Mode().Perm(); perm&0o066 != 0 || perm&0o700 != 0o700 {
		t.Errorf("runtime dir %s has mode %v, want 0700 or 0711", dir, perm)
	}
	if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != os.Geteuid() {
		t.Errorf("runtime dir owned by uid %d", st.Uid)
	}
	ffStopClean(t, r, 10*time.Second)
	if _, err := os.Stat(dir); err == nil {
		t.Errorf("runtime dir %s left behind", dir)
	}
}

// A run without notify sockets makes no runtime directory: it runs with an
// unusable TMPDIR (a read-only root filesystem) and leaves nothing in a
// usable one. With a notify process the unusable TMPDIR still fails the
// run before anything starts, naming the fix.
func TestRuntimeDirOnlyWhenNeeded(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	r := startPodvisor(t, `
processes:
  once:
    type: job
    command: 'true'
`, withEnv("TMPDIR="+tmp))
	code, _ := r.Wait(10 * time.Second)
	wantCode(t, r, code, 0)
	if ents, _ := os.ReadDir(tmp); len(ents) != 0 {
		t.Errorf("TMPDIR holds %v after a run without notify sockets", ents)
	}

	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r = startPodvisor(t, `
processes:
  once:
    type: job
    command: 'true'
`, withEnv("TMPDIR="+file))
	code, _ = r.Wait(10 * time.Second)
	wantCode(t, r, code, 0)

	r = startPodvisor(t, `
processes:
  svc:
    command: 'touch "$E2E_DIR/started"; exec sleep 1000'
    ready: {notify: systemd}
`, withEnv("TMPDIR="+file))
	code, _ = r.Wait(10 * time.Second)
	if code != 1 || !strings.Contains(r.Stdout.String()+r.Stderr.String(), "set TMPDIR") {
		t.Errorf("notify process with TMPDIR on a file: exit %d, want 1 naming TMPDIR\n%s%s", code, r.Stdout, r.Stderr)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "started")); err == nil {
		t.Error("a process started although the runtime directory could not be made")
	}
}
