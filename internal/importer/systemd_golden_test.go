package importer

import (
	"strings"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// TestGoldenSystemdKeys converts a unit with the keys whose drop reasons
// used to be a catch-all: ExecReload= becomes reload:, exit statuses with
// signal names become rules' signals and success codes, and every key
// still dropped says why.
func TestGoldenSystemdKeys(t *testing.T) {
	m, r, err := ConvertSystemd([]Source{readSource(t, "testdata/systemd-keys/mailer.service")}, Options{})
	convertedGolden(t, "systemd-keys", m, r, err)
	for _, e := range r.Entries {
		if e.Kind == Dropped && (e.Detail == "no podvisor equivalent" || e.Detail == "") {
			t.Errorf("%s dropped without a reason of its own", e.What)
		}
	}
}

// TestGoldenSystemdForkingNoPIDFile converts Type=forking units without
// PIDFile= (issue 37): a oneshot done when the start command exits, its
// ExecStop= run at teardown, and the file and the report say what is lost
// (the daemon's death is not noticed) instead of refusing the unit.
func TestGoldenSystemdForkingNoPIDFile(t *testing.T) {
	m, r, err := ConvertSystemd([]Source{
		readSource(t, "testdata/systemd-forking/queue.service"),
		readSource(t, "testdata/systemd-forking/legacyd.service"),
	}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() {
		t.Errorf("did not convert:\n%s", reportText(r))
	}
	for _, name := range []string{"queue", "legacyd"} {
		var p *Process
		for _, q := range m.Processes {
			if q.Name == name {
				p = q
			}
		}
		if p == nil {
			t.Fatalf("no process %s", name)
		}
		if p.Type != config.Oneshot {
			t.Errorf("%s: type %v, want oneshot", name, p.Type)
		}
		if !strings.Contains(reportText(r), name+".type: Type=forking without PIDFile=") {
			t.Errorf("%s: the report does not say the approximation:\n%s", name, reportText(r))
		}
	}
	out := config.Write(m)
	assertPortable(t, out)
	compareGolden(t, "testdata/golden/systemd-forking.yaml", out)
	compareGolden(t, "testdata/golden/systemd-forking.report", []byte(reportText(r)))
}

// TestGoldenSystemdForkingPIDFile converts Type=forking units with
// PIDFile= (issue 37) to daemon: {pid_file}: the path with its specifiers
// expanded and, relative, below /run/ as systemd takes it; ExecStop= the
// stop.command, Restart= as written; a ready: check for what podvisor's
// daemon mode does not wait for (the pid read), said.
func TestGoldenSystemdForkingPIDFile(t *testing.T) {
	mail := readSource(t, "testdata/systemd-pidfile/mail@.service")
	mail.Path = "testdata/systemd-pidfile/mail@outbound.service"
	m, r, err := ConvertSystemd([]Source{mail, readSource(t, "testdata/systemd-pidfile/cache.service")}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.Failed() {
		t.Errorf("did not convert:\n%s", reportText(r))
	}
	out := config.Write(m)
	assertPortable(t, out)
	cfg, _, err := config.ParsePortable("/etc/procs.yaml", out, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]struct {
		pidFile string
		restart config.Policy
		stop    bool
	}{
		"mail-outbound": {"/run/relay/outbound.pid", config.OnFailure, true},
		"cache":         {"/run/cache $$x/cache.pid", config.Always, false},
	} {
		p := cfg.Processes[name]
		if p == nil {
			t.Fatalf("no process %s in\n%s", name, out)
		}
		if p.Type != config.Service || p.Daemon == nil || p.Daemon.PidFile != want.pidFile {
			t.Errorf("%s: type %v, daemon %+v; want a service with pid_file %q", name, p.Type, p.Daemon, want.pidFile)
		}
		if p.Restart.Policy != want.restart {
			t.Errorf("%s: restart %v, want %v", name, p.Restart.Policy, want.restart)
		}
		if (p.Stop.Command != nil) != want.stop {
			t.Errorf("%s: stop.command %q, want one: %v (ExecStop= only)", name, p.Stop.Command, want.stop)
		}
		if p.Ready == nil || p.Ready.Kind != config.ProbeExec {
			t.Errorf("%s: ready %+v, want the exec check of the pid file", name, p.Ready)
		}
	}
	compareGolden(t, "testdata/golden/systemd-pidfile.yaml", out)
	compareGolden(t, "testdata/golden/systemd-pidfile.report", []byte(reportText(r)))
}
