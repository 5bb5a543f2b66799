package e2e

// FAULTS §3.A (config and bad input) against the real binary: every bad
// config makes `podvisor run` exit 2 within a second, before any child is
// spawned (each process of each config would create a marker file), with a
// message that names what is wrong and where. Run-time start failures (A12,
// A13), credentials (A14), verbatim environment (A18) and relative paths
// (A20) follow.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ffMarkerCmd is a command that proves a spawn happened.
const ffMarkerCmd = `'touch "$E2E_DIR/spawned"; exec sleep 1000'`

// ffBadConfig is one rejected config: its text (or a func preparing the
// path to pass to -c) and the substrings the error output must contain.
type ffBadConfig struct {
	id, name string
	yaml     string
	prepare  func(t *testing.T, dir string) string // returns the -c path
	want     []string
	maxRSS   int64 // peak memory bound in KiB; 0 = not checked
}

func ffBadConfigs() []ffBadConfig {
	svc := func(name, extra string) string {
		return "  " + name + ":\n    command: " + ffMarkerCmd + "\n" + extra
	}
	manyProcs := func(n int) string {
		var b strings.Builder
		b.WriteString("processes:\n")
		for i := range n {
			fmt.Fprintf(&b, "  p%d:\n    command: %s\n", i, ffMarkerCmd)
		}
		b.WriteString("  last:\n    command: 'true'\n    depends_on: [p-none]\n")
		return b.String()
	}
	return []ffBadConfig{
		{id: "A1", name: "self loop", yaml: "processes:\n" + svc("a", "    depends_on: [a]\n"),
			want: []string{`"a" depends on itself`}},
		{id: "A1", name: "two cycle", yaml: "processes:\n" + svc("a", "    depends_on: [b]\n") + svc("b", "    depends_on: [a]\n"),
			want: []string{"dependency cycle", "a -> b -> a"}},
		{id: "A1", name: "long cycle", yaml: "processes:\n" + svc("a", "    depends_on: [d]\n") + svc("b", "    depends_on: [a]\n") +
			svc("c", "    depends_on: [b]\n") + svc("d", "    depends_on: [c]\n") + svc("ok", ""),
			want: []string{"dependency cycle", "a -> d -> c -> b -> a"}},
		{id: "A2", name: "unknown dependency", yaml: "processes:\n" + svc("db", "") + svc("app", "    depends_on: [dbb]\n"),
			want: []string{"procs.yaml:6:", "processes.app.depends_on", `unknown process "dbb"`, `did you mean "db"`}},
		{id: "A3", name: "duplicate key", yaml: "processes:\n" + svc("web", "") + svc("web", ""),
			want: []string{"procs.yaml:4:", `duplicate key "web"`, "line 2"}},
		{id: "A3", name: "case variant", yaml: "processes:\n" + svc("web", "") + svc("Web", ""),
			want: []string{"procs.yaml:4:", `"Web" differs from "web" (line 2)`}},
		{id: "A3", name: "whitespace variant", yaml: "processes:\n" + svc("web", "") + svc(`"web "`, ""),
			want: []string{`invalid process name "web "`}},
		{id: "A3", name: "empty name", yaml: "processes:\n" + svc(`""`, ""),
			want: []string{`invalid process name ""`}},
		{id: "A4", name: "bad durations", yaml: "processes:\n" +
			svc("a", "    stop: {timeout: 10}\n") +
			svc("b", "    stop: {timeout: -5s}\n") +
			svc("c", "    ready: {tcp: '127.0.0.1:1', interval: 0s}\n") +
			svc("d", "    stop: {timeout: 1y}\n") +
			svc("e", "    stop: {timeout: 99999999999h}\n") +
			svc("f", "    stop: {timeout: 0.5}\n"),
			want: []string{
				"processes.a.stop.timeout: duration 10 is missing a unit",
				"processes.b.stop.timeout: duration -5s is negative",
				"processes.c.ready.interval: duration must be greater than 0",
				`processes.d.stop.timeout: invalid duration "1y"`,
				`processes.e.stop.timeout: duration "99999999999h" is too large`,
				"processes.f.stop.timeout: duration 0.5 is missing a unit",
			}},
		{id: "A5", name: "typos", yaml: "processes:\n" + svc("a", "    depend_on: [b]\n    readyness_probe: {}\n    restart: alway\n") + svc("b", ""),
			want: []string{`procs.yaml:4:5 processes.a: unknown key "depend_on" (did you mean "depends_on"?)`,
				`unknown key "readyness_probe"`, `unknown restart policy "alway" (did you mean "always"?`}},
		{id: "A6", name: "wrong types", yaml: "processes:\n  a:\n    command: 5\n" + svc("b", "    depends_on: \"a\"\n") + svc("c", "    ready: {tcp: '127.0.0.1:80a'}\n"),
			want: []string{"procs.yaml:3:14 processes.a.command: expected a string or a list of strings, got a number",
				"processes.b.depends_on", "processes.c.ready.tcp"}},
		{id: "A7", name: "100 MB file", prepare: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "huge.yaml")
			f, err := os.Create(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(100 << 20); err != nil { // sparse: costs no disk
				t.Fatal(err)
			}
			return p
		}, want: []string{"huge.yaml"}, maxRSS: 64 << 10},
		{id: "A7", name: "10k processes", yaml: manyProcs(9999), // 10,000 with "last": the limit
			want: []string{`unknown process "p-none"`}, maxRSS: 64 << 10},
		{id: "A8", name: "invalid UTF-8", yaml: "processes:\n  a:\n    command: 'echo \xff\xfe'\n", want: []string{"UTF-8"}},
		{id: "A8", name: "NUL byte", yaml: "processes:\n  a:\n    command: 'echo \x00'\n", want: []string{"procs.yaml"}},
		{id: "A8", name: "UTF-16 without BOM", yaml: ffUTF16("processes:\n  a:\n    command: 'true'\n"), want: []string{"procs.yaml"}},
		{id: "A9", name: "billion laughs", yaml: ffBillionLaughs(), want: []string{"alias"}, maxRSS: 64 << 10},
		{id: "A10", name: "deep nesting", yaml: "processes:\n  a:\n    command: " + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + "\n",
			want: []string{"procs.yaml"}, maxRSS: 64 << 10},
		{id: "A11", name: "empty commands", yaml: "processes:\n  a:\n    command: ''\n  b:\n    command: '   '\n  c:\n    command: []\n  d:\n    command: ['']\n  e: {}\n",
			want: []string{"processes.a.command: command is empty", "processes.b.command: command is empty",
				"processes.c.command: command is empty", "processes.d.command[0]: program name is empty", "processes.e"}},
		{id: "A14", name: "unknown user", yaml: "processes:\n" + svc("a", "    user: no-such-user-ff\n"),
			want: []string{`processes.a.user: unknown user "no-such-user-ff"`}},
		{id: "A15", name: "empty file", yaml: "", want: []string{"procs.yaml"}},
		{id: "A15", name: "only comments", yaml: "# nothing\n# here\n", want: []string{"procs.yaml"}},
		{id: "A15", name: "zero processes", yaml: "processes: {}\n", want: []string{"procs.yaml"}},
		{id: "A16", name: "bad probes", yaml: "processes:\n" +
			svc("a", "    ready: {http: 'http://127.0.0.1:1/', tcp: '127.0.0.1:1'}\n") +
			svc("b", "    ready: {tcp: '127.0.0.1:0'}\n") +
			svc("c", "    ready: {tcp: '127.0.0.1:70000'}\n") +
			svc("d", "    ready: {log: '([a-'}\n") +
			svc("e", "    ready: {notify: 'fd:1'}\n") +
			svc("f", "    live: {notify: 'fd:3'}\n"),
			want: []string{"processes.a.ready: both http and tcp given", "processes.b.ready.tcp", "port 0 is out of range",
				"port 70000 is out of range", "processes.d.ready.log: invalid regular expression", "processes.e.ready.notify: notify fd 1 is out of range",
				"processes.f.live"}},
		{id: "A17", name: "bad stop signals", yaml: "processes:\n" +
			svc("a", "    stop: {signal: SIGFOO}\n") + svc("b", "    stop: {signal: 0}\n") +
			svc("c", "    stop: {signal: 65}\n") + svc("d", "    stop: {signal: KILL}\n"),
			want: []string{`processes.a.stop.signal: unknown signal "SIGFOO"`, "processes.b.stop.signal", "processes.c.stop.signal",
				"processes.d.stop.signal: SIGKILL cannot be a stop signal"}},
		{id: "A18", name: "undefined variable", yaml: "processes:\n" + svc("a", "    env: {X: '${FF_UNDEFINED_VAR}'}\n"),
			want: []string{"processes.a.env.X", "FF_UNDEFINED_VAR is not set"}},
		{id: "A19", name: "missing file", prepare: func(t *testing.T, dir string) string { return filepath.Join(dir, "absent.yaml") },
			want: []string{"absent.yaml"}},
		{id: "A19", name: "directory", prepare: func(t *testing.T, dir string) string { return dir }},
		{id: "A19", name: "symlink loop", prepare: func(t *testing.T, dir string) string {
			a, b := filepath.Join(dir, "loop1.yaml"), filepath.Join(dir, "loop2.yaml")
			if err := os.Symlink(b, a); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(a, b); err != nil {
				t.Fatal(err)
			}
			return a
		}, want: []string{"loop1.yaml"}},
		{id: "A19", name: "FIFO", prepare: func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "fifo.yaml")
			if err := syscall.Mkfifo(p, 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}, want: []string{"fifo.yaml"}},
		{id: "E6", name: "path traversal and odd names", yaml: "processes:\n" + svc(`"../../etc/x"`, "") + svc(`"-x"`, "") + svc(`"a/b"`, "") + svc(`"a\nb"`, ""),
			want: []string{`invalid process name "../../etc/x"`, `invalid process name "-x"`, `invalid process name "a/b"`}},
	}
}

func ffUTF16(s string) string {
	var b []byte
	for _, r := range s {
		b = append(b, byte(r), 0) // little endian, no BOM
	}
	return string(b)
}

func ffBillionLaughs() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [", i, i)
		for j := range 9 {
			if j > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]\n")
	}
	b.WriteString("processes:\n  a:\n    command: *a9\n")
	return b.String()
}

// TestFault_A_BadConfigRejected covers A1-A11, A14-A19 and E6: exit 2
// within a second of CPU (two for the big inputs), no child ever spawned, no Go
// panic, and every expected message with its location.
func TestFault_A_BadConfigRejected(t *testing.T) {
	t.Parallel()
	for _, c := range ffBadConfigs() {
		t.Run(c.id+"_"+strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "procs.yaml")
			if c.prepare != nil {
				path = c.prepare(t, dir)
			} else {
				ffWrite(t, dir, "procs.yaml", []byte(c.yaml), 0o644)
			}
			limit := time.Second
			if c.id == "A7" || c.id == "A9" || c.id == "A10" {
				limit = 2 * time.Second
			}
			argv := []string{podvisorBin, "run", "-c", path, "--listen", "off"}
			// Peak memory is read from a memory cgroup podvisor runs in: the
			// rusage of a child of the test binary starts at the test's size.
			var cg string
			if c.maxRSS > 0 {
				var err error
				if cg, err = ffTryCgroup(t, "memory"); err != nil {
					t.Logf("peak memory not checked: %v", err)
				} else {
					argv = append([]string{"sh", "-c", `echo $$ > "$0/cgroup.procs" && exec "$@"`, cg}, argv...)
				}
			}
			res, err := ffRunArgvErr(dir, 20*time.Second, argv...)
			if err != nil {
				t.Fatal(err)
			}
			if res.Code != 2 {
				t.Fatalf("exit code %d, want 2\nstdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
			}
			// The work, not the wall time: on a loaded machine a quick
			// rejection can wait seconds for a CPU.
			if res.CPU > scaled(limit) {
				t.Errorf("used %v of CPU to reject (%v in all), want <= %v", res.CPU, res.Elapsed, scaled(limit))
			}
			if _, err := os.Stat(filepath.Join(dir, "spawned")); err == nil {
				t.Errorf("a child was spawned from a rejected config")
			}
			if strings.Contains(res.Stderr, "goroutine ") || strings.Contains(res.Stderr, "panic:") {
				t.Fatalf("podvisor panicked:\n%s", res.Stderr)
			}
			if strings.TrimSpace(res.Stderr) == "" {
				t.Fatal("no error message on stderr")
			}
			for _, w := range c.want {
				if !strings.Contains(res.Stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
				}
			}
			// Errors are reported one per line, each with its file.
			for _, l := range strings.Split(strings.TrimSpace(res.Stderr), "\n") {
				if !strings.Contains(l, filepath.Base(path)) && !strings.Contains(l, dir) {
					t.Errorf("error line without the file name: %q", l)
				}
			}
			if cg != "" {
				peak, err := strconv.ParseInt(strings.TrimSpace(readFile(filepath.Join(cg, "memory.max_usage_in_bytes"))), 10, 64)
				if err != nil {
					t.Fatalf("memory.max_usage_in_bytes: %v", err)
				}
				t.Logf("peak memory %d KiB", peak>>10)
				if peak>>10 > c.maxRSS {
					t.Errorf("peak memory %d KiB, want <= %d KiB", peak>>10, c.maxRSS)
				}
			}
		})
	}
}

// TestFault_A8_BOMAccepted: a UTF-8 byte-order mark is accepted and ignored
// (docs/configuration.md), by `check` as by `run`.
func TestFault_A8_BOMAccepted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	p := ffWrite(t, dir, "procs.yaml", []byte("\xef\xbb\xbfprocesses:\n  a:\n    type: job\n    command: 'true'\n"), 0o644)
	if res := ffRunCLI(t, dir, 10*time.Second, "check", "-c", p); res.Code != 0 {
		t.Fatalf("check: exit %d: %s", res.Code, res.Stderr)
	}
	if res := ffRunCLI(t, dir, 10*time.Second, "run", "-c", p, "--listen", "off"); res.Code != 0 {
		t.Fatalf("run: exit %d: %s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// ffStartFailure runs a config whose process x cannot be spawned and whose
// dependent must never start; it returns the combined output.
func ffStartFailure(t *testing.T, command string) string {
	t.Helper()
	r := startPodvisor(t, `
processes:
  x:
    command: [`+command+`]
  dep:
    command: `+ffMarkerCmd+`
    depends_on: {x: started}
`)
	code, took := r.Wait(10 * time.Second)
	out := r.Stdout.String() + r.Stderr.String()
	if code != 1 {
		t.Fatalf("exit code %d, want 1 (spawn errors are fatal)\n%s", code, out)
	}
	if took > time.Second+eps() {
		t.Errorf("took %v to give up, want <= %v", took, time.Second+eps())
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "spawned")); err == nil {
		t.Errorf("the dependent started although x could not be spawned")
	}
	if !strings.Contains(out, "process=x") {
		t.Errorf("output does not name the process:\n%s", out)
	}
	return out
}

// TestFault_A12_ShebangInterpreterMissing: exec returns ENOENT for an existing
// script whose #! interpreter is missing; podvisor says which file is
// missing (SPEC: spawn errors are fatal, exit 1; dependents never start).
func TestFault_A12_ShebangInterpreterMissing(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	script := ffWrite(t, dir, "script.sh", []byte("#!/nonexistent/ff-interp\necho hi\n"), 0o755)
	out := ffStartFailure(t, `"`+script+`"`)
	if !regexp.MustCompile(`not found.*/nonexistent/ff-interp`).MatchString(out) {
		t.Errorf("the missing interpreter is not named:\n%s", out)
	}
}

// TestFault_A13_NotExecutable: permission denied, a directory, and a binary
// for no machine each fail the start with their own reason.
func TestFault_A13_NotExecutable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	noexec := ffWrite(t, dir, "noexec.sh", []byte("echo hi\n"), 0o644)
	badelf := ffWrite(t, dir, "badelf", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00garbage"), 0o755)
	for _, c := range []struct{ name, path, want string }{
		{"EACCES", noexec, "permission denied"},
		{"directory", dir, "is a directory"},
		{"ENOEXEC", badelf, "exec format error"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := ffStartFailure(t, `"`+c.path+`"`)
			if !strings.Contains(out, c.want) {
				t.Errorf("output lacks %q:\n%s", c.want, out)
			}
		})
	}
}

// TestFault_A14_NonRootCannotSwitchUser: a non-root podvisor asked to run a
// process as another user fails that start and never runs it as itself.
func TestFault_A14_NonRootCannotSwitchUser(t *testing.T) {
	t.Parallel()
	ffRequireRoot(t) // to become non-root with setpriv
	if _, err := os.Stat("/usr/bin/setpriv"); err != nil {
		t.Skip("setpriv not installed")
	}
	r := startPodvisor(t, `
processes:
  x:
    user: "1"
    command: `+ffMarkerCmd+`
`, withWrapper("sh", "-c", `chmod 0777 "$E2E_DIR" "${E2E_DIR%/*}" && chmod 0644 "$E2E_DIR/procs.yaml" && `+
		`exec setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"`, "sh"))
	code, _ := r.Wait(10 * time.Second)
	out := r.Stdout.String() + r.Stderr.String()
	if code != 1 {
		t.Fatalf("exit code %d, want 1\n%s", code, out)
	}
	if _, err := os.Stat(filepath.Join(r.Dir, "spawned")); err == nil {
		t.Fatal("the process ran although podvisor could not switch to its user")
	}
	if !strings.Contains(out, "process=x") {
		t.Errorf("no message naming the process:\n%s", out)
	}
}

// TestFault_A18_EnvVerbatim: env values reach the child byte for byte:
// %, a bare $VAR, newlines and = are not mangled; $$ is a literal $ and
// ${VAR:-default} is interpolated (docs/configuration.md).
func TestFault_A18_EnvVerbatim(t *testing.T) {
	t.Parallel()
	r := startPodvisor(t, `
processes:
  dump:
    type: job
    env:
      V1: 'foo_%s_%_%%_$HOME'
      V2: "line1\nline2=x"
      V3: '$$literal ${FF_UNSET_VAR:-dflt} =='
    command: ['sh', '-c', 'printf "%s\0" "$V1" "$V2" "$V3" > "$E2E_DIR/env"']
`)
	if code, _ := r.Wait(10 * time.Second); code != 0 {
		t.Fatalf("exit %d\n%s", code, r.Stdout)
	}
	got := strings.Split(strings.TrimSuffix(readFile(filepath.Join(r.Dir, "env")), "\x00"), "\x00")
	want := []string{"foo_%s_%_%%_$HOME", "line1\nline2=x", "$literal dflt =="}
	if fmt.Sprintf("%q", got) != fmt.Sprintf("%q", want) {
		t.Fatalf("child env values %q, want %q", got, want)
	}
}

// TestFault_A20_RelativePaths: a relative working_dir and a relative command
// resolve against the config file's directory, not podvisor's working
// directory; a missing working_dir fails that start (checked at spawn: an
// earlier oneshot may create it).
func TestFault_A20_RelativePaths(t *testing.T) {
	t.Parallel()
	t.Run("resolved against the config dir", func(t *testing.T) {
		r := startPodvisor(t, `
processes:
  mk:
    type: oneshot
    command: 'mkdir -p "$E2E_DIR/sub" && printf "#!/bin/sh\npwd > \"\$$E2E_DIR/pwd\"\n" > "$E2E_DIR/sub/tool.sh" && chmod +x "$E2E_DIR/sub/tool.sh"'
  job:
    type: job
    depends_on: {mk: completed}
    working_dir: sub
    command: ['./tool.sh']
`, withWrapper("sh", "-c", `cd / && exec "$@"`, "sh"))
		if code, _ := r.Wait(10 * time.Second); code != 0 {
			t.Fatalf("exit %d\n%s", code, r.Stdout)
		}
		want, _ := filepath.EvalSymlinks(filepath.Join(r.Dir, "sub"))
		got, _ := filepath.EvalSymlinks(strings.TrimSpace(readFile(filepath.Join(r.Dir, "pwd"))))
		if got != want {
			t.Fatalf("child ran in %q, want %q", got, want)
		}
	})
	t.Run("missing working_dir", func(t *testing.T) {
		r := startPodvisor(t, `
processes:
  x:
    working_dir: no-such-dir
    command: `+ffMarkerCmd+`
`)
		code, _ := r.Wait(10 * time.Second)
		out := r.Stdout.String() + r.Stderr.String()
		if code != 1 {
			t.Fatalf("exit %d, want 1\n%s", code, out)
		}
		if !strings.Contains(out, "no-such-dir") {
			t.Errorf("the missing directory is not named:\n%s", out)
		}
	})
}
