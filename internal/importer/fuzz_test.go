package importer

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/podvisor/podvisor/internal/config"
)

// The fuzz tests feed each parser arbitrary input. A converter may refuse
// input (an error) or report what it could not convert, but it must never
// panic, and whatever it converts without a failure must be a procs.yaml
// that passes check --portable: the property every import output has.
// Seeded with the fixtures; run one with go test -fuzz FuzzSupervisord.

func addSeeds(f *testing.F, paths ...string) {
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

func checkConverted(t *testing.T, m *Model, r *Report, err error) {
	t.Helper()
	if err != nil || r.Failed() {
		return
	}
	out := config.Write(m)
	assertPortable(t, out)
	for _, e := range r.Entries {
		if e.Kind == Approximated && !bytes.Contains(out, []byte(config.CommentText(e.Detail))) {
			t.Errorf("approximation %q (%s) is not in the file", e.Detail, e.What)
		}
	}
}

func FuzzSupervisord(f *testing.F) {
	addSeeds(f, "testdata/supervisord/supervisord.conf", "testdata/supervisord/conf.d/web.conf",
		"testdata/supervisord/conf.d/workers.conf", "testdata/supervisord/extra/metrics.ini", "testdata/supervisord/typos.conf")
	f.Add([]byte("[program:x]\ncommand=sleep %(process_num)d\nnumprocs=3\nprocess_name=%(program_name)s-%(process_num)s\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, r, err := ConvertSupervisord(Source{Path: "supervisord.conf", Data: data}, nil, Options{PriorityOrder: len(data)%2 == 0})
		checkConverted(t, m, r, err)
	})
}

func FuzzProcessCompose(f *testing.F) {
	addSeeds(f, "testdata/process-compose/process-compose.yaml", "testdata/process-compose/anchors.yaml", "testdata/process-compose-vars/process-compose.yaml")
	f.Add([]byte("processes:\n  a:\n    command: x\n    replicas: 2\n  b:\n    command: y\n    depends_on:\n      a:\n        condition: process_completed\n"))
	// extends: merges a real base (read from the package directory) under
	// what the fuzzer writes
	f.Add([]byte("extends: testdata/process-compose-extends/base/dev.yaml\nenvironment: [A=1]\nprocesses:\n  web:\n    command: ./w\n    working_dir: x\n    depends_on:\n      db:\n        condition: process_started\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		m, r, err := ConvertProcessCompose(Source{Path: "process-compose.yaml", Data: data}, Options{})
		checkConverted(t, m, r, err)
	})
}

func FuzzProcfile(f *testing.F) {
	addSeeds(f, "testdata/procfile/Procfile", "testdata/procfile/Procfile.dev", "testdata/procfile/Procfile.crlf")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, r, err := ConvertProcfile(Source{Path: "Procfile", Data: data}, nil, Options{ReleaseFirst: true})
		checkConverted(t, m, r, err)
	})
}

func FuzzSystemd(f *testing.F) {
	addSeeds(f, "testdata/systemd/app.service", "testdata/systemd/cache.service", "testdata/systemd/migrate.service",
		"testdata/systemd/worker@.service", "testdata/systemd/app.service.d/override.conf")
	// Command lines with shell syntax that systemd passes as text (issue 34 item 9).
	f.Add([]byte("[Service]\nExecStartPre=-/bin/echo `id` a>b 'c|d' *\nExecStart=/bin/echo $VAR \"${VAR}x\" $$ \\x41 \\; %%h\nExecStop=/bin/kill ${MAINPID:-1} $(id)\n"))
	f.Add([]byte("[Service]\nExecStart=/bin/echo \\q \\000 \\u00e9 'unterminated\n"))
	// Type=forking: exec inside an argument, a PIDFile= with shell syntax (issue 34 review items 1, 2).
	f.Add([]byte("[Service]\nType=forking\nPIDFile=/run/my app`id`$(id)${HOME}'.pid\nExecStart=-/usr/bin/d --title \"exec mode\" $V\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// The unit is imported with a fixture it may name in After=.
		other, err := os.ReadFile("testdata/systemd/migrate.service")
		if err != nil {
			t.Fatal(err)
		}
		m, r, err := ConvertSystemd([]Source{{Path: "x.service", Data: data}, {Path: "migrate.service", Data: other}}, Options{})
		checkConverted(t, m, r, err)
	})
}

// FuzzSystemdSocket fuzzes a .socket unit beside the service it
// activates (and the specifiers, timeouts and exit-status keys of the
// issue 37 fixture).
func FuzzSystemdSocket(f *testing.F) {
	addSeeds(f, "testdata/systemd-s45/relay.socket", "testdata/systemd-s45/relay.service")
	f.Add([]byte("[Socket]\nListenStream=8080\nListenStream=[::1]:80\nListenDatagram=/run/x\nListenStream=@abstract\nAccept=yes\nBacklog=0\nSocketMode=999\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		svc := "[Service]\nType=notify\nExecStart=/usr/bin/relayd %I %H\nWatchdogSec=1s\nRestartForceExitStatus=3 SIGHUP\nTimeoutStopSec=infinity\n"
		m, r, err := ConvertSystemd([]Source{{Path: "relay@a-b.service", Data: []byte(svc)}, {Path: "relay@a-b.socket", Data: data}}, Options{})
		checkConverted(t, m, r, err)
	})
}

// FuzzS6 fuzzes one file of an s6-rc.d tree at a time: the fuzzer picks
// which file (type, up, run, a dependency, notification-fd...) by its
// first byte and writes the rest into it.
func FuzzS6(f *testing.F) {
	tree := treeSources(f, "testdata/s6")
	for i, src := range tree {
		f.Add(append([]byte{byte(i)}, src.Data...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		files := make([]Source, len(tree))
		copy(files, tree)
		i := int(data[0]) % len(files)
		files[i] = Source{Path: files[i].Path, Data: data[1:]}
		if data[0] >= 128 { // also try it as a new file of the first service
			files = append(files, Source{Path: filepath.Join(filepath.Dir(tree[0].Path), string(data[1:min(len(data), 20)])), Data: data})
		}
		m, r, err := ConvertS6(files, Options{})
		checkConverted(t, m, r, err)
	})
}
