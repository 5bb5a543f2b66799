package importer

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// importForking imports a Type=forking unit; it returns process x.
func importForking(t *testing.T, unit string) *config.Process {
	t.Helper()
	p, _ := importUnit(t, unit, "x")
	return p
}

// The daemon of a Type=forking unit forks, so the shell must go on after
// it: import drops the exec it put in front of the command. Before issue 34
// item 1 of the review it removed the first "exec " anywhere, also inside
// a quoted argument (--title "exec mode" became --title 'mode').
func TestSystemdForkingKeepsExecInArguments(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "none.pid") // never written: the wait ends at once
	for _, c := range []struct {
		name, start string
		env         map[string]string
		want        []string
	}{
		{"argv", printfLine + `--title "exec mode" 'exec '`, nil, []string{"--title", "exec mode", "exec "}},
		{"dash", "-" + printfLine + `--title "exec mode"`, nil, []string{"--title", "exec mode"}},
		{"variable", printfLine + `--title "exec mode" $V`, map[string]string{"V": "a b"}, []string{"--title", "exec mode", "a", "b"}},
		{"braces", printfLine + `"exec ${V}"`, map[string]string{"V": "a b"}, []string{"exec a b"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			unit := "[Service]\nType=forking\nPIDFile=" + pidfile + "\nExecStart=" + c.start + "\n"
			got := runImported(t, unit, "x", false, c.env)
			if !slices.Equal(got, c.want) {
				t.Errorf("argv after BEGIN:\n got %q\nwant %q", got, c.want)
			}
		})
	}
}

// PIDFile= goes into the /bin/sh -c of the command (which removes a stale
// pid file) and of the ready check; it must be one literal word there
// whatever it holds (issue 34 review item 2: it was pasted unquoted), and
// daemon.pid_file must load back as the same path. A cat and an rm put
// first in PATH record the arguments they get; a command substitution in
// the path would make the marker.
func TestSystemdForkingPIDFileQuoted(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	bin := filepath.Join(dir, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cat", "rm"} {
		if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\nprintf '%s\\0' \"$@\" >>\"$ARGLOG\"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i, pf := range []string{
		"/run/my app.pid",
		"/run/x`touch " + marker + "`.pid",
		"/run/$(touch " + marker + ").pid",
		"/run/a;touch " + marker + ";.pid",
		"/run/it's.pid",
		"/run/${HOME}/$$.pid",
		"/run/*",
	} {
		p := importForking(t, "[Service]\nType=forking\nPIDFile="+strings.ReplaceAll(pf, "%", "%%")+"\nExecStart=/bin/true\n")
		if p.Daemon == nil || p.Daemon.PidFile != pf {
			t.Errorf("%q: daemon %+v, want pid_file %q", pf, p.Daemon, pf)
		}
		if p.Ready == nil || p.Ready.Kind != config.ProbeExec {
			t.Fatalf("%q: ready %+v, want the exec check of the pid file", pf, p.Ready)
		}
		for _, c := range []struct {
			argv []string
			want []string
		}{
			{p.Command, []string{"-f", "--", pf}},
			{p.Ready.Command, []string{pf}},
		} {
			log := filepath.Join(dir, "args"+string(rune('a'+i)))
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Dir = dir
			cmd.Env = []string{"PATH=" + bin + ":/usr/bin:/bin", "ARGLOG=" + log, "HOME=/root"}
			out, _ := cmd.CombinedOutput() // the check of an empty pid fails: not the point
			data, err := os.ReadFile(log)
			if err != nil {
				t.Fatalf("%q: the stand-in never ran: %v\n%q\n%s", pf, err, c.argv, out)
			}
			os.Remove(log)
			if got := strings.Split(strings.TrimSuffix(string(data), "\x00"), "\x00"); !slices.Equal(got, c.want) {
				t.Errorf("%q: got %q, want %q\n%q", pf, got, c.want, c.argv)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Fatalf("%q: the PIDFile= path ran as shell syntax: %q", pf, c.argv)
			}
		}
	}
}
